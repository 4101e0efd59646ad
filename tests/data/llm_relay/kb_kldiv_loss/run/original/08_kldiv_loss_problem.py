"""KernelBench level 1, problem `98_KLDivLoss.py` (the reference `Model`, unchanged).

Copied verbatim from ScalingIntelligence/KernelBench, KernelBench/level1/98_KLDivLoss.py at commit
8542319d0851d550296c1d33ec1a9cdd9f0eb366 (where this problem was first added, before the leaderboard run),
https://github.com/ScalingIntelligence/KernelBench/blob/8542319d0851d550296c1d33ec1a9cdd9f0eb366/KernelBench/level1/98_KLDivLoss.py
MIT licence, (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini, Scaling Intelligence Lab, Stanford.
The candidate is `08_kldiv_loss_solution.py`.
"""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A model that computes Kullback-Leibler Divergence for comparing two distributions.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')

batch_size = 128
input_shape = (4096, )
dim = 1

def get_inputs():
    return [torch.randn(batch_size, *input_shape).softmax(dim=-1), torch.randn(batch_size, *input_shape).softmax(dim=-1)]

def get_init_inputs():
    return []
