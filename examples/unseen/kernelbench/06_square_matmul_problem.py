"""KernelBench level 1, problem `1_Square_matrix_multiplication_.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/1_Square_matrix_multiplication_.py at commit
bb27f278d2aaeb7118bf3e191031c316c3c3218b (the original release, the shapes of the public leaderboard;
later releases scaled the shapes up),
https://github.com/ScalingIntelligence/KernelBench/blob/bb27f278d2aaeb7118bf3e191031c316c3c3218b/KernelBench/level1/1_Square_matrix_multiplication_.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `06_square_matmul_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a single square matrix multiplication (C = A * B)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs the matrix multiplication.

        Args:
            A (torch.Tensor): Input matrix A of shape (N, N).
            B (torch.Tensor): Input matrix B of shape (N, N).

        Returns:
            torch.Tensor: Output matrix C of shape (N, N).
        """
        return torch.matmul(A, B)

N = 2048

def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed
