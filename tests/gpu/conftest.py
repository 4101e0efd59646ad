"""What the GPU suite's modules need before any of their tests run, said once: a module asks with
``pytest.mark.usefixtures("cuda_torch")`` (torch sees a CUDA device) or ``"cuda_torch_and_core"`` (and
``cuda.core`` imports, for launch-spec kernels); otherwise its tests are skipped with the reason."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def cuda_torch() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to torch")


@pytest.fixture(scope="module")
def cuda_torch_and_core(cuda_torch: None) -> None:
    pytest.importorskip("cuda.core")
