"""Triton matmul (fp16 in, fp32 accumulate) with a deliberately poor launch configuration.

New concepts: a Triton kernel whose configuration, not its code, is the bottleneck; module-level
config knobs that a config-sweep recipe can rewrite; running the same script on CPU through the
Triton interpreter.

The bad config: 16 x 16 x 16 tiles, one warp per program, one pipeline stage, and no grouped
program-id ordering (GROUP_M = 1: programs walk C row by row, so consecutive programs share no
tile of B in L2). Each program loads a 16 x 16 tile of A and of B per K step and does one small
MMA with them: arithmetic intensity per byte loaded is about 8x lower than with 128 x 128 tiles,
the tensor cores idle while a single warp waits on its loads, and 4096^3 needs 65,536 programs.
Expected perfagent finding: latency-bound / low tensor-pipe utilisation with long-scoreboard
stalls (L1/L2 traffic high for the FLOPs done); fix = launch-config (a config sweep, e.g.
BLOCK 128 x 128 x 64, GROUP_M = 8, num_warps = 8, num_stages = 3) and grid-swizzle (GROUP_M).

Run on a GPU (4096^3):     python3 examples/triton/01_matmul_bad_config.py
Run on CPU (64^3):         TRITON_INTERPRET=1 PERFAGENT_SMALL=1 python3 examples/triton/01_matmul_bad_config.py
PERFAGENT_SMALL=1 alone on a GPU machine runs 64^3 on the GPU. EXAMPLE_REPS=<n> sets the number of
timed launches (default 2, after one warm-up launch that also compiles the kernel).
Exit status: 0 if the result matches torch.matmul (allclose, atol = rtol = 1e-2), 1 otherwise.
"""

import os
import sys
import time

import torch

if not torch.cuda.is_available():
    # Without a GPU, Triton can only run through its interpreter; decided before triton is imported.
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# --- configuration (what a config sweep changes) ---------------------------------------------
BLOCK_M = 16
BLOCK_N = 16
BLOCK_K = 16
GROUP_M = 1  # 1 = no grouped ordering of program ids (row-major walk over C)
NUM_WARPS = 1
NUM_STAGES = 1
# ---------------------------------------------------------------------------------------------


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """C[M, N] = A[M, K] @ B[K, N]; fp16 operands, fp32 accumulator, fp16 result."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: GROUP_M consecutive row-tiles share each column-tile of B while it is in L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Launches matmul_kernel with the module-level configuration (read at call time)."""
    assert a.shape[1] == b.shape[0], "incompatible shapes"
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    return c


def _time_ms(fn, reps: int, on_gpu: bool) -> float:
    """Best of `reps` timed calls (CUDA events on a GPU, wall clock otherwise)."""
    best = float("inf")
    for _ in range(reps):
        if on_gpu:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            best = min(best, start.elapsed_time(stop))
        else:
            t0 = time.perf_counter()
            fn()
            best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def main() -> int:
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    on_gpu = torch.cuda.is_available() and not interpret
    small = os.environ.get("PERFAGENT_SMALL") == "1" or not on_gpu
    size = 64 if small else 4096
    reps = max(1, int(os.environ.get("EXAMPLE_REPS", "2")))
    device = "cuda" if on_gpu else "cpu"

    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn((size, size), generator=gen, dtype=torch.float32).to(device=device, dtype=torch.float16)
    b = torch.randn((size, size), generator=gen, dtype=torch.float32).to(device=device, dtype=torch.float16)
    print(
        f"device: {torch.cuda.get_device_name() if on_gpu else 'cpu (Triton interpreter)'}, "
        f"M = N = K = {size}, BLOCK {BLOCK_M}x{BLOCK_N}x{BLOCK_K}, GROUP_M {GROUP_M}, "
        f"num_warps {NUM_WARPS}, num_stages {NUM_STAGES}"
    )

    c = matmul(a, b)  # warm-up: compiles the kernel
    if on_gpu:
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        ref = torch.matmul(a, b)
        torch.cuda.synchronize()
    else:
        ref = torch.matmul(a.float(), b.float()).to(torch.float16)

    flops = 2.0 * size**3
    moved = 3.0 * size * size * 2  # A, B read once, C written once (fp16)
    ms = _time_ms(lambda: matmul(a, b), reps, on_gpu)
    print(
        f"matmul_kernel: {ms:.3f} ms, {moved / (ms * 1e-3) / 1e9:.1f} GB/s, {flops / (ms * 1e-3) / 1e9:.1f} GFLOP/s"
    )
    if on_gpu:
        ms_ref = _time_ms(lambda: torch.matmul(a, b), reps, on_gpu)
        print(
            f"torch.matmul: {ms_ref:.3f} ms, {moved / (ms_ref * 1e-3) / 1e9:.1f} GB/s, "
            f"{flops / (ms_ref * 1e-3) / 1e9:.1f} GFLOP/s"
        )

    ok = torch.allclose(c.float(), ref.float(), atol=1e-2, rtol=1e-2)
    if not ok:
        err = (c.float() - ref.float()).abs().max().item()
        print(f"FAIL: max abs error {err:.4g} vs torch.matmul")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
