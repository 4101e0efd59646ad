// Declarations only (see torch/extension.h in this folder).
#pragma once
#include <cuda_runtime.h>
namespace at { namespace cuda { cudaStream_t getCurrentCUDAStream(); } }
