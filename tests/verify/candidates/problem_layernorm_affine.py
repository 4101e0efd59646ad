"""Test problem: LayerNorm with its affine parameters (weight 1 and bias 0 as initialised)."""

import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(8, N)]


def get_init_inputs():
    return []
