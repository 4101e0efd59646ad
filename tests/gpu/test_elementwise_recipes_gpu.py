"""GPU check of the element-wise recipes on our own slow kernels (``python -m pytest -m gpu
tests/gpu/test_elementwise_recipes_gpu.py -s``): demote-double (transform fast-math) on float and half
kernels promoted to fp64, vectorize-access on broadcast kernels with `%` / `/` index math and
expression bounds (tests/data/elementwise). Each run must produce a candidate of the transform that
verifies against the original within the spec's tolerance and is faster; the loop's table is printed.
Expected on an H100: demote-double well above 2x (fp64 tanh/pow per element), vectorize-access above
1.1x (16-byte accesses of the streamed arrays).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from perfagent.optimize.render import render_text
from perfagent.records import RunRecord

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

DATA = Path(__file__).resolve().parents[1] / "data" / "elementwise"
FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 120.0, "profile_timeout_s": 300.0}
CASES = {
    "gelu_float_promoted": "fast-math",
    "softplus_half_promoted": "fast-math",
    "channel_affine_half_modulo": "vectorize-access",
    "dequant_rows_u8_bf16": "vectorize-access",
}


def _check(record: RunRecord, transform: str) -> None:
    assert record.optimize is not None
    print("\n" + render_text(record.optimize))
    mine = [c for c in record.candidates if c.transform == transform]
    assert mine, "the recipe proposed nothing"
    verified = [c for c in mine if c.verification is not None and c.verification.verdict == "pass"]
    assert verified, [(c.id, c.reason) for c in mine]
    best = max((c.speedup or 0.0) for c in verified)
    assert best > 1.0, [(c.id, c.speedup, c.reason) for c in mine]


@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise_recipe_is_verified_and_faster(name: str, tmp_path: Path) -> None:
    work = tmp_path / "k"
    work.mkdir()
    for suffix in (".cu", ".launch.toml"):
        shutil.copy(DATA / f"{name}{suffix}", work / f"{name}{suffix}")
    record = perfagent.optimize(
        work / f"{name}.cu",
        backend="recipes",
        transform=CASES[name],
        iterations=1,
        device="cuda",
        out=tmp_path / "run",
        **FAST,  # type: ignore[arg-type]
    )
    _check(record, CASES[name])
