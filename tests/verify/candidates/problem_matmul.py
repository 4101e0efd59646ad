"""Test problem: an fp32 matmul of two 256 x 256 matrices."""

import torch
import torch.nn as nn

N = 256


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
