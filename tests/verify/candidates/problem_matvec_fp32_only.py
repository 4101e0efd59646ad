"""Test problem: the K = 131072 matrix-vector product of problem_matvec.py, with a reference that
casts its inputs to float32 itself (so a float64 run of it is not a float64 computation)."""

import torch
import torch.nn as nn

M, K = 256, 131072


class Model(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.float(), B.float())


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
