"""triton-config and grid-swizzle on real Triton sources; every output runs under TRITON_INTERPRET=1
on CPU and matches torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate
from perfagent.rewrite.recipes import grid_swizzle, triton_config
from tests.rewrite.helpers import DATA, EXAMPLES, request, run_interpreted, write_candidates

pytest.importorskip("torch")
pytest.importorskip("triton")

MATMUL = DATA / "triton_matmul_rowmajor.py"
AUTOTUNED = DATA / "triton_add_autotuned.py"
BAD_CONFIG = EXAMPLES / "triton" / "01_matmul_bad_config.py"
SOFTMAX = EXAMPLES / "triton" / "02_softmax_small_block.py"
KB_ADD = EXAMPLES / "kernelbench" / "01_vector_add_triton.py"

CHECK_MATMUL_FP32 = """
a = torch.randn(70, 40)
b = torch.randn(40, 50)
return {"err": (mod.matmul(a, b) - a @ b).abs().max().item()}
"""
CHECK_MATMUL_FP16 = """
a = torch.randn(64, 48).half()
b = torch.randn(48, 80).half()
ref = (a.float() @ b.float())
return {"err": (mod.matmul(a, b).float() - ref).abs().max().item() / ref.abs().max().item()}
"""


def _run(cands: list[Candidate], tmp: Path, stem: str, check: str) -> list[float]:
    results = run_interpreted(write_candidates(cands, tmp, stem), check)
    assert all("error" not in r for r in results), [r.get("error") for r in results]
    return [r["err"] for r in results]


# ------------------------------------------------------------------ triton-config


def test_config_sweep_rewrites_launch_keywords_and_runs(tmp_path: Path) -> None:
    req = request(MATMUL, "launch-config", language="triton", max_candidates=3)
    assert triton_config.applies(req) is None
    cands = triton_config.propose(req)
    assert [(c.parameters["BLOCK_M"], c.parameters["BLOCK_N"], c.parameters["BLOCK_K"]) for c in cands] == [
        (128, 256, 64),
        (64, 256, 32),
        (128, 128, 32),
    ]
    for kw in ("BLOCK_M=128,", "BLOCK_N=256,", "BLOCK_K=64,", "num_warps=8,", "num_stages=3,"):
        assert f"        {kw}\n" in cands[0].source
    assert all(e < 1e-4 for e in _run(cands, tmp_path, "matmul_cfg", CHECK_MATMUL_FP32))


def test_config_sweep_rewrites_module_constants_of_the_example(tmp_path: Path) -> None:
    cands = triton_config.propose(request(BAD_CONFIG, "launch-config", language="triton", max_candidates=2))
    first = cands[0].source
    for line in (
        "BLOCK_M = 128\n",
        "BLOCK_N = 256\n",
        "BLOCK_K = 64\n",
        "NUM_WARPS = 8\n",
        "NUM_STAGES = 3\n",
    ):
        assert line in first
    assert "GROUP_M = 1" in first  # grouping is grid-swizzle's job
    assert all(e < 1e-2 for e in _run(cands, tmp_path, "bad_cfg", CHECK_MATMUL_FP16))


def test_config_sweep_on_a_1d_block_and_a_kernelbench_candidate(tmp_path: Path) -> None:
    soft = triton_config.propose(request(SOFTMAX, "launch-config", language="triton", max_candidates=4))
    assert [c.parameters["BLOCK_SIZE"] for c in soft] == [1024, 2048, 4096, 8192]
    check = """
x = torch.randn(8, 1000)
return {"err": (mod.softmax(x) - torch.softmax(x, dim=1)).abs().max().item()}
"""
    assert all(e < 1e-5 for e in _run(soft[:2], tmp_path, "softmax", check))
    kb = triton_config.propose(request(KB_ADD, "launch-config", language="python", max_candidates=2))
    assert "block = 2048\n" in kb[0].source and "BLOCK_SIZE=block, num_warps=8)" in kb[0].source
    check_kb = """
