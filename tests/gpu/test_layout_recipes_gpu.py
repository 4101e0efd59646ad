"""GPU check of the issue-23 layout recipes on their own slow kernels (``tests/data/layout_recipes``).

``python -m pytest -m gpu tests/gpu/test_layout_recipes_gpu.py -s``: ``optimize --backend recipes
--transform T --iterations 1`` on each kernel; the recipe's candidate must verify against the original
(bit-exact: pure data movement, a max, a scan in the same order) and be faster. Each test prints the
loop's table (``-s``). Expected: transpose-inplace and permute-rows several times faster, chunk-stride
about 2x, smem-pad-index above 1x (the Blelloch tree's conflicts), the batched fp16 matmul
register-tiled about 2x or more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import perfagent
from perfagent.optimize.render import render_text

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

DATA = Path(__file__).resolve().parents[1] / "data" / "layout_recipes"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 120.0, "profile_timeout_s": 300.0}
CASES = {
    "inplace_flip": ("coalesce-access", "transpose-inplace"),
    "merge_heads_float": ("vectorize-access", "permute-rows"),
    "row_absmax_chunks": ("coalesce-access", "chunk-stride"),
    "prescan_pairs": ("smem-padding", "smem-pad-index"),
    "bmm_half_aliases": ("register-tiling", "register-tiling"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recipe_candidate_is_verified_and_faster(name: str, tmp_path: Path) -> None:
    transform, recipe = CASES[name]
    record = perfagent.optimize(
        DATA / f"{name}.launch.toml",
        backend="recipes",
        transform=transform,
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))
    mine = [c for c in record.candidates if c.recipe == recipe]
    assert mine, [(c.id, c.recipe) for c in record.candidates]
    assert all(c.verification is not None and c.verification.verdict == "pass" for c in mine), [
        (c.id, c.reason) for c in mine
    ]
    assert max(c.speedup or 0.0 for c in mine) > 1.0, [(c.id, c.speedup, c.reason) for c in mine]
