// Declarations only: enough of torch's C++ API for nvcc to type-check the wrappers of the test files
// (tests/rewrite/test_embed.py) on a machine whose torch has no CUDA headers. Nothing here is linked or run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <cuda_runtime.h>

namespace torch {
struct TensorOptions {};
struct Tensor {
    int64_t numel() const;
    int64_t size(int64_t dim) const;
    int64_t dim() const;
    template <typename T> T* data_ptr() const;
    void* data_ptr() const;
    Tensor contiguous() const;
    TensorOptions options() const;
};
Tensor empty_like(const Tensor&);
Tensor zeros_like(const Tensor&);
Tensor zeros(std::initializer_list<int64_t>, TensorOptions);
}  // namespace torch

#define TORCH_CHECK(cond, ...) ((void)(cond))
