"""What the recipes' compile check costs: RecipesRewriter.propose per example and transform, with the check
off and with PERFAGENT_RECIPE_COMPILE=auto (NVRTC where cuda.core is installed), as a markdown table.

Usage: python3 scripts/recipe_compile_cost.py OUT.md  (run by scripts/gpu_recipe_framework.sh)
"""

from __future__ import annotations

import os
import sys
import time
import tomllib
from pathlib import Path

from perfagent.rewrite.base import RewriteRequest, launch_context
from perfagent.rewrite.recipes import _compile_check
from perfagent.rewrite.recipes_backend import RecipesRewriter

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "09_histogram_atomics": "privatize-atomics",
    "10_sgemm_naive": "smem-tiling",
    "03_reduction_divergent": "sequential-addressing",
    "11_strided_access": "coalesce-access",
    "01_transpose_naive": "coalesce-access",
}


def _request(folder: Path, transform: str) -> RewriteRequest:
    spec = next(folder.glob("*.launch.toml"), None)
    launch = launch_context(tomllib.loads(spec.read_text())) if spec else None
    source = (folder / "slow.cu").read_text()
    return RewriteRequest(source=source, language="cuda", transform=transform, launch=launch)


def main(out: Path) -> None:
    rows = [
        "| example | transform | candidates (off) | s (off) | candidates (auto) | s (auto) | compiler |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, transform in CASES.items():
        req = _request(ROOT / "examples" / "cuda" / name, transform)
        cells = []
        for mode in ("off", "auto"):
            os.environ[_compile_check.ENV] = mode
            _compile_check.clear_cache()
            start = time.perf_counter()
            found = RecipesRewriter().propose(req)
            cells += [str(len(found)), f"{time.perf_counter() - start:.2f}"]
        rows.append(f"| {name} | {transform} | {' | '.join(cells)} | {_compile_check.compiler()} |")
    out.write_text("\n".join(rows) + "\n")
    print(out.read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
