"""Grid-stride scale launched on a small fixed grid (at most 4 blocks per SM)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>

__global__ void scale_kernel(const float* x, float* y, float alpha, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = alpha * x[i];
    }
}

torch::Tensor scale(torch::Tensor x, double alpha) {
    auto y = torch::empty_like(x);
    long long n = x.numel();
    int device = 0;
    cudaGetDevice(&device);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int threads = 256;
    int blocks = std::min((int)((n + threads - 1) / threads), 4 * sms);
    scale_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)alpha, n);
    return y;
}
"""

cpp_src = "torch::Tensor scale(torch::Tensor x, double alpha);"

scale_ext = load_inline("scale_gridstride", cpp_src, cuda_src, functions=["scale"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 2.5) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scale_ext.scale(x, self.alpha)
