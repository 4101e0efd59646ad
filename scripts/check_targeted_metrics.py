"""On a GPU machine: which of perfagent's targeted ncu metrics did a real report collect?

Usage: python3 scripts/check_targeted_metrics.py REPORT.ncu-rep
Prints the targeted names that are absent from the report (unknown on this chip or version).
"""

from __future__ import annotations

import sys

from profilers.ncu.argv import targeted_metrics
from profilers.ncu.locate import import_ncu_report


def main(path: str) -> int:
    ncu_report = import_ncu_report()
    ctx = ncu_report.load_report(path)
    names: set[str] = set()
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            names.update(rng.action_by_idx(a).metric_names())
    wanted = targeted_metrics()
    missing = [m for m in wanted if m not in names and not any(n.startswith(m + ".") for n in names)]
    print(f"{len(wanted)} targeted metrics, {len(names)} metrics in report, {len(missing)} targeted missing:")
    for m in missing:
        print("  missing:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
