"""Which of perfagent's targeted metrics cost replay passes (issue 10, profiling cost). On a GPU machine:

    python3 scripts/gpu_profiling_groups.py [program]     # default: examples/cuda/suite/main.cu, built here

Profiles the program's first kernel (`-c 1`) with ncu: the whole targeted run, then the run without
one metric group at a time, and prints the passes each group costs (passes(all) - passes(all - group))
and the wall time. Groups are regexes over the metric names of `profilers.ncu.argv.targeted_metrics()`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from profilers.ncu.argv import targeted_metrics, targeted_sections

GROUPS = {
    "stall reasons (smsp__average_warps_issue_stalled_*)": r"issue_stalled",
    "SASS op counts (*sass*inst_executed*)": r"sass.*inst_executed|sass__inst",
    "tensor op paths / pipes": r"tensor",
    "L1TEX (l1tex__*)": r"^l1tex__",
    "L2 (lts__*)": r"^lts__",
    "pipe utilisation (sm__pipe_*, sm__inst_executed_pipe_*)": r"^sm__pipe_|^sm__inst_executed_pipe",
    "warp/issue state (smsp__warps_*, issue_active, latency)": r"^smsp__warps_|issue_active|warp_latency",
    "thread-inst predication (smsp__thread_inst_executed_*)": r"^smsp__thread_inst",
    "sass average data bytes": r"sass_average_data",
}


def passes(ncu_args: list[str], prog: Path, out: Path) -> tuple[int, float]:
    argv = ["ncu", "--clock-control", "none", "-f", "-o", str(out), "-c", "1", *ncu_args, str(prog)]
    t0 = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    found = [int(p) for p in re.findall(r"(\d+) pass", done.stdout + done.stderr)]
    return (found[0] if found else -1), time.monotonic() - t0


def main() -> None:
    work = Path(tempfile.mkdtemp())
    prog = work / "prog"
    src = sys.argv[1] if len(sys.argv) > 1 else "examples/cuda/suite/main.cu"
    subprocess.run(["nvcc", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(prog), src], check=True, timeout=300)
    sections = [a for s in targeted_sections() for a in ("--section", s)]
    metrics = list(targeted_metrics())
    base_p, base_t = passes([*sections, "--metrics", ",".join(metrics)], prog, work / "r")
    basic_p, basic_t = passes(["--set", "basic"], prog, work / "r")
    sec_p, sec_t = passes(sections, prog, work / "r")
    print(f"all targeted: {base_p} passes ({base_t:.2f} s); --set basic: {basic_p} ({basic_t:.2f} s); "
          f"3 sections only: {sec_p} ({sec_t:.2f} s); {len(metrics)} metrics\n")
    print("| group | metrics | passes without it | passes saved | alone (+3 sections) |")
    print("|---|---|---|---|---|")
    for label, pattern in GROUPS.items():
        group = [m for m in metrics if re.search(pattern, m)]
        rest = [m for m in metrics if m not in group]
        p, _ = passes([*sections, "--metrics", ",".join(rest)], prog, work / "r")
        alone, _ = passes([*sections, "--metrics", ",".join(group)], prog, work / "r") if group else (-1, 0.0)
        print(f"| {label} | {len(group)} | {p} | {base_p - p} | {alone} |")
    # one metric at a time for the groups that cost passes: which single names are expensive
    print("\nsingle metrics adding passes over the 3 sections:")
    for m in metrics:
        p, _ = passes([*sections, "--metrics", m], prog, work / "r")
        if p > sec_p:
            print(f"  {m}: {p} (+{p - sec_p})")


if __name__ == "__main__":
    main()
