"""A small pre-norm transformer block's forward pass in PyTorch, for the staged-profiling benchmark
(issue 27, scripts/bench_profiling_cost.sh): LayerNorm, fused QKV projection, scaled-dot-product
attention, output projection, residual, LayerNorm, GELU MLP, residual. bf16 on the GPU, batch 8 x 512
tokens, model width 1024, 16 heads, MLP 4096; two forwards (about a dozen distinct kernels each: cuBLAS
GEMMs, flash attention, element-wise and normalization kernels).

Run: python3 examples/torch/transformer_block.py
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 (PyTorch's own convention)


class Block(nn.Module):
    """Pre-norm transformer block."""

    def __init__(self, width: int = 1024, heads: int = 16, hidden: int = 4096) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.view(batch, tokens, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def main() -> None:
    torch.manual_seed(0)
    # initialised on the CPU and copied: the GPU runs only the forward passes' kernels
    block = Block().to(dtype=torch.bfloat16).eval().to("cuda")
    x = torch.randn(8, 512, 1024, dtype=torch.bfloat16).to("cuda")
    with torch.no_grad():
        for _ in range(2):
            y = block(x)
    torch.cuda.synchronize()
    print(f"transformer block: output {tuple(y.shape)}, mean {y.float().mean().item():.4f}")


if __name__ == "__main__":
    main()
