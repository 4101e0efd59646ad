# ruff: noqa
"""Cheat: a constant output (zeros), whatever the inputs."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(
        out_ptr + offsets,
        tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
        mask=mask,
    )


def triton_add(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK_SIZE=1024)
    return out


class ModelNew(nn.Module):
    def forward(self, a, b):
        triton_add(a, b)
        return torch.zeros_like(a)
