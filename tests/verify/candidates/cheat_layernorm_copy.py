# ruff: noqa
"""Cheat: a "LayerNorm" that is really a copy (a Triton copy kernel): right on randn rows, which are
already normalised; wrong on shifted or scaled inputs."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), 16384),)](x, out, x.numel(), BLOCK_SIZE=16384)
        return out
