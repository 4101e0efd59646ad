"""Test problem: row sums of a (64, 500) fp32 matrix (a reduction whose order a rewrite may change)."""

import torch
import torch.nn as nn

ROWS, COLS = 64, 500


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
