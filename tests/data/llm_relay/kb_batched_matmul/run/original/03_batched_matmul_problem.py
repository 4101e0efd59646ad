"""KernelBench level 1, problem `3_Batched_matrix_multiplication.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/3_Batched_matrix_multiplication.py at commit
bb27f278d2aaeb7118bf3e191031c316c3c3218b (the original release, the shapes of the public leaderboard),
https://github.com/ScalingIntelligence/KernelBench/blob/bb27f278d2aaeb7118bf3e191031c316c3c3218b/KernelBench/level1/3_Batched_matrix_multiplication.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `03_batched_matmul_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Performs batched matrix multiplication (C = A * B) where A, B, and C have the same batch dimension.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs batched matrix multiplication.

        Args:
            A: Input tensor of shape (batch_size, m, k).
            B: Input tensor of shape (batch_size, k, n).

        Returns:
            C: Output tensor of shape (batch_size, m, n).
        """
        return torch.bmm(A, B)

batch_size = 128
m = 128
k = 256
n = 512

def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed