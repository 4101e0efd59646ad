"""NVTX harness probe: kernels launched before perfagent's workload range and inside it (issue 10).

Two Triton ``fill_kernel`` launches prepare the inputs outside any NVTX range (as a KernelBench harness
does), then two ``add_kernel`` launches run inside the push/pop range ``perfagent_forward`` (the range
``perfagent.workloads.run_spec`` opens around each ``forward()`` call). Prints 3.0 3.0.

examples/reports/nvtx_harness_h100.ncu-rep was recorded from it on an H100 (see examples/reports/MANIFEST.md):

    ncu --nvtx --section SpeedOfLight --section LaunchStats --section Occupancy \\
        -o nvtx_harness -f python3 scripts/nvtx_harness_probe.py

With ``--nvtx --nvtx-include "perfagent_forward/"`` instead, ncu 2025.3.1 profiled only the two add_kernel
launches. (The code below is the recorded program; this docstring was added afterwards.)
"""

import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(x, v, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x + i, v, mask=i < n)


@triton.jit
def add_kernel(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


N = 1 << 20
a = torch.empty(N, device="cuda")
b = torch.empty_like(a)
o = torch.empty_like(a)
grid = (N // 1024,)
fill_kernel[grid](a, 1.0, N, B=1024)  # input preparation: outside the range
fill_kernel[grid](b, 2.0, N, B=1024)
for _ in range(2):
    torch.cuda.nvtx.range_push("perfagent_forward")
    add_kernel[grid](a, b, o, N, B=1024)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(o[0].item(), o[-1].item())
