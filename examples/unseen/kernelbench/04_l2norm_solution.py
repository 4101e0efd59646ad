"""Slow, correct candidate for KernelBench level 1 / 39_L2Norm_ (problem: 04_l2norm_problem.py).

Written here in the style of model-generated KernelBench level-1 `load_inline` solutions (the structure
of KernelBench's own example, src/kernelbench/prompts/few_shot/model_new_ex_add.py,
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/prompts/few_shot/model_new_ex_add.py,
MIT): correct, naive, launched on the default stream. Not copied from a leaderboard entry.

Naive part: one thread per row computes the row's sum of squares and then rescales the row:
batch_size = 16 rows are ONE block of 256 threads for the whole GPU, each walking 16384 floats twice,
lanes 64 KiB apart. Expected fix: a block per row (or many blocks per row) with shuffle reductions.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2norm_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void l2norm_kernel(const float* x, float* out, int batch_size, int dim) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < batch_size) {
        float sum_sq = 0.0f;
        for (int i = 0; i < dim; i++) {
            float v = x[row * dim + i];
            sum_sq += v * v;
        }
        float norm = sqrtf(sum_sq);
        for (int i = 0; i < dim; i++) {
            out[row * dim + i] = x[row * dim + i] / norm;
        }
    }
}

torch::Tensor l2norm_cuda(torch::Tensor x) {
    int batch_size = x.size(0);
    int dim = x.size(1);
    auto out = torch::empty_like(x);

    const int block_size = 256;
    const int num_blocks = (batch_size + block_size - 1) / block_size;

    l2norm_kernel<<<num_blocks, block_size>>>(x.data_ptr<float>(), out.data_ptr<float>(), batch_size, dim);

    return out;
}
"""

l2norm_cpp_source = "torch::Tensor l2norm_cuda(torch::Tensor x);"

l2norm = load_inline(
    name="unseen_kb_l2norm",
    cpp_sources=l2norm_cpp_source,
    cuda_sources=l2norm_source,
    functions=["l2norm_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.l2norm = l2norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l2norm.l2norm_cuda(x.contiguous())
