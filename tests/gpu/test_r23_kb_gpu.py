"""GPU check (``python -m pytest -m gpu tests/gpu/test_r23_kb_gpu.py``, ~5 min: one extension build each):
the first candidate of each recipe that now reads a KernelBench ``load_inline`` solution it refused before
— smem-tiling / register-tiling on a flat grid-stride batched matmul (03), a 3-D-block matmul with a
broadcast operand (05) and a flat-index GEMM + bias + ReLU (10); cooperative-row on a log-softmax written
one thread per element (01) — verified against the KernelBench problem on the GPU (``perfagent.verify.verify``,
the wrapper's rewritten launch included).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.verify import verify

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch")]

KB = Path(__file__).resolve().parents[2] / "benchmarks" / "unseen2" / "kernelbench"
CASES = [
    ("01_logsoftmax", "cooperative-row"),
    ("03_batched_matmul", "smem-tiling"),
    ("03_batched_matmul", "register-tiling"),
    ("05_tensor3d_matmul", "smem-tiling"),
    ("10_gemm_add_relu", "smem-tiling"),
    ("10_gemm_add_relu", "register-tiling"),
]


@pytest.mark.parametrize(("name", "transform"), CASES)
def test_first_candidate_verifies_on_the_gpu(name: str, transform: str, tmp_path: Path) -> None:
    solution = KB / f"{name}_solution.py"
    request = RewriteRequest(
        source=solution.read_text(encoding="utf-8"),
        path=str(solution),
        language="python",
        transform=transform,
    )
    cands = [c for c in RecipesRewriter().propose(request) if c.transform == transform]
    assert cands, RecipesRewriter().applies(request)
    path = tmp_path / f"{name}_{transform}.py"
    path.write_text(cands[0].source, encoding="utf-8")
    result = verify(KB / f"{name}_problem.py", path, device="cuda", seeds=2)
    assert result.verdict == "pass", result
