"""KernelBench level 1, problem `10_3D_tensor_matrix_multiplication.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/10_3D_tensor_matrix_multiplication.py at commit
bb27f278d2aaeb7118bf3e191031c316c3c3218b (the original release, the shapes of the public leaderboard),
https://github.com/ScalingIntelligence/KernelBench/blob/bb27f278d2aaeb7118bf3e191031c316c3c3218b/KernelBench/level1/10_3D_tensor_matrix_multiplication.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `05_tensor3d_matmul_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Performs 3D tensor-matrix multiplication.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A, B):
        """
        Performs 3D tensor-matrix multiplication.

        Args:
            A (torch.Tensor): Input 3D tensor of shape (N, M, K).
            B (torch.Tensor): Input matrix of shape (K, L).

        Returns:
            torch.Tensor: Output tensor of shape (N, M, L), resulting from the multiplication of A and B along the last dimension of A.
        """
        return torch.matmul(A, B)

N = 16
M = 1024
K = 2048
L = 768

def get_inputs():
    A = torch.randn(N, M, K)
    B = torch.randn(K, L)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed