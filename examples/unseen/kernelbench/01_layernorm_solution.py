"""Slow, correct candidate for KernelBench level 1 / 40_LayerNorm (problem: 01_layernorm_problem.py).

Written here in the style of model-generated KernelBench level-1 `load_inline` solutions (the structure
of KernelBench's own example, src/kernelbench/prompts/few_shot/model_new_ex_add.py,
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/prompts/few_shot/model_new_ex_add.py,
MIT): correct, naive, launched on the default stream. Not copied from a leaderboard entry.

Naive part: the statistics kernel gives each of the batch_size = 16 samples ONE block of 256 threads
(16 blocks for 132 SMs) to reduce 64*256*256 = 4,194,304 values twice (mean, then variance); the
normalisation is a separate element-wise pass. Expected fix: many blocks per sample (split
reduction), or one fused pass with Welford statistics over the whole GPU.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void layernorm_stats_kernel(const float* x, float* mean, float* rstd, int norm_size, float eps) {
    extern __shared__ float sdata[];
    int b = blockIdx.x;
    int tid = threadIdx.x;
    const float* xb = x + (long)b * norm_size;

    float sum = 0.0f;
    for (int i = tid; i < norm_size; i += blockDim.x) {
        sum += xb[i];
    }
    sdata[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    float mu = sdata[0] / norm_size;
    __syncthreads();

    float var = 0.0f;
    for (int i = tid; i < norm_size; i += blockDim.x) {
        float d = xb[i] - mu;
        var += d * d;
    }
    sdata[tid] = var;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        mean[b] = mu;
        rstd[b] = rsqrtf(sdata[0] / norm_size + eps);
    }
}

__global__ void layernorm_apply_kernel(const float* x, const float* mean, const float* rstd,
                                       const float* weight, const float* bias, float* out,
                                       int norm_size, long total) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total) {
        int b = idx / norm_size;
        int j = idx % norm_size;
        out[idx] = (x[idx] - mean[b]) * rstd[b] * weight[j] + bias[j];
    }
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, float eps) {
    auto xc = x.contiguous();
    int norm_size = weight.numel();
    long total = xc.numel();
    int batch = total / norm_size;
    auto out = torch::empty_like(xc);
    auto mean = torch::empty({batch}, xc.options());
    auto rstd = torch::empty({batch}, xc.options());

    const int block_size = 256;
    layernorm_stats_kernel<<<batch, block_size, block_size * sizeof(float)>>>(
        xc.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), norm_size, eps);

    const int num_blocks = (total + block_size - 1) / block_size;
    layernorm_apply_kernel<<<num_blocks, block_size>>>(
        xc.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
        weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(), norm_size, total);
    return out;
}
"""

layernorm_cpp_source = "torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, float eps);"

layernorm = load_inline(
    name="unseen_kb_layernorm",
    cpp_sources=layernorm_cpp_source,
    cuda_sources=layernorm_source,
    functions=["layernorm_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        self.layernorm = layernorm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layernorm.layernorm_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
