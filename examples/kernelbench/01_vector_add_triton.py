"""01 — vector add as a Triton kernel: an honest candidate for 01_vector_add.py.

New concepts: a candidate is `class ModelNew` with the reference's interface; here forward()
launches a `@triton.jit` kernel (one program per BLOCK_SIZE elements, masked tail). On a machine
without a GPU perfagent runs it through the Triton interpreter (TRITON_INTERPRET=1) on CPU tensors.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(a)
        n = out.numel()
        block = 1024
        add_kernel[(triton.cdiv(n, block),)](a, b, out, n, BLOCK_SIZE=block)
        return out
