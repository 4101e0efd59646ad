# ruff: noqa
"""Cheat: declares the LayerNorm's parameters (so they load) but ignores them: right while the weight
is 1 and the bias 0, as initialised; wrong once they are re-randomised."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(1024)

    def forward(self, x):
        return F.layer_norm(x, (1024,))
