import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define KL_THREADS 256

// KL(target || pred) elementwise term of F.kl_div(log(pred), target): xlogy(t, t) - t * log(p)
__device__ __forceinline__ float kl_term(float p, float t)
{
    const float tlogt = (t == 0.0f) ? 0.0f : t * logf(t);
    return tlogt - t * logf(p);
}

__device__ __forceinline__ float block_reduce_sum(float v)
{
    __shared__ float sh[KL_THREADS / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    float t = 0.0f;
    if (warp == 0) {
        t = (lane < KL_THREADS / 32) ? sh[lane] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    }
    return t; // valid in thread 0
}

// Pass 1: each block reduces a grid-stride share of the elements (float4 loads when aligned) and
// writes one partial sum.
__global__ void __launch_bounds__(KL_THREADS) kl_partial_kernel(const float* __restrict__ p,
                                                                const float* __restrict__ t,
                                                                float* __restrict__ partials,
                                                                long long n, int vec)
{
    float acc = 0.0f;
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long start_scalar = 0;
    if (vec) {
        const long long n4 = n >> 2;
        const float4* p4 = reinterpret_cast<const float4*>(p);
        const float4* t4 = reinterpret_cast<const float4*>(t);
        for (long long i = gid; i < n4; i += stride) {
            const float4 a = __ldg(p4 + i);
            const float4 b = __ldg(t4 + i);
            acc += (kl_term(a.x, b.x) + kl_term(a.y, b.y)) + (kl_term(a.z, b.z) + kl_term(a.w, b.w));
        }
        start_scalar = n4 << 2;
    }
    for (long long i = start_scalar + gid; i < n; i += stride)
        acc += kl_term(__ldg(p + i), __ldg(t + i));
    const float s = block_reduce_sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// Pass 2: one block adds the partials (in double) and divides by the batch size.
__global__ void __launch_bounds__(KL_THREADS) kl_final_kernel(const float* __restrict__ partials, int nparts,
                                                              float* __restrict__ out, double inv_batch)
{
    __shared__ double sh[KL_THREADS / 32];
    double v = 0.0;
    for (int i = threadIdx.x; i < nparts; i += blockDim.x) v += (double)partials[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double tot = 0.0;
        for (int w = 0; w < KL_THREADS / 32; ++w) tot += sh[w];
        out[0] = (float)(tot * inv_batch);
    }
}

torch::Tensor kl_div_batchmean_cuda(torch::Tensor predictions, torch::Tensor targets)
{
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(predictions.scalar_type() == at::kFloat && targets.scalar_type() == at::kFloat,
                "inputs must be float32");
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "inputs must have the same shape");
    auto p = predictions.contiguous();
    auto t = targets.contiguous();
    const long long n = p.numel();
    const long long batch = p.dim() > 0 ? p.size(0) : 1;
    auto out = torch::empty({}, p.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const bool vec = ((reinterpret_cast<uintptr_t>(p.data_ptr<float>()) |
                       reinterpret_cast<uintptr_t>(t.data_ptr<float>())) & 15) == 0;
    const long long work = vec ? ((n >> 2) + (n & 3)) : n;
    int blocks = (int)std::min<long long>((work + KL_THREADS - 1) / KL_THREADS, 132LL * 4);
    if (blocks < 1) blocks = 1;
    auto partials = torch::empty({blocks}, p.options());
    kl_partial_kernel<<<blocks, KL_THREADS, 0, stream>>>(p.data_ptr<float>(), t.data_ptr<float>(),
                                                         partials.data_ptr<float>(), n, vec ? 1 : 0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    kl_final_kernel<<<1, KL_THREADS, 0, stream>>>(partials.data_ptr<float>(), blocks, out.data_ptr<float>(),
                                                 1.0 / (double)batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = "torch::Tensor kl_div_batchmean_cuda(torch::Tensor predictions, torch::Tensor targets);"

_ext = load_inline(
    name="kl_div_batchmean_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["kl_div_batchmean_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """kl_div(log(predictions), targets, reduction='batchmean') fused into one reduction kernel."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions, targets):
        return _ext.kl_div_batchmean_cuda(predictions, targets)