a, b = torch.randn(5000), torch.randn(5000)
return {"err": (mod.ModelNew()(a, b) - (a + b)).abs().max().item()}
"""
    assert all(e == 0 for e in _run(kb, tmp_path, "kb_add", check_kb))


def test_config_sweep_pins_an_autotune_list(tmp_path: Path) -> None:
    cands = triton_config.propose(request(AUTOTUNED, "launch-config", language="triton", max_candidates=2))
    assert "configs=[triton.Config({'BLOCK_SIZE': 1024}, num_warps=4)]," in cands[0].source
    check = """
x, y = torch.randn(5000), torch.randn(5000)
return {"err": (mod.add(x, y) - (x + y)).abs().max().item()}
"""
    assert all(e == 0 for e in _run(cands, tmp_path, "autotuned", check))


def test_config_sweep_does_not_apply() -> None:
    cuda = request(
        EXAMPLES / "cuda" / "02_transpose_bank_conflicts" / "slow.cu", "launch-config", language="cuda"
    )
    assert "Python sources" in (triton_config.applies(cuda) or "")
    plain = request(EXAMPLES / "kernelbench" / "01_vector_add.py", "launch-config", language="python")
    assert "no @triton.jit kernel" in (triton_config.applies(plain) or "")


# ------------------------------------------------------------------ grid-swizzle


def test_grid_swizzle_regroups_row_major_program_ids(tmp_path: Path) -> None:
    req = request(MATMUL, "grid-swizzle", language="triton")
    assert grid_swizzle.applies(req) is None
    cands = grid_swizzle.propose(req)
    assert [c.parameters["GROUP_M"] for c in cands] == [8, 4, 16]
    src = cands[0].source
    assert "    pid_m = pid // num_pid_n\n" not in src and "    pid_n = pid % num_pid_n\n" not in src
    assert "    GROUP_M = 8\n    num_pid_in_group = GROUP_M * num_pid_n\n" in src
    assert "    group_size = min(num_pid_m - first_pid_m, GROUP_M)\n" in src
    # 70 x 50 with 16 x 16 tiles: 5 x 4 programs, a partial last group for every GROUP_M.
    assert all(e < 1e-4 for e in _run(cands, tmp_path, "swizzle", CHECK_MATMUL_FP32))


def test_grid_swizzle_raises_a_group_of_one_in_the_example(tmp_path: Path) -> None:
    cands = grid_swizzle.propose(request(BAD_CONFIG, "grid-swizzle", language="triton", max_candidates=2))
    assert "GROUP_M = 8  #" in cands[0].source and "GROUP_M = 4  #" in cands[1].source
    assert all(e < 1e-2 for e in _run(cands, tmp_path, "group", CHECK_MATMUL_FP16))


def test_grid_swizzle_does_not_apply() -> None:
    soft = grid_swizzle.applies(request(SOFTMAX, "grid-swizzle", language="triton"))
    assert soft is not None and "no 'pid_m = pid // num_pid_n'" in soft
    grouped = grid_swizzle.propose(request(BAD_CONFIG, "grid-swizzle", language="triton"))[0]
    again = request(BAD_CONFIG, "grid-swizzle", language="triton").model_copy(
        update={"source": grouped.source}
    )
    assert "already groups program ids (GROUP_M = 8)" in (grid_swizzle.applies(again) or "")
    two_d = MATMUL.read_text().replace(
        "pid = tl.program_id(axis=0)", "pid = tl.program_id(axis=0)\n    pid_y = tl.program_id(axis=1)"
    )
    req = request(MATMUL, "grid-swizzle", language="triton").model_copy(update={"source": two_d})
    assert "2-D or 3-D grid" in (grid_swizzle.applies(req) or "")
    cuda = request(EXAMPLES / "cuda" / "01_transpose_naive" / "slow.cu", "grid-swizzle", language="cuda")
    assert "edits Triton kernels" in (grid_swizzle.applies(cuda) or "")
