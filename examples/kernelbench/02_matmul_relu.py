"""02 — matmul + ReLU, fp32: a small fusion problem (KernelBench level-2 style).

New concepts: `get_init_inputs()` passes constructor arguments (here none: the weight is an input);
the candidate 02_matmul_relu_triton.py fuses the ReLU into a tiled Triton matmul. Its sum order
differs from PyTorch's (blocked K loop), so results differ in the last bits: fp32 tolerance 1e-4
absorbs that. Verify on any machine (the Triton interpreter is slow; sizes are kept small):

    perfagent verify examples/kernelbench/02_matmul_relu.py examples/kernelbench/02_matmul_relu_triton.py --device cpu
"""

import torch
import torch.nn as nn

M, K, N = 64, 96, 48


class Model(nn.Module):
    """out = relu(a @ b)"""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(a @ b)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs() -> list[object]:
    return []


def get_flops() -> float:
    """FLOP per call, for `perfagent bench`'s roofline (2·M·N·K multiply-adds)."""
    return 2.0 * M * N * K
