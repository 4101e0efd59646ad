"""Tensor-core probe: one 2048^3 matmul per tensor path, for checking tensor FLOP counting (issue 10).

Runs a Triton kernel four times on a Hopper GPU: fp16 with 16x16x16 tiles and one warp (mma.sync, SASS
HMMA.16816.F32), then fp16, bf16 and fp32 (TF32) with 128x128x32 tiles and 4 warps (wgmma, SASS
HGMMA.64x128x16.F32[.BF16] / HGMMA.64x128x8.F32.TF32). Each launch does 2 x 2048^3 FLOP. It prints the
largest difference from torch's product per dtype.

examples/reports/tensor_mma_h100.ncu-rep was recorded from it on an H100 (see examples/reports/MANIFEST.md):

    ncu --clock-control none --section SpeedOfLight --section SpeedOfLight_RooflineChart --section LaunchStats \
        --section Occupancy --section InstructionStats --section SpeedOfLight_HierarchicalTensorRooflineChart \
        -k regex:'^mma_kernel$' -o tensor_mma_h100 -f python3 scripts/tensor_mma_probe.py

(The code below is the recorded program; this docstring and the ruff formatting were added afterwards.)
"""

import torch
import triton
import triton.language as tl


@triton.jit
def mma_kernel(a, b, c, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for i in range(0, N, BK):
        x = tl.load(a + rm[:, None] * N + (i + rk)[None, :])
        y = tl.load(b + (i + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))


N = 2048
for dt in (torch.float16, torch.bfloat16, torch.float32):
    a = torch.randn(N, N, device="cuda", dtype=dt)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    if dt == torch.float16:
        mma_kernel[(N // 16, N // 16)](a, b, c, N, 16, 16, 16, num_warps=1)
    mma_kernel[(N // 128, N // 128)](a, b, c, N, 128, 128, 32, num_warps=4, num_stages=3)
    torch.cuda.synchronize()
    print(dt, (c.float() - (a.float() @ b.float()).to(dt).float()).abs().max().item())
