"""Test problem: layer norm over 4096 features of inputs with mean 100 and std 1 (a large offset
makes the single-pass E[x^2] - mean^2 variance cancel catastrophically in fp32)."""

import torch
import torch.nn as nn

BATCH, FEATURES = 16, 4096


class Model(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES) + 100.0]


def get_init_inputs():
    return [FEATURES]
