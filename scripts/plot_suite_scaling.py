"""Plot and tabulate `perfagent suite` scaling runs recorded by scripts/gpu_suite_scaling.sh (issue 15).

    python3 scripts/plot_suite_scaling.py tests/gpu/suite_h200x4 docs/img/suite_scaling_h200.png

The folder holds, per config, ``<config>_results.jsonl``, ``<config>.util.csv`` (nvidia-smi, one
sample per GPU per second) and a ``walls.txt`` line ``<config> rc=<rc> wall=<s>``. Prints a Markdown
table (wall, entries/min, slot occupancy = summed entry time / (GPUs x wall), GPU utilisation per
device) and draws two panels: speed-up over one GPU against the GPU count, and each slot's entries
over time (what a late long entry does to the tail). Extra points (e.g. 2 GPUs measured on another
machine) come from ``--point label:gpus:speedup``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_walls(folder: Path) -> dict[str, float]:
    walls = {}
    for line in (folder / "walls.txt").read_text().splitlines():
        m = re.match(r"(\S+) rc=\d+ wall=([\d.]+)", line)
        if m:
            walls[m.group(1).replace(":", "-")] = float(m.group(2))
    return walls


def read_rows(folder: Path, config: str) -> list[dict]:
    path = folder / f"{config}_results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def util_by_gpu(folder: Path, config: str) -> dict[int, list[float]]:
    samples: dict[int, list[float]] = defaultdict(list)
    path = folder / f"{config}.util.csv"
    if not path.is_file():
        return samples
    for line in path.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[1].isdigit():
            samples[int(parts[1])].append(float(parts[2].rstrip(" %")))
    return samples


def gpu_count(config: str) -> int:
    return int(config.split("-")[1])


def table(folder: Path, walls: dict[str, float]) -> list[str]:
    lines = [
        "| config | entries | wall s | entries/min | summed entry time s | slot occupancy | "
        "GPU util % per device (mean / max) |",
        "|---|---|---|---|---|---|---|",
    ]
    for config, wall in walls.items():
        rows = read_rows(folder, config)
        busy = sum(r["elapsed_s"] for r in rows)
        util = util_by_gpu(folder, config)
        used = sorted(util)[: gpu_count(config)]
        per_gpu = ", ".join(
            f"{g}: {sum(util[g]) / len(util[g]):.1f} / {max(util[g]):.0f}" for g in used if util[g]
        )
        lines.append(
            f"| {config} | {len(rows)} | {wall:.1f} | {len(rows) / wall * 60:.1f} | {busy:.1f} | "
            f"{busy / (gpu_count(config) * wall):.0%} | {per_gpu} |"
        )
    return lines


def timeline(ax: plt.Axes, rows: list[dict], title: str) -> None:
    ends = [datetime.fromisoformat(r["finished"]).timestamp() for r in rows]
    origin = min(e - r["elapsed_s"] for e, r in zip(ends, rows, strict=True))
    slots = sorted({r["worker"] for r in rows})
    for end, r in zip(ends, rows, strict=True):
        y = slots.index(r["worker"])
        start = end - r["elapsed_s"] - origin
        long = r["elapsed_s"] > 30
        ax.barh(y, r["elapsed_s"], left=start, color="tab:red" if long else "tab:blue", edgecolor="white")
    ax.set_yticks(range(len(slots)), [s.split(" ")[0] for s in slots])
    ax.set_xlabel("s since the first entry started (red: an entry over 30 s)")
    ax.set_title(title, fontsize=9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--baseline", default="local-1", help="the 1-GPU config the speed-ups divide")
    parser.add_argument("--baseline-wall", type=float, help="its wall time (s) when the run was cut short")
    parser.add_argument("--point", action="append", default=[], help="label:gpus:speedup measured elsewhere")
    parser.add_argument("--timelines", default="local-4-fifo,local-4", help="configs whose slots to draw")
    args = parser.parse_args()
    walls = read_walls(args.folder)
    print("\n".join(table(args.folder, walls)))
    base = args.baseline_wall or walls[args.baseline]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), gridspec_kw={"width_ratios": [1, 1.3, 1.3]})
    ax = axes[0]
    top = max(gpu_count(c) for c in walls)
    ax.plot([1, top], [1, top], "k--", lw=1, label="ideal")
    for executor, marker in (("local", "o"), ("ray", "s")):
        pts = sorted(
            (gpu_count(c), base / w)
            for c, w in walls.items()
            if c.startswith(executor) and not c.endswith("fifo")
        )
        pts = [(1, 1.0), *[p for p in pts if p[0] > 1]]
        ax.plot(*zip(*pts, strict=True), marker=marker, label=f"{executor} (longest first)")
        fifo = [
            (gpu_count(c), base / w)
            for c, w in walls.items()
            if c.startswith(executor) and c.endswith("fifo")
        ]
        if fifo:
            ax.plot(
                *zip(*fifo, strict=True),
                marker=marker,
                ls="",
                mfc="none",
                label=f"{executor} (manifest order)",
            )
    for point in args.point:
        label, gpus, speedup = point.split(":")
        ax.plot(int(gpus), float(speedup), marker="^", ls="", label=label)
    ax.set_xlabel("GPUs")
    ax.set_ylabel(
        f"speed-up over 1 GPU (wall; 1 GPU cut short at {base:.0f} s: a lower bound)"
        if args.baseline_wall
        else "speed-up over 1 GPU (wall time)",
        fontsize=8,
    )
    ax.set_xticks(range(1, top + 1))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    names = args.timelines.split(",")
    for ax, config in zip(axes[1:], names, strict=True):
        timeline(
            ax, read_rows(args.folder, config), f"{config}: entries per slot ({walls[config]:.1f} s wall)"
        )
    fig.tight_layout()
    args.png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.png, dpi=110)
    print(f"\nplot -> {args.png}")


if __name__ == "__main__":
    main()
