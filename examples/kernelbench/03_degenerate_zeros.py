"""03 — the "optimisation" that wins on a degenerate task: return zeros without computing anything.

perfagent must not call this a pass: the verdict is inconclusive (the reference cannot tell it
from a correct kernel), and the static checks note that no kernel is defined. It keeps the
reference's layer so that the reference's weights load into it (strict state loading; without the
layer it would fail ``strict-state-dict`` instead).
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)  # loaded, never used

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], 1, device=x.device, dtype=x.dtype)
