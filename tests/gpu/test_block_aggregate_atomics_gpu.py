"""GPU check of block-aggregate-atomics (``python -m pytest -m gpu tests/gpu/test_block_aggregate_atomics_gpu.py -s``).

``optimize --backend recipes --transform warp-shuffle-reduction`` on the recipe's own slow kernels
(``tests/data/block_aggregate``: a guarded float dot product, a double sum over a grid-stride loop, an
int max, a float sum with early returns, per-row sums on a 2-D grid): every candidate of the recipe must
verify against the original on the GPU and the best must be faster. Then the unseen2 entries the recipe
was written for (03: fp64 dot, 16: bf16 amax) the same way, so their speed-ups against the textbook
fixes can be read off the printed tables.
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
DATA = REPO / "tests" / "data" / "block_aggregate"
UNSEEN2 = REPO / "benchmarks" / "unseen2"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 120.0, "profile_timeout_s": 300.0}
RECIPE = "block-aggregate-atomics"

OWN = sorted(p.stem for p in DATA.glob("*.cu"))
MIN_SPEEDUP = {"row_sums_2d": 1.0}
"""Every own kernel must be faster; the 2-D row sums by any margin (256 blocks per row still add into a
row: contention was lower to begin with), the one-address ones by 2x at least."""


def _optimize(source: Path, out: Path) -> RunRecord:
    return perfagent.optimize(
        source,
        backend="recipes",
        transform="warp-shuffle-reduction",
        iterations=1,
        max_candidates=6,
        device="cuda",
        out=out,
        **FAST,  # type: ignore[arg-type]
    )


def _checked(record: RunRecord, least: float) -> float:
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))
    mine = [c for c in record.candidates if c.recipe == RECIPE]
    assert mine, "the recipe proposed nothing"
    wrong = [
        (c.id, c.reason) for c in mine if c.verification is not None and c.verification.verdict != "pass"
    ]
    assert not wrong, wrong
    best = max((c.speedup or 0.0) for c in mine)
    assert best > least, [(c.id, c.speedup, c.reason) for c in mine]
    return best


@pytest.mark.parametrize("name", OWN)
def test_own_kernel_is_aggregated_verified_and_faster(name: str, tmp_path: Path) -> None:
    work = tmp_path / "k"
    work.mkdir()
    for suffix in (".cu", ".launch.toml"):
        shutil.copy(DATA / f"{name}{suffix}", work / f"{name}{suffix}")
    _checked(_optimize(work / f"{name}.cu", tmp_path / "run"), MIN_SPEEDUP.get(name, 2.0))


@pytest.mark.parametrize("entry", ["03_dot_double_atomic_each", "16_amax_bf16_atomicmax_each"])
def test_unseen2_entry_is_aggregated_verified_and_faster(entry: str, tmp_path: Path) -> None:
    work = tmp_path / "k"
    shutil.copytree(UNSEEN2 / entry, work)
    best = _checked(_optimize(work / "slow.cu", tmp_path / "run"), 1.5)
    print(f"{entry}: best {best:.2f}x over the slow kernel")
