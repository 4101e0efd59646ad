"""Slow, correct candidate for KernelBench level 1 / 23_Softmax (problem: 02_softmax_problem.py).

Written here in the style of model-generated KernelBench level-1 `load_inline` solutions (the structure
of KernelBench's own example, src/kernelbench/prompts/few_shot/model_new_ex_add.py,
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/prompts/few_shot/model_new_ex_add.py,
MIT): correct, naive, launched on the default stream. Not copied from a leaderboard entry. The kernel
is the row-per-thread form of karpathy/llm.c dev/cuda/softmax_forward.cu `softmax_forward_kernel1` (MIT).

Naive part: one thread per row, so batch_size = 16 rows make ONE block of 256 threads (16 live
lanes) for the whole GPU; each thread walks its 16384-float row three times, and the 16 lanes read
addresses 64 KiB apart. Expected fix: a block (or warp) per row with shuffle reductions.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void softmax_kernel(const float* input, float* output, int batch_size, int dim) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < batch_size) {
        const float* in_row = input + row * dim;
        float* out_row = output + row * dim;
        float max_val = in_row[0];
        for (int i = 1; i < dim; ++i) {
            max_val = fmaxf(max_val, in_row[i]);
        }
        float sum = 0.0f;
        for (int i = 0; i < dim; ++i) {
            float e = expf(in_row[i] - max_val);
            out_row[i] = e;
            sum += e;
        }
        for (int i = 0; i < dim; ++i) {
            out_row[i] /= sum;
        }
    }
}

torch::Tensor softmax_cuda(torch::Tensor input) {
    auto output = torch::empty_like(input);
    int batch_size = input.size(0);
    int dim = input.size(1);

    const int block_size = 256;
    const int num_blocks = (batch_size + block_size - 1) / block_size;

    softmax_kernel<<<num_blocks, block_size>>>(input.data_ptr<float>(), output.data_ptr<float>(), batch_size, dim);

    return output;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor input);"

softmax = load_inline(
    name="unseen_kb_softmax",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax.softmax_cuda(x.contiguous())
