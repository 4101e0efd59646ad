"""Test problem with its candidate in the same file: Model (PyTorch) and ModelNew (Triton), out = 2*x - 1."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 3000


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * x - 1.0


@triton.jit
def affine_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask) - 1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        affine_kernel[(triton.cdiv(x.numel(), 512),)](x, out, x.numel(), BLOCK=512)
        return out


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
