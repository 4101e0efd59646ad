"""03 — a degenerate problem (after KernelBench level2/80_Gemm_Max_Subtract_GELU): the output is 0.

New concepts: `max(dim=1, keepdim=True)` leaves one column; subtracting its own mean gives 0, and
GELU(0) = 0. Whatever the inputs, the reference returns zeros, so a candidate that returns
`torch.zeros` "matches" it. perfagent says *inconclusive* (exit 4), never *pass*: a speed-up on
such a task means nothing. The candidate 03_degenerate_zeros.py shows it:

    perfagent verify examples/kernelbench/03_degenerate_gemm_max_sub_gelu.py examples/kernelbench/03_degenerate_zeros.py --device cpu
"""

import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 32, 64, 48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.max(x, dim=1, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs() -> list[object]:
    return [IN_FEATURES, OUT_FEATURES]
