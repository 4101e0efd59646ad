"""Can warp-stall reasons come from PC sampling (one pass) instead of 18 hardware ratios (five passes)?
Issue 10's profiling cost. On a GPU machine:

    python3 scripts/gpu_stall_sampling_check.py [program.cu]

Lists the pcsamp metrics ncu offers for the chip, profiles the program's kernels once with both the
ratio metrics and the sampled ones, and prints per kernel the top stall reasons by each method and
the ratio estimated from samples (share × warps active per issue-active cycle) beside the measured
ratio; then the passes of the targeted run with the ratios replaced by the samples.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from profilers.ncu.argv import targeted_metrics, targeted_sections

RATIO = re.compile(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio")


def ncu(args: list[str], prog: Path, out: Path) -> tuple[str, float]:
    t0 = time.monotonic()
    done = subprocess.run(["ncu", "--clock-control", "none", "-f", "-o", str(out), *args, str(prog)],
                          capture_output=True, text=True, timeout=600, check=False)
    return done.stdout + done.stderr, time.monotonic() - t0


def main() -> None:
    work = Path(tempfile.mkdtemp())
    prog = work / "prog"
    src = sys.argv[1] if len(sys.argv) > 1 else "examples/cuda/suite/main.cu"
    subprocess.run(["nvcc", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(prog), src], check=True, timeout=300)
    listing = subprocess.run(["ncu", "--query-metrics", "--chip", "gh100"], capture_output=True, text=True,
                             timeout=120, check=False).stdout
    pcs = sorted({m for m in re.findall(r"^(smsp__pcsamp_\w+)", listing, re.MULTILINE)})
    print(f"pcsamp metrics on gh100: {len(pcs)}: {', '.join(pcs)}\n")
    metrics = list(targeted_metrics())
    ratios = [m for m in metrics if RATIO.match(m)]
    reasons = [RATIO.match(m).group(1) for m in ratios]  # type: ignore[union-attr]
    sampled = [f"smsp__pcsamp_warps_issue_stalled_{r}" for r in reasons if f"smsp__pcsamp_warps_issue_stalled_{r}" in pcs]
    extra = [m for m in ("smsp__pcsamp_sample_count", "smsp__pcsamp_warps_issue_stalled_selected") if m in pcs]
    extra += ["smsp__issue_active.avg.per_cycle_active", "smsp__warps_active.avg.per_cycle_active"]
    sections = [a for s in targeted_sections() for a in ("--section", s)]
    log, t = ncu([*sections, "--metrics", ",".join(metrics + sampled + extra)], prog, work / "both")
    print(f"ratios + samples: {sorted(set(re.findall(r'(\\d+) pass', log)))} passes, {t:.1f} s")
    rest = [m for m in metrics if m not in ratios]
    log, t = ncu([*sections, "--metrics", ",".join(rest + sampled + extra)], prog, work / "samp")
    print(f"samples instead of ratios: {sorted(set(re.findall(r'(\\d+) pass', log)))} passes, {t:.1f} s")
    log, t = ncu([*sections, "--metrics", ",".join(metrics)], prog, work / "ratio")
    print(f"ratios (today): {sorted(set(re.findall(r'(\\d+) pass', log)))} passes, {t:.1f} s\n")
    sys.path.insert(0, "/opt/nvidia/nsight-compute/2025.3.1/extras/python")
    from profilers.ncu.locate import import_ncu_report

    ncu_report = import_ncu_report()
    ctx = ncu_report.load_report(str(work / "both.ncu-rep"))
    agree = 0
    total = 0
    for action in ctx[0]:
        names = set(action.metric_names())

        def value(name: str) -> float | None:
            return float(action[name].as_double()) if name in names else None

        measured = {r: value(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio") or 0.0 for r in reasons}
        samples = {r: value(f"smsp__pcsamp_warps_issue_stalled_{r}") or 0.0 for r in reasons}
        n = value("smsp__pcsamp_sample_count") or sum(samples.values())
        wpc = value("smsp__warps_active.avg.per_cycle_active") or 0.0
        ipc = (value("smsp__issue_active.avg.per_cycle_active") or 0.0)
        scale = wpc / ipc if ipc else 0.0
        est = {r: (samples[r] / n) * scale if n else 0.0 for r in reasons}
        top_m = sorted(measured, key=measured.get, reverse=True)[:3]  # type: ignore[arg-type]
        top_s = sorted(est, key=est.get, reverse=True)[:3]  # type: ignore[arg-type]
        total += 1
        agree += top_m[0] == top_s[0]
        print(f"{action.name()[:40]:40s} samples={n:.0f} top measured "
              + ", ".join(f"{r} {measured[r]:.2f}" for r in top_m) + " | sampled "
              + ", ".join(f"{r} {est[r]:.2f}" for r in top_s))
    print(f"\ntop reason agrees on {agree}/{total} kernels")


if __name__ == "__main__":
    main()
