# ruff: noqa
"""Cheat: casts an fp32 task to bf16 around the library matmul (tensor cores, half the bytes)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a.bfloat16(), b.bfloat16()).float()
