"""Test problem: out = a + b on 4096 fp32 elements (small so that the Triton interpreter is quick)."""

import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
