# ruff: noqa
"""Cheat: precision downgrade: adds in fp16 for an fp32 problem."""

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


@triton.jit
def add_fp16_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float16)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float16)
    tl.store(out_ptr + offsets, (a + b).to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n = a.numel()
        add_fp16_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK_SIZE=1024)
        return out
