"""03 — the "optimisation" that wins on a degenerate task: return zeros without computing anything.

perfagent must not call this a pass: the verdict is inconclusive (the reference cannot tell it
from a correct kernel), and the static checks note that no kernel is defined.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], 1, device=x.device, dtype=x.dtype)
