"""Inaccurate: layer norm with the single-pass variance E[x^2] - mean^2 in fp32. With mean 100 and
std 1, E[x^2] ~ 1e4 carries ~1e-3 rounding error into a variance of ~1: outputs off by ~4e-3,
hundreds of times the original's own error against a float64 run. Must fail."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        var = (x * x).mean(dim=-1, keepdim=True) - mean * mean
        return (x - mean) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
