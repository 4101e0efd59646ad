"""What DRAM bandwidth a streaming kernel can reach on this GPU, and what the timing method does to it.

Run on a GPU machine (needs cupy and torch):  python3 scripts/gpu_dram_ceiling.py OUT_DIR

Measures, with CUDA events, median of RUNS calls, 256 MiB per array (far beyond L2):

1. timing method: the same kernel timed (a) "synced" — device sync, start event, launch, device sync,
   end event (the GPU idles while the host submits, so host latency lands inside the interval) and
   (b) "queued" — L2-flush kernel enqueued first, start event, launch, end event, then sync (the
   launch is queued behind the flush: the interval is GPU time only);
2. scale-copy (2 streams) and saxpy (3 streams) kernels over block size, grid size (waves of
   resident blocks, or one element per thread) and loads in flight per thread (unroll);
3. torch's own copy and multiply as a reference.

Writes OUT_DIR/dram_ceiling.json and prints a Markdown table (the best configurations first).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import cupy as cp
import torch

RUNS = 30
N = 1 << 26  # floats per array: 256 MiB
DATASHEET_BPS = {"H200": 4.8e12, "H100": 3.35e12}

SOURCE = r"""
extern "C" __global__ void copy_scalar(const float *__restrict__ in, float *__restrict__ out, int n, float a)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)n) out[i] = a * in[i];
}
extern "C" __global__ void copy_f4(const float *__restrict__ in, float *__restrict__ out, int n, float a)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t n4 = (size_t)n / 4;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    float4 *out4 = reinterpret_cast<float4 *>(out);
    for (size_t base = tid; base < n4; base += stride * UNROLL) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t j = base + (size_t)u * stride;
            if (j < n4) v[u] = in4[j];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t j = base + (size_t)u * stride;
            if (j < n4) { v[u].x *= a; v[u].y *= a; v[u].z *= a; v[u].w *= a; out4[j] = v[u]; }
        }
    }
}
extern "C" __global__ void saxpy_scalar(const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, int n, float a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)n; i += stride)
        z[i] = a * x[i] + y[i];
}
extern "C" __global__ void saxpy_f4(const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, int n, float a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t n4 = (size_t)n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    const float4 *y4 = reinterpret_cast<const float4 *>(y);
    float4 *z4 = reinterpret_cast<float4 *>(z);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        const float4 p = x4[i], q = y4[i];
        z4[i] = make_float4(a * p.x + q.x, a * p.y + q.y, a * p.z + q.z, a * p.w + q.w);
    }
}
"""


def smi() -> str:
    try:
        return subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"nvidia-smi failed: {exc}"


def main() -> int:
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/out")
    out_dir.mkdir(parents=True, exist_ok=True)
    dev = cp.cuda.Device(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode()
    sms = props["multiProcessorCount"]
    max_threads_sm = props["maxThreadsPerMultiProcessor"]
    peak = next((v for k, v in DATASHEET_BPS.items() if k in name), None)
    modules = {u: cp.RawModule(code=SOURCE, options=(f"-DUNROLL={u}", "-std=c++17")) for u in (1, 2, 4, 8)}
    x = cp.random.random(N, dtype=cp.float32)
    y = cp.random.random(N, dtype=cp.float32)
    z = cp.empty(N, dtype=cp.float32)
    flush = cp.empty(2 * 60 * 1024 * 1024 // 4 + (1 << 20), dtype=cp.int32)
    a = cp.float32(1.5)
    n = cp.int32(N)

    def time_it(launch, method: str) -> float:
        samples = []
        for i in range(RUNS + 3):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            flush.fill(0)
            if method == "synced":
                dev.synchronize()
                start.record()
                launch()
                dev.synchronize()
                end.record()
            else:
                start.record()
                launch()
                end.record()
            end.synchronize()
            if i >= 3:
                samples.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        return statistics.median(samples)

    rows = []

    def record(kind: str, label: str, nbytes: int, t: float, **extra) -> None:
        bps = nbytes / t
        rows.append(
            {
                "kind": kind,
                "config": label,
                "time_s": t,
                "bytes_per_s": bps,
                "pct_datasheet": 100 * bps / peak if peak else None,
                **extra,
            }
        )
        pct = f"{100 * bps / peak:.1f} %" if peak else "?"
        print(f"{kind:12s} {label:40s} {t * 1e6:9.1f} us {bps / 1e12:6.3f} TB/s {pct}", flush=True)

    smi_before = smi()
    copy_f4 = modules[1].get_function("copy_f4")
    wave = sms * (max_threads_sm // 256)
    for method in ("synced", "queued"):
        t = time_it(lambda: copy_f4((wave,), (256,), (x, z, n, a)), method)
        record("method", f"copy_f4 1 wave b256 timed {method}", 8 * N, t, method=method)

    for block in (128, 256, 512, 1024):
        resident = sms * (max_threads_sm // block)
        grids = {f"{w} waves": w * resident for w in (1, 2, 4, 8)}
        grids["1 float4/thread"] = -(-N // 4 // block)
        for glabel, grid in grids.items():
            for unroll in (1, 2, 4, 8):
                if glabel == "1 float4/thread" and unroll > 1:
                    continue
                fn = modules[unroll].get_function("copy_f4")
                t = time_it(lambda fn=fn, g=grid, b=block: fn((g,), (b,), (x, z, n, a)), "queued")
                record(
                    "copy_f4",
                    f"b{block} {glabel} unroll {unroll}",
                    8 * N,
                    t,
                    block=block,
                    grid=grid,
                    unroll=unroll,
                )
        fn = modules[1].get_function("copy_scalar")
        t = time_it(lambda fn=fn, b=block: fn((-(-N // b),), (b,), (x, z, n, a)), "queued")
        record("copy_scalar", f"b{block} 1 float/thread", 8 * N, t, block=block)
        for glabel, grid in (
            ("1 wave", resident),
            ("4 waves", 4 * resident),
            ("1 float/thread", -(-N // block)),
            ("32 blocks", 32),
        ):
            fn = modules[1].get_function("saxpy_scalar")
            t = time_it(lambda fn=fn, g=grid, b=block: fn((g,), (b,), (x, y, z, n, a)), "queued")
            record("saxpy_scalar", f"b{block} {glabel}", 12 * N, t, block=block, grid=grid)
            fn = modules[1].get_function("saxpy_f4")
            g4 = -(-N // 4 // block) if glabel == "1 float/thread" else grid
            t = time_it(lambda fn=fn, g=g4, b=block: fn((g,), (b,), (x, y, z, n, a)), "queued")
            record(
                "saxpy_f4", f"b{block} {glabel.replace('float', 'float4')}", 12 * N, t, block=block, grid=g4
            )

    tx, tz = torch.as_tensor(x, device="cuda"), torch.as_tensor(z, device="cuda")
    t = time_it(lambda: tz.copy_(tx), "queued")
    record("torch", "copy_", 8 * N, t)
    t = time_it(lambda: torch.mul(tx, 1.5, out=tz), "queued")
    record("torch", "mul(out=)", 8 * N, t)
    smi_after = smi()

    result = {
        "gpu": name,
        "sm_count": sms,
        "datasheet_bytes_per_s": peak,
        "n_floats": N,
        "runs": RUNS,
        "nvidia_smi_before": smi_before,
        "nvidia_smi_after": smi_after,
        "rows": rows,
    }
    (out_dir / "dram_ceiling.json").write_text(json.dumps(result, indent=1))
    print(f"\n{name}; before: {smi_before}; after: {smi_after}")
    print("\n| kernel | configuration | time | TB/s | % of datasheet |\n|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["bytes_per_s"])[:25]:
        print(
            f"| {r['kind']} | {r['config']} | {r['time_s'] * 1e6:.1f} µs | {r['bytes_per_s'] / 1e12:.3f} | "
            f"{r['pct_datasheet']:.1f} % |"
            if r["pct_datasheet"]
            else ""
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
