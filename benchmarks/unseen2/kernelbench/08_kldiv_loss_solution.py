"""Slow, correct candidate for KernelBench level 1 / 98_KLDivLoss (problem: 08_kldiv_loss_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/d669a98deb4e9b02920ed27b00896685.py (claude-3.5-sonnet, 0.0707x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/d669a98deb4e9b02920ed27b00896685.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: one thread per sample row (128 rows: ONE block, 128 live lanes), each summing
t * (log t - log p) over 4096 columns serially with lanes 16 KiB apart, two logs per element;
then a separate torch mean over the 128 row sums. Expected fix: a block per row (or a grid-wide
reduction) with coalesced loads and shuffle reductions, the batchmean folded in.
"""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

kldiv_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kldiv_rows_kernel(const float* pred, const float* tgt, float* row_sum,
                                  const int n_rows, const int n_cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n_rows) {
        float s = 0.0f;
        for (int c = 0; c < n_cols; c++) {
            int at = r * n_cols + c;
            if (tgt[at] > 0) {
                s += tgt[at] * (log(tgt[at]) - log(pred[at]));
            }
        }
        row_sum[r] = s;
    }
}

torch::Tensor kldiv_forward(torch::Tensor pred, torch::Tensor tgt) {
    auto n_rows = pred.size(0);
    auto n_cols = pred.size(1);
    auto row_sum = torch::zeros({n_rows}, pred.options());
    const int threads = 256;
    const int blocks = (n_rows + threads - 1) / threads;
    kldiv_rows_kernel<<<blocks, threads>>>(pred.data_ptr<float>(), tgt.data_ptr<float>(), row_sum.data_ptr<float>(),
                                           n_rows, n_cols);
    return row_sum.mean();
}
"""

kldiv_decl = "torch::Tensor kldiv_forward(torch::Tensor pred, torch::Tensor tgt);"

kldiv_ext = load_inline(
    name="unseen2_kb_kldiv_loss",
    cpp_sources=kldiv_decl,
    cuda_sources=kldiv_src,
    functions=["kldiv_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kldiv_ext

    def forward(self, predictions, targets):
        return self.ext.kldiv_forward(predictions, targets)
