"""Test problem: LayerNorm without affine parameters over rows of 262144 fp32 values.

With randn inputs each row already has mean ~0 and std ~1 (to ~0.2 %), so a "LayerNorm" that copies
its input is within KernelBench's 1e-2 tolerance: only shifted or scaled inputs tell them apart."""

import torch
import torch.nn as nn

N = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(N, elementwise_affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(4, N)]


def get_init_inputs():
    return []
