"""KernelBench level 1, problem `17_Matmul_with_transposed_B.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/17_Matmul_with_transposed_B.py at commit
bb27f278d2aaeb7118bf3e191031c316c3c3218b (the original release, the shapes of the public leaderboard),
https://github.com/ScalingIntelligence/KernelBench/blob/bb27f278d2aaeb7118bf3e191031c316c3c3218b/KernelBench/level1/17_Matmul_with_transposed_B.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `06_matmul_transposed_b_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a single matrix multiplication (C = A * B)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs matrix multiplication.

        Args:
            A: Input tensor of shape (M, K).
            B: Input tensor of shape (K, N).

        Returns:
            Output tensor of shape (M, N).
        """
        return torch.matmul(A, B.T)

M = 1024
K = 4096
N = 2048

def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed