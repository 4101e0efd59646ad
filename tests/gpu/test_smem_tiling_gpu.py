"""GPU check of the smem-tiling recipe (``python -m pytest -m gpu tests/gpu/test_smem_tiling_gpu.py -s``).

``optimize --backend recipes --transform smem-tiling`` on every naive matmul of the recipe's test set
(the repo's examples, the unseen set, the public-style variants under tests/data/smem_tiling and the
KernelBench square matmul): a tiled candidate must verify against the original and be faster.
The same for ``--transform register-tiling`` (4 rows of C per thread) on the row-major ones.
Every test prints the loop's table (``-s``).
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
DATA = REPO / "tests" / "data" / "smem_tiling"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 120.0, "profile_timeout_s": 300.0}

SPEC_KERNELS = {
    "unseen-08": (REPO / "examples" / "unseen" / "08_matmul_naive_row_from_x", "slow.cu"),
    "cuda-10": (REPO / "examples" / "cuda" / "10_sgemm_naive", "slow.cu"),
    **{p.stem: (DATA, p.name) for p in sorted(DATA.glob("*.cu")) if not p.stem.startswith("refused_")},
}


def _check(record: RunRecord, *, accepted: bool = True, transform: str = "smem-tiling") -> None:
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))
    tiled = [c for c in record.candidates if c.transform == transform]
    assert tiled, "the recipe proposed nothing"
    assert all(c.verification.verdict == "pass" for c in tiled if c.verification is not None), [
        (c.id, c.reason) for c in tiled
    ]
    best = max((c.speedup or 0.0) for c in tiled)
    assert best > 1.0, [(c.id, c.speedup, c.reason) for c in tiled]
    if accepted:
        best_cand = next(c for c in record.candidates if c.id == record.best)
        assert best_cand.transform == transform and best_cand.accepted, best_cand.reason


@pytest.mark.parametrize("name", sorted(SPEC_KERNELS))
def test_spec_kernel_is_tiled_verified_and_faster(name: str, tmp_path: Path) -> None:
    folder, file = SPEC_KERNELS[name]
    work = tmp_path / "k"
    work.mkdir()
    stem = Path(file).stem
    for path in folder.iterdir():
        if path.name == file or path.suffix == ".toml" and (path.name.startswith(stem) or folder != DATA):
            shutil.copy(path, work / path.name)
    record = perfagent.optimize(
        work / file,
        backend="recipes",
        transform="smem-tiling",
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    _check(record)


def test_kernelbench_square_matmul_is_tiled_verified_and_faster(tmp_path: Path) -> None:
    kb = REPO / "examples" / "unseen" / "kernelbench"
    record = perfagent.optimize(
        kb / "06_square_matmul_solution.py",
        problem=kb / "06_square_matmul_problem.py",
        backend="recipes",
        transform="smem-tiling",
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    # On an H100 (2026-11-25) both candidates verified at 1.69x / 1.51x over the solution, yet the loop
    # recorded them 'not-faster' ("correct, but slower: 1.69x"): the verdict was the comparison with
    # Model (cuBLAS) while the speed-up was normalised to the starting ModelNew. Fixed in
    # measure.relative_to_start (tests/optimize/test_outcome.py); not yet re-run on a GPU.
    _check(record)


REGISTER = sorted(SPEC_KERNELS)
"""Every case: transposed operands (hgemm_b_k_major) are register-tiled too since 2026-11-26 (CPU-verified;
the GPU run of that case is pending)."""


@pytest.mark.parametrize("name", REGISTER)
def test_register_tiling_is_verified_and_faster(name: str, tmp_path: Path) -> None:
    folder, file = SPEC_KERNELS[name]
    work = tmp_path / "k"
    work.mkdir()
    stem = Path(file).stem
    for path in folder.iterdir():
        if path.name == file or path.suffix == ".toml" and (path.name.startswith(stem) or folder != DATA):
            shutil.copy(path, work / path.name)
    record = perfagent.optimize(
        work / file,
        backend="recipes",
        transform="register-tiling",
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    _check(record, transform="register-tiling")
