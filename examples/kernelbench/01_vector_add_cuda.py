"""01 — vector add as a CUDA kernel built with `torch.utils.cpp_extension.load_inline` (GPU only).

New concepts: the KernelBench `cuda` backend: a `__global__` kernel and a C++ wrapper compiled at
import, launched on PyTorch's current stream (`at::cuda::getCurrentCUDAStream()`), so that timing
on that stream sees it. Needs nvcc and a GPU:

    perfagent verify examples/kernelbench/01_vector_add.py examples/kernelbench/01_vector_add_cuda.py --device cuda
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor vector_add(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "fp32 only");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto out = torch::empty_like(ac);
    long n = ac.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    vector_add_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        ac.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor vector_add(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(
    name="perfagent_example_vector_add",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["vector_add"],
    verbose=False,
)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.vector_add(a, b)
