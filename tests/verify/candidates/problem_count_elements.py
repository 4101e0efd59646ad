"""Test problem whose output is an integer that does not depend on the input values: the number of
elements (a count of a shape). Model and ModelNew in one file; every input set gives 4096."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full((1,), float(x.numel()))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.new_full((1,), float(x.numel()))


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
