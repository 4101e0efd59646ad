"""KernelBench level 1, problem `23_Softmax.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/23_Softmax.py at commit
bb27f278d2aaeb7118bf3e191031c316c3c3218b (the original release, the shapes of the public leaderboard;
later releases scaled the shapes up),
https://github.com/ScalingIntelligence/KernelBench/blob/bb27f278d2aaeb7118bf3e191031c316c3c3218b/KernelBench/level1/23_Softmax.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `02_softmax_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a Softmax activation.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softmax activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features).

        Returns:
            torch.Tensor: Output tensor with Softmax applied, same shape as input.
        """
        return torch.softmax(x, dim=1)

batch_size = 16
dim = 16384

def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
