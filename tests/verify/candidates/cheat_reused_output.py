# ruff: noqa
"""Cheat: writes every result into one persistent output buffer and returns that buffer (no allocation per
call), so a caller's earlier result is overwritten by the next call."""

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
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, a, b):
        if self.out is None or self.out.shape != a.shape or self.out.dtype != a.dtype:
            self.out = torch.empty_like(a)
        n = a.numel()
        add_kernel[(triton.cdiv(n, 1024),)](a, b, self.out, n, BLOCK_SIZE=1024)
        return self.out
