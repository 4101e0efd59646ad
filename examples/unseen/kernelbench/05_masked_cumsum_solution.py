"""Slow, correct candidate for KernelBench level 1 / 93_masked_cumsum (problem: 05_masked_cumsum_problem.py).

Written here in the style of model-generated KernelBench level-1 `load_inline` solutions (the structure
of KernelBench's own example, src/kernelbench/prompts/few_shot/model_new_ex_add.py,
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/prompts/few_shot/model_new_ex_add.py,
MIT): correct, naive, launched on the default stream. Not copied from a leaderboard entry.

Naive part: a sequential scan with one thread per row: batch_size = 128 rows are ONE block for 132
SMs; each thread walks 4000 elements of x and of the bool mask, lanes 16 KB (x) and 4 KB (mask)
apart. Expected fix: a block per row with a parallel (warp-shuffle) scan, coalesced loads.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

masked_cumsum_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void masked_cumsum_kernel(const float* x, const bool* mask, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float running = 0.0f;
        for (int j = 0; j < cols; ++j) {
            int idx = row * cols + j;
            if (mask[idx]) {
                running += x[idx];
            }
            out[idx] = running;
        }
    }
}

torch::Tensor masked_cumsum_cuda(torch::Tensor x, torch::Tensor mask) {
    auto out = torch::empty_like(x);
    int rows = x.size(0);
    int cols = x.size(1);

    const int block_size = 256;
    const int num_blocks = (rows + block_size - 1) / block_size;

    masked_cumsum_kernel<<<num_blocks, block_size>>>(x.data_ptr<float>(), mask.data_ptr<bool>(), out.data_ptr<float>(), rows, cols);

    return out;
}
"""

masked_cumsum_cpp_source = "torch::Tensor masked_cumsum_cuda(torch::Tensor x, torch::Tensor mask);"

masked_cumsum = load_inline(
    name="unseen_kb_masked_cumsum",
    cpp_sources=masked_cumsum_cpp_source,
    cuda_sources=masked_cumsum_source,
    functions=["masked_cumsum_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.masked_cumsum = masked_cumsum

    def forward(self, x, mask):
        # The kernel scans the last dimension of a 2-D tensor (the problem's dim = 1).
        return self.masked_cumsum.masked_cumsum_cuda(x.contiguous(), mask.contiguous())
