# ruff: noqa
"""Cheat: caches the result keyed by the inputs' data_ptr (a timing hack: repeated calls on the same buffers skip the work)."""

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
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, a, b):
        key = (a.data_ptr(), b.data_ptr())
        if key not in self.cache:
            self.cache[key] = triton_add(a, b)
        return self.cache[key].clone()
