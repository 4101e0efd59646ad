"""y = alpha * x on a long vector."""

import torch
import torch.nn as nn

N = 1 << 22


class Model(nn.Module):
    def __init__(self, alpha: float = 2.5) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.alpha


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(N)]


def get_init_inputs() -> list[object]:
    return [2.5]
