"""GPU suite for verification and timing (``python -m pytest -m gpu tests/gpu/test_verify_gpu.py -s``).

Self-contained: launch-spec kernels (examples/cuda/*/slow.cu vs fixed.cu) through NVRTC + cuda.core,
broken rewrites that must fail, a ``load_inline`` KernelBench candidate, Triton on the GPU, and
CUDA-event benchmarks. Every test prints what it measured (run with ``-s`` to see it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfagent.timing import bench
from perfagent.timing.render import render_text as render_bench
from perfagent.verify import VerificationResult, verify

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch_and_core")]

REPO = Path(__file__).resolve().parents[2]
CUDA_EXAMPLES = REPO / "examples" / "cuda"
KB = REPO / "examples" / "kernelbench"
CANDIDATES = REPO / "tests" / "verify" / "candidates"

# examples whose fixed.cu is a drop-in rewrite of slow.cu under one launch spec
PAIRS = [
    "01_transpose_naive",
    "02_transpose_bank_conflicts",
    "03_reduction_divergent",
    "04_small_grid",
    "05_low_occupancy_smem",
    "06_register_spills",
    "09_histogram_atomics",
    "10_sgemm_naive",
]


def _show(label: str, result: VerificationResult) -> None:
    failing = [f"{c.name}: {c.detail}" for c in result.checks if not c.passed]
    e = result.errors
    print(
        f"\n[{label}] verdict={result.verdict} device={result.device} sets={result.input_sets} "
        f"max_abs={e.max_abs_error} max_rel={e.max_rel_error} elapsed={result.elapsed_s:.1f}s"
    )
    for line in failing:
        print(f"    {line}")


@pytest.mark.parametrize("example", PAIRS)
def test_launch_spec_slow_vs_fixed_passes(example: str) -> None:
    folder = CUDA_EXAMPLES / example
    result = verify(folder / "slow.cu", folder / "fixed.cu", device="cuda", seeds=3, timeout_s=120)
    _show(example, result)
    assert result.verdict == "pass", result.reason
    names = {c.name: c for c in result.checks}
    assert names["correctness"].passed and names["inputs-unchanged"].passed


TRANSPOSE = CUDA_EXAMPLES / "01_transpose_naive"
BROKEN = {
    # writes only the first half of the rows of odata
    "half_written.cu": ("all-outputs-written", "if (x < width && y + j < height / 2)"),
    # off by one: reads the neighbouring column
    "off_by_one.cu": ("correctness", "idata[(size_t)(y + j) * width + (x + 1 < width ? x + 1 : x)]"),
    # scribbles on its input after reading it
    "writes_input.cu": ("inputs-unchanged", None),
    # writes far out of bounds: an illegal address
    "out_of_bounds.cu": ("cuda-errors", "odata[(size_t)x * height + (y + j) + (1ull << 40)]"),
}


def _broken_transpose(tmp_path: Path, name: str, edit: str | None) -> Path:
    text = (TRANSPOSE / "slow.cu").read_text()
    original_cond = "if (x < width && y + j < height)"
    original_store = "odata[(size_t)x * height + (y + j)] = idata[(size_t)(y + j) * width + x];"
    if name == "half_written.cu":
        text = text.replace(original_cond, edit or original_cond)
    elif name == "off_by_one.cu":
        text = text.replace(original_store, f"odata[(size_t)x * height + (y + j)] = {edit};")
    elif name == "writes_input.cu":
        text = text.replace(
            original_store, original_store + " ((float *)idata)[(size_t)(y + j) * width + x] = 0.0f;"
        )
    elif name == "out_of_bounds.cu":
        text = text.replace(original_store, f"{edit} = idata[(size_t)(y + j) * width + x];")
    text = text.replace("transpose_naive", "transpose_broken")
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_launch_spec_broken_rewrite_fails(tmp_path: Path, name: str) -> None:
    check, edit = BROKEN[name]
    candidate = _broken_transpose(tmp_path, name, edit)
    result = verify(TRANSPOSE / "transpose.launch.toml", candidate, device="cuda", seeds=2, timeout_s=120)
    _show(name, result)
    assert result.verdict == "fail"
    assert any(c.name == check and not c.passed for c in result.checks), [
        c.name for c in result.failed_checks
    ]


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer not on PATH")
def test_sanitizer_reports_a_small_overrun(tmp_path: Path) -> None:
    # 4 KiB past the end of odata: usually no crash, but memcheck sees it
    text = (
        (TRANSPOSE / "slow.cu")
        .read_text()
        .replace(
            "odata[(size_t)x * height + (y + j)] = idata[(size_t)(y + j) * width + x];",
            "odata[(size_t)x * height + (y + j)] = idata[(size_t)(y + j) * width + x];"
            " if (x == width - 1 && y + j == height - 1) odata[(size_t)width * height + 1024] = 0.0f;",
        )
    )
    candidate = tmp_path / "overrun.cu"
    candidate.write_text(text)
    small = tmp_path / "t.launch.toml"
    spec = (TRANSPOSE / "transpose.launch.toml").read_text()
    spec = spec.replace('source = "slow.cu"', f'source = "{TRANSPOSE / "slow.cu"}"')
    spec = spec.replace("width = 8192\nheight = 8192", "width = 256\nheight = 192")
    small.write_text(spec)
    result = verify(small, candidate, device="cuda", seeds=1, timeout_s=120, sanitizer=True)
    _show("sanitizer", result)
    names = {c.name: c for c in result.checks}
    assert not names["sanitizer-memcheck"].passed


def test_load_inline_candidate_passes() -> None:
    result = verify(
        KB / "01_vector_add.py", KB / "01_vector_add_cuda.py", device="cuda", seeds=3, timeout_s=120
    )
    _show("load_inline", result)
    assert result.verdict == "pass", result.reason
    names = {c.name: c for c in result.checks}
    assert names["kernel-launched"].passed and "vector_add_kernel" in names["kernel-launched"].detail
    assert names["stream-sync"].passed


def test_triton_candidate_on_gpu_passes() -> None:
    result = verify(
        KB / "02_matmul_relu.py", KB / "02_matmul_relu_triton.py", device="cuda", seeds=3, timeout_s=120
    )
    _show("triton", result)
    assert result.verdict == "pass", result.reason


@pytest.mark.parametrize(
    ("candidate", "check"),
    [
        ("cheat_partial_write.py", "no-nan-inf"),
        ("cheat_cache_data_ptr.py", "fresh-results"),
        ("cheat_stream.py", "static:no-streams"),
        ("cheat_thread.py", "runtime:no-thread-injection"),
        ("cheat_not_launched.py", "own-kernel-not-run"),
    ],
)
def test_kernelbench_cheats_fail_on_gpu(candidate: str, check: str) -> None:
    result = verify(
        CANDIDATES / "problem_add.py", CANDIDATES / candidate, device="cuda", seeds=2, timeout_s=30
    )
    _show(candidate, result)
    assert result.verdict == "fail"
    assert any(c.name == check and not c.passed for c in result.checks), [
        c.name for c in result.failed_checks
    ]


def test_bench_transpose_pair_with_cuda_events() -> None:
    result = bench(TRANSPOSE / "slow.cu", TRANSPOSE / "fixed.cu", device="cuda", runs=100, warmup=10)
    print("\n[bench 01_transpose_naive slow vs fixed]\n" + render_bench(result))
    assert result.timer == "cuda-events" and result.l2_flush_bytes >= 128 * 1024 * 1024
    assert result.comparison is not None and result.candidate is not None
    assert result.comparison.significant and result.comparison.speedup > 1.0
    assert "below-speed-of-light" not in result.flags
    if result.baseline.roofline and result.baseline.roofline.pct_of_roofline is not None:
        assert 0 < result.baseline.roofline.pct_of_roofline < 100


def test_bench_near_peak_copy_on_the_roofline() -> None:
    folder = CUDA_EXAMPLES / "08_vector_copy_near_peak"
    result = bench(folder / "slow.cu", device="cuda", runs=50, warmup=5)
    print("\n[bench 08_vector_copy_near_peak]\n" + render_bench(result))
    roof = result.baseline.roofline
    assert roof is not None and roof.achieved_bytes_per_s is not None
    if roof.pct_of_roofline is not None:  # needs the GPU in the knowledge table
        assert 30 < roof.pct_of_roofline <= 100, roof


def test_bench_same_kernel_is_no_change() -> None:
    folder = CUDA_EXAMPLES / "06_register_spills"
    result = bench(folder / "slow.cu", folder / "slow.cu", device="cuda", runs=60, warmup=5)
    print("\n[bench 06 slow vs itself]\n" + render_bench(result))
    assert result.comparison is not None
    assert abs(result.comparison.speedup - 1.0) < 0.1


def test_bench_kernelbench_load_inline() -> None:
    result = bench(KB / "01_vector_add.py", KB / "01_vector_add_cuda.py", device="cuda", runs=100, warmup=10)
    print("\n[bench 01_vector_add torch vs load_inline]\n" + render_bench(result))
    assert result.comparison is not None and result.baseline.timing.median_s > 0


def test_bench_flags_work_left_on_a_side_stream(tmp_path: Path) -> None:
    """The timed interval ends at the current stream's end event; a side stream's work that escapes it shows
    as overhang and is flagged, and work that does not escape is timed: either way no speed-up is earned."""
    problem = tmp_path / "problem_add_big.py"
    problem.write_text((CANDIDATES / "problem_add.py").read_text().replace("N = 4096", "N = 1 << 26"))
    result = bench(problem, CANDIDATES / "cheat_stream.py", device="cuda", runs=20, warmup=3)
    print("\n[bench add 2^26: torch vs side-stream cheat]\n" + render_bench(result))
    # What must hold: the cheat never earns a speed-up. Either its side-stream work escapes the interval
    # and the overhang check flags it, or the work lands inside the interval and is timed (on a busy
    # 4-GPU host, 2026-11-27: 438 µs against the reference's 233 µs, 0.53x, nothing to flag).
    assert result.comparison is not None
    flagged = "work-after-end-event" in result.flags
    assert flagged or result.comparison.verdict != "faster", (result.flags, result.comparison, result.notes)


def test_bench_batch_reads_as_one_bench_per_candidate() -> None:
    """Three candidates timed in one worker (the optimize loop's batch) give the verdicts and speed-ups
    that one worker per candidate gives, within the noise of two separate runs."""
    from perfagent.timing import bench_batch

    slow, fixed = TRANSPOSE / "slow.cu", TRANSPOSE / "fixed.cu"
    batched = bench_batch(slow, [fixed, slow, fixed], device="cuda", runs=60, warmup=5)
    alone = bench(slow, fixed, device="cuda", runs=60, warmup=5)
    got = [r.comparison.speedup if r.comparison else None for r in batched]
    print(f"\n[bench_batch 01_transpose_naive: fixed, slow, fixed] {got}; alone {alone.comparison}")
    assert all(r.timer == "cuda-events" for r in batched)
    assert alone.comparison is not None and all(s is not None for s in got)
    fixed_a, same, fixed_b = (r.comparison for r in batched)
    assert fixed_a is not None and same is not None and fixed_b is not None
    assert fixed_a.verdict == fixed_b.verdict == alone.comparison.verdict == "faster"
    assert same.verdict == "no-change" or abs(same.speedup - 1) < 0.05  # slow.cu against itself
    assert abs(fixed_a.speedup / alone.comparison.speedup - 1) < 0.15
    assert abs(fixed_a.speedup / fixed_b.speedup - 1) < 0.1
