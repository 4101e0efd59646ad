"""Why did verification call max_int's reference output input-independent? (GPU probe, 2026-11-27.)

Runs the reference kernel of tests/data/block_aggregate/max_int.cu the way ``cuda_protocol._run_seed``
does (inputs from ``seeded_inputs`` with seeds base and base + 1, reference on clones) for many random base
seeds, and counts how often the two input sets give the same maximum; beside it, torch's own maximum of the
same inputs. Two independent maxima of 4 M draws from [-1e9, 1e9) are equal ~0.1 % of the time.

    python3 scripts/gpu_max_int_probe.py N > out.md
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import torch

from perfagent.workloads.launch_prep import build_launch, prepare_launch, seeded_inputs

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "block_aggregate"


def main(n: int) -> None:
    resolved, kernel = build_launch(DATA / "max_int.launch.toml", source=DATA / "max_int.cu")
    same_kernel = same_torch = mismatch = 0
    rows: list[str] = []
    for _ in range(n):
        base = secrets.randbelow(2**30)
        outs, maxima = [], []
        for i in range(2):
            masters = seeded_inputs(resolved, seed=base + i, device="cuda", dist=None)
            launch = prepare_launch(
                resolved, kernel, inputs={k: v.clone() for k, v in masters.items()}, poison=1, device="cuda"
            )
            launch.launch()
            torch.cuda.synchronize()
            outs.append(int(launch.buffers["best"].item()))
            maxima.append(int(masters["vals"].max().item()))
        if outs[0] != maxima[0] or outs[1] != maxima[1]:
            mismatch += 1
        if outs[0] == outs[1]:
            same_kernel += 1
            rows.append(f"| {base} | {outs} | {maxima} |")
        same_torch += maxima[0] == maxima[1]
    print(f"# max_int reference over {n} base seeds ({torch.cuda.get_device_name()})\n")
    print(f"- kernel output equal for seeds base, base+1: {same_kernel} of {n}")
    print(f"- torch max equal for the same inputs: {same_torch} of {n}")
    print(f"- kernel output != torch max: {mismatch} of {n}")
    print(f"- count = {resolved.params if hasattr(resolved, 'params') else '?'}\n")
    if rows:
        print("| base seed | kernel outputs | torch maxima |\n|---|---|---|")
        print("\n".join(rows[:50]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
