"""01 — vector add, fp32: the smallest KernelBench-format problem.

New concepts: a KernelBench problem is a `Model` (the reference, plain PyTorch), `get_inputs()`
(the tensors forward() takes; CPU tensors, the harness moves them) and `get_init_inputs()` (the
constructor's arguments). Candidates define `ModelNew` with the same interface, e.g.
01_vector_add_triton.py. Verify on any machine:

    perfagent verify examples/kernelbench/01_vector_add.py examples/kernelbench/01_vector_add_triton.py --device cpu
"""

import torch
import torch.nn as nn

N = 1 << 16


class Model(nn.Module):
    """out = a + b"""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs() -> list[object]:
    return []
