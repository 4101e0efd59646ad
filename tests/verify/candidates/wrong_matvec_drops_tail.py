"""Wrong: the block-reduction matrix-vector product with an off-by-one loop bound that drops the
last 256 columns (plainly wrong: errors of ~16, far outside any accuracy rule)."""

import torch
import torch.nn as nn

THREADS = 256


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        rows, k = A.shape
        products = A * B.reshape(1, k)
        acc = torch.zeros(rows, THREADS, dtype=A.dtype, device=A.device)
        for start in range(0, k - THREADS, THREADS):
            acc += products[:, start : start + THREADS]
        return acc.sum(dim=1, keepdim=True)
