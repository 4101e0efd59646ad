"""Honest: row sums in a Triton kernel that adds 128-wide chunks from the last to the first
(reassociated arithmetic: the last bits differ from PyTorch's order, within fp32 tolerance)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, cols, stride, CHUNK: tl.constexpr, NCHUNKS: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((CHUNK,), dtype=tl.float32)
    for i in range(NCHUNKS):
        start = (NCHUNKS - 1 - i) * CHUNK
        offs = start + tl.arange(0, CHUNK)
        acc += tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        chunk = 128
        rowsum_kernel[(rows,)](x, out, cols, x.stride(0), CHUNK=chunk, NCHUNKS=triton.cdiv(cols, chunk))
        return out
