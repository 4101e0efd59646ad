"""Row softmax in Triton with a block that is too small for the row, so every program loops.

New concepts: a memory-bound Triton kernel whose BLOCK_SIZE (a launch/config knob) decides between
a looping two-pass algorithm and a single pass over a row held in registers.

The bad config: BLOCK_SIZE = 128 for rows of 8192 fp32 values (32 KiB). Each program (one row)
runs an online-softmax pass (running max and sum) and then a normalising pass: 2 x 64 loop
iterations of one 4-byte load per thread, with little in flight per SM, and the row is read twice
(the second read mostly from L2). Expected perfagent finding: memory-bound kernel well below the
DRAM roof, latency-bound (long-scoreboard stalls, low bytes in flight), L2 traffic about 2x the
DRAM bytes; fix = launch-config (config sweep): BLOCK_SIZE = triton.next_power_of_2(n_cols) takes
the single-pass path (one read, one write per element), with NUM_WARPS = 8 or 16.

Run on a GPU (8192 x 8192 fp32): python3 examples/triton/02_softmax_small_block.py
Run on CPU (64 x 1000):          TRITON_INTERPRET=1 PERFAGENT_SMALL=1 python3 examples/triton/02_softmax_small_block.py
EXAMPLE_REPS=<n> sets the number of timed launches (default 2, after one warm-up launch).
Exit status: 0 if the result matches torch.softmax (allclose, atol = 1e-6, rtol = 1e-4), 1 otherwise.
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
BLOCK_SIZE = 128  # too small: rows of 8192 -> 64 iterations per pass, 2 passes
NUM_WARPS = 4
NUM_STAGES = 1
# ---------------------------------------------------------------------------------------------


@triton.jit
def softmax_kernel(
    out_ptr,
    in_ptr,
    in_row_stride,
    out_row_stride,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    SINGLE_PASS: tl.constexpr,
):
    """out[row, :] = softmax(in[row, :]); one program per row."""
    row = tl.program_id(axis=0)
    row_in = in_ptr + row.to(tl.int64) * in_row_stride
    row_out = out_ptr + row.to(tl.int64) * out_row_stride
    if SINGLE_PASS:
        # The whole row fits in one block: read once, write once.
        offs = tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        x = tl.load(row_in + offs, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(row_out + offs, num / tl.sum(num, axis=0), mask=mask)
    else:
        # Pass 1: per-lane running max and rescaled running sum (online softmax).
        m = tl.full([BLOCK_SIZE], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(row_in + offs, mask=offs < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, x)
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
        row_max = tl.max(m, axis=0)
        row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
        # Pass 2: read the row again and write the normalised values.
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_cols
            x = tl.load(row_in + offs, mask=mask, other=0.0)
            tl.store(row_out + offs, tl.exp(x - row_max) / row_sum, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax of a 2-D fp32 tensor with the module-level configuration (read at call time)."""
    n_rows, n_cols = x.shape
    # The looping path needs every lane valid in the first block (n_cols > BLOCK_SIZE there).
    single_pass = BLOCK_SIZE >= n_cols
    out = torch.empty_like(x)
    softmax_kernel[(n_rows,)](
        out,
        x,
        x.stride(0),
        out.stride(0),
        n_cols,
        BLOCK_SIZE=BLOCK_SIZE,
        SINGLE_PASS=single_pass,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    return out


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
    n_rows, n_cols = (64, 1000) if small else (8192, 8192)
    reps = max(1, int(os.environ.get("EXAMPLE_REPS", "2")))
    device = "cuda" if on_gpu else "cpu"

    gen = torch.Generator(device="cpu").manual_seed(0)
    x = (4.0 * torch.randn((n_rows, n_cols), generator=gen, dtype=torch.float32)).to(device)
    print(
        f"device: {torch.cuda.get_device_name() if on_gpu else 'cpu (Triton interpreter)'}, "
        f"{n_rows} x {n_cols} fp32, BLOCK_SIZE {BLOCK_SIZE}, num_warps {NUM_WARPS}, "
        f"{'single pass' if BLOCK_SIZE >= n_cols else 'two passes'}"
    )

    y = softmax(x)  # warm-up: compiles the kernel
    ref = torch.softmax(x, dim=1)
    moved = 2.0 * x.numel() * x.element_size()  # minimal DRAM traffic: read once, write once
    ms = _time_ms(lambda: softmax(x), reps, on_gpu)
    print(f"softmax_kernel: {ms:.3f} ms, {moved / (ms * 1e-3) / 1e9:.1f} GB/s")
    if on_gpu:
        ms_ref = _time_ms(lambda: torch.softmax(x, dim=1), reps, on_gpu)
        print(f"torch.softmax: {ms_ref:.3f} ms, {moved / (ms_ref * 1e-3) / 1e9:.1f} GB/s")

    if not torch.allclose(y, ref, atol=1e-6, rtol=1e-4):
        print(f"FAIL: max abs error {(y - ref).abs().max().item():.4g} vs torch.softmax")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
