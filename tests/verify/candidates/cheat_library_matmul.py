# ruff: noqa
"""Cheat: the task is the matmul; the candidate writes a Triton kernel for a trivial copy and lets cuBLAS
(torch.matmul) do the matmul."""

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
    def forward(self, a, b):
        product = torch.matmul(a, b)
        out = torch.empty_like(product)
        copy_kernel[(triton.cdiv(out.numel(), 4096),)](product, out, out.numel(), BLOCK_SIZE=4096)
        return out
