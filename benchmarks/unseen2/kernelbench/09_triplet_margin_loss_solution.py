"""Slow, correct candidate for KernelBench level 1 / 99_TripletMarginLoss (problem: 09_triplet_margin_loss_problem.py).

Adapted from a public KernelBench leaderboard solution: anneouyang/KernelBenchLeaderboard at commit 170ca7965f53bba599d1078b6fcaa5dd2658ec50,
docs/assets/solutions/3db6c41dbd15c3097326df510162a1d5.py (gpt-o1, 0.0797x of torch),
https://github.com/anneouyang/KernelBenchLeaderboard/blob/170ca7965f53bba599d1078b6fcaa5dd2658ec50/docs/assets/solutions/3db6c41dbd15c3097326df510162a1d5.py
Re-written here (that repository carries no licence), keeping the kernel form and launch.

Naive part: one thread per triplet (128 samples: ONE block, 128 live lanes), each accumulating both
squared distances over 4096 features serially, lanes 16 KiB apart in three arrays; then a torch
mean. Like the solution, it leaves out nn.PairwiseDistance's eps = 1e-6 (inside tolerance).
Expected fix: a block (or warp) per triplet with coalesced loads and shuffle reductions.
"""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

triplet_src = """
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void triplet_loss_kernel(const float* __restrict__ a, const float* __restrict__ p,
                                    const float* __restrict__ n, float* __restrict__ out,
                                    int batch, int feat, float margin) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= batch)
        return;
    const float* as = a + s * feat;
    const float* ps = p + s * feat;
    const float* ns = n + s * feat;
    float d_pos = 0.0f;
    float d_neg = 0.0f;
    for (int f = 0; f < feat; ++f) {
        float u = as[f] - ps[f];
        float v = as[f] - ns[f];
        d_pos += u * u;
        d_neg += v * v;
    }
    out[s] = fmaxf(sqrtf(d_pos) - sqrtf(d_neg) + margin, 0.0f);
}

torch::Tensor triplet_loss_forward(torch::Tensor a, torch::Tensor p, torch::Tensor n, float margin) {
    auto batch = a.size(0);
    auto feat = a.size(1);
    auto out = torch::empty({batch}, a.options());
    const int threads = 256;
    const int blocks = (batch + threads - 1) / threads;
    triplet_loss_kernel<<<blocks, threads>>>(a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(),
                                             out.data_ptr<float>(), batch, feat, margin);
    return out.mean();
}
"""

triplet_decl = (
    "torch::Tensor triplet_loss_forward(torch::Tensor a, torch::Tensor p, torch::Tensor n, float margin);"
)

triplet_ext = load_inline(
    name="unseen2_kb_triplet_margin_loss",
    cpp_sources=triplet_decl,
    cuda_sources=triplet_src,
    functions=["triplet_loss_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.margin = margin
        self.ext = triplet_ext

    def forward(self, anchor, positive, negative):
        return self.ext.triplet_loss_forward(anchor, positive, negative, self.margin)
