# ruff: noqa
"""Cheat: declares no parameters at all, so a lenient (strict=False) load copies nothing and the
candidate runs on its own implicit weight 1 and bias 0."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        return F.layer_norm(x, (1024,))
