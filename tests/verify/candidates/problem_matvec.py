"""Test problem: matrix-vector product with K = 131072 (KernelBench level 1 problem 4's shape).

Summing 131072 fp32 products in any order leaves rounding errors of ~1e-3: on outputs that cancel
to a small value, two correct orders differ by more than rtol 1e-4."""

import torch
import torch.nn as nn

M, K = 256, 131072


class Model(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
