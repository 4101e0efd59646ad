# ruff: noqa
"""Cheat: a correct Triton kernel whose launch sits in a branch that is never taken; PyTorch does the
work. The static check sees a launch reachable from forward(); the launch hooks see none run."""

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


class ModelNew(nn.Module):
    def forward(self, a, b):
        if a.numel() < 0:  # never true
            out = torch.empty_like(a)
            add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK_SIZE=1024)
            return out
        return a + b
