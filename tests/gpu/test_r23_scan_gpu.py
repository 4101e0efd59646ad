"""GPU check of warp-shuffle-scan and register-streaming (``python -m pytest -m gpu tests/gpu/test_r23_scan_gpu.py -s``).

``optimize --backend recipes`` with the recipe's transform on the recipes' own slow kernels
(``tests/data/r23_scan``: an exclusive int Kogge-Stone scan with section sums, a double-buffered float
max-scan with a parameter bound, a 7-point Laplacian with early exits, a 9-point y-z box): every
candidate of the recipe must verify against the original on the GPU and the best must be faster. Then
the unseen2 entries they were written for (06, 10), whose speed-ups against the textbook fixes can be
read off the printed tables.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from perfagent.optimize.render import render_text
from perfagent.records import RunRecord

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "r23_scan"
UNSEEN2 = REPO / "benchmarks" / "unseen2"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 120.0, "profile_timeout_s": 300.0}
RECIPE = {"warp-shuffle-reduction": "warp-shuffle-scan", "register-tiling": "register-streaming"}
OWN = {
    "ks_exclusive_sums": "warp-shuffle-reduction",
    "ks_double_buffer": "warp-shuffle-reduction",
    "stencil7_early_exit": "register-tiling",
    "box9_yz": "register-tiling",
}


def _checked(source: Path, transform: str, out: Path) -> float:
    record: RunRecord = perfagent.optimize(
        source,
        backend="recipes",
        transform=transform,
        iterations=1,
        max_candidates=6,
        device="cuda",
        out=out,
        **FAST,  # type: ignore[arg-type]
    )
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))
    mine = [c for c in record.candidates if c.recipe == RECIPE[transform]]
    assert mine, "the recipe proposed nothing"
    wrong = [
        (c.id, c.reason) for c in mine if c.verification is not None and c.verification.verdict != "pass"
    ]
    assert not wrong, wrong
    best = max((c.speedup or 0.0) for c in mine)
    assert best > 1.0, [(c.id, c.speedup, c.reason) for c in mine]
    return best


@pytest.mark.parametrize("name", sorted(OWN))
def test_own_kernel_is_rewritten_verified_and_faster(name: str, tmp_path: Path) -> None:
    work = tmp_path / "k"
    work.mkdir()
    for suffix in (".cu", ".launch.toml"):
        shutil.copy(DATA / f"{name}{suffix}", work / f"{name}{suffix}")
    _checked(work / f"{name}.cu", OWN[name], tmp_path / "run")


@pytest.mark.parametrize(
    ("entry", "transform"),
    [
        ("06_scan_kogge_stone_sections", "warp-shuffle-reduction"),
        ("10_stencil3d_7pt_naive_cube", "register-tiling"),
    ],
)
def test_unseen2_entry_gets_the_recipe(entry: str, transform: str, tmp_path: Path) -> None:
    work = tmp_path / "k"
    shutil.copytree(UNSEEN2 / entry, work)
    best = _checked(work / "slow.cu", transform, tmp_path / "run")
    print(f"{entry}: best {best:.2f}x with {RECIPE[transform]}")
