"""Square matrix multiplication C = A @ B."""

import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs() -> list[object]:
    return []
