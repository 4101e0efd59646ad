"""``python -m profilers.ncu.report_child REPORT [--kernel RE] [--ncu PATH]``: read one report in this
fresh process and print one JSON line: ``{"profile": ...}`` or ``{"error": {"type", "message", "hint"}}``
(see ``profilers.ncu.report_isolation`` for why a report is ever read here)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from profilers.core_errors import PerfAgentError
from profilers.ncu.report_reader import read_ncu_rep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m profilers.ncu.report_child")
    parser.add_argument("report", type=Path)
    parser.add_argument("--kernel", default=None)
    parser.add_argument("--ncu", default=None)
    args = parser.parse_args(argv)
    try:
        profile = read_ncu_rep(args.report, kernel_regex=args.kernel, ncu_path=args.ncu)
    except PerfAgentError as exc:
        error = {
            "type": type(exc).__name__,
            "message": exc.message,
            "hint": exc.hint,
            "available": list(getattr(exc, "available", ())),  # the kernels a filter could have named
        }
        print(json.dumps({"error": error}))
        return 1
    print(json.dumps({"profile": profile.model_dump(mode="json")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
