"""block-aggregate-atomics: atomics into one address per block -> local accumulators, one atomic per block.

The forms are written here (none is an unseen2 kernel): a guarded float dot product, a double sum over a
grid-stride loop, an int max, a float sum with an early return, an unsigned min and count on a block of
48 threads (a partial warp), per-row sums on a 2-D grid (the address is block-dependent, through a
local), and sum plus sum-of-squares into two words. Each rewrite runs against its original on the
block-synchronous CPU emulator (real barriers, warp shuffles that fail when a lane is missing, guard
words) and compiles with nvcc; addresses that depend on the thread are refused with the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, block_aggregate_atomics, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same, run
from tests.rewrite.helpers import assert_compiled, nvcc_compile

DOT_GUARD = """
__global__ void dot_f32(const float *x, const float *y, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, x[i] * y[i]);
}
"""
SUM_GRID_STRIDE = """
extern "C" __global__ void total_f64(const double *v, double *total, long n) {
    for (long k = blockIdx.x * (long)blockDim.x + threadIdx.x; k < n; k += (long)gridDim.x * blockDim.x) {
        atomicAdd(&total[0], v[k] * 0.5);
    }
}
"""
MAX_INT = """
#define SLOT 0
__global__ void best_score(const int *scores, int *best, int count) {
    const int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < count && scores[idx] % 3 != 0) {
        atomicMax(best + SLOT, scores[idx] - 500);
    }
}
"""
EARLY_RETURN = """
__global__ void positive_sum(const float *in, float *acc, int n) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n) return;
    float v = in[t] * 2.0f;
    if (v <= 0.0f) return;
    atomicAdd(acc, v);
}
"""
MIN_AND_COUNT = """
__global__ void min_and_count(const unsigned *keys, unsigned *lowest, unsigned int *hits, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        atomicMin(lowest, keys[g]);
        if (keys[g] & 1u) atomicAdd(hits, 1u);
    }
}
"""
ROW_SUMS_2D = """
__global__ void row_sums(const float *m, float *sums, int rows, int cols) {
    const int row = blockIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols)
        atomicAdd(&sums[row], m[row * cols + col]);
}
"""
MOMENTS = """
__global__ void moments(const float *x, float *stats, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        atomicAdd(&stats[0], v);
        atomicAdd(&stats[1], v * v);
    }
}
"""

CAS_MAX_F32 = """
__device__ float atomic_max_f32(float *address, float val) {
    int *as_int = (int *)address;
    int old = *as_int, assumed;
    do {
        assumed = old;
        old = atomicCAS(as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}
__global__ void max_f32(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_f32(out, x[i] * 3.0f);
}
"""
CAS_ADD_F64 = """
__device__ double cas_add(double *address, double val) {
    unsigned long long int *address_as_ull = (unsigned long long int *)address;
    unsigned long long int old = *address_as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}
__global__ void sum_f64(const double *x, double *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cas_add(out, x[i]);
}
"""
SIGNED_FLOAT_TRICK = """
__device__ float atomic_max_signed(float *addr, float value) {
    return value >= 0 ? __int_as_float(atomicMax((int *)addr, __float_as_int(value)))
                      : __uint_as_float(atomicMin((unsigned int *)addr, __float_as_uint(value)));
}
__global__ void smax(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_signed(out, x[i]);
}
"""


def _spec(grid: list[object] | None = None, block: list[object] | None = None) -> LaunchContext:
    return launch_context({"grid": grid or ["ceil_div(n, 256)"], "block": block or [256], "args": []})


FORMS: dict[str, tuple[str, str, LaunchContext | None]] = {
    "dot-guard-float": (DOT_GUARD, "dot_f32", _spec()),
    "sum-grid-stride-double": (SUM_GRID_STRIDE, "total_f64", _spec(["4 * sm_count"])),
    "max-int": (MAX_INT, "best_score", _spec(["ceil_div(count, 256)"])),
    "float-early-return": (EARLY_RETURN, "positive_sum", _spec()),
    "min-and-count-partial-warp": (MIN_AND_COUNT, "min_and_count", _spec(["ceil_div(n, 48)"], [48])),
    "row-sums-2d-grid": (ROW_SUMS_2D, "row_sums", _spec(["ceil_div(cols, 64)", "rows"], [64, 1])),
    "moments-two-words": (MOMENTS, "moments", None),
    "cas-helper-float-max": (CAS_MAX_F32, "max_f32", _spec()),
    "cas-helper-double-add-early-return": (CAS_ADD_F64, "sum_f64", _spec()),
}


ONE_ELEMENT = (
    "dot-guard-float",
    "max-int",
    "float-early-return",
    "min-and-count-partial-warp",
    "cas-helper-float-max",
    "cas-helper-double-add-early-return",
)


def _request(source: str, launch: LaunchContext | None, kernel: str | None = None) -> RewriteRequest:
    return RewriteRequest(
        source=source, language="cuda", transform="warp-shuffle-reduction", launch=launch, kernel=kernel
    )


def _candidates(name: str) -> list[str]:
    source, kernel, launch = FORMS[name]
    return [c.source for c in block_aggregate_atomics.propose(_request(source, launch, kernel))]


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    source, kernel, launch = FORMS[name]
    req = _request(source, launch, kernel)
    assert block_aggregate_atomics.applies(req) is None, block_aggregate_atomics.applies(req)
    cands = block_aggregate_atomics.propose(req)
    one_element = name in ONE_ELEMENT
    assert len(cands) == (2 if one_element else 1)
    for cand in cands:
        assert "__shfl_down_sync" in cand.source and "__syncthreads_or" in cand.source
        assert cand.source.count("perfagent_hit") >= 3  # declared, set, tested
    if one_element:  # the textbook form first: grid-stride over one wave of blocks
        assert "gridDim.x" in cands[0].source and cands[0].launch is not None
        assert cands[0].parameters["grid_stride"] is True and cands[1].launch is None


def test_early_return_becomes_a_lambda_only_without_a_grid_stride_loop() -> None:
    strided, plain = _candidates("float-early-return")
    assert "continue;" in strided and "[&]()" not in strided
    assert "[&]()" in plain and "}();" in plain


def test_block_dependent_address_is_recomputed_from_its_definition() -> None:
    [cand] = _candidates("row-sums-2d-grid")
    assert "atomicAdd(&sums[(blockIdx.y)], perfagent_acc0)" in cand


def test_cas_helper_is_called_once_per_block_with_the_combined_value() -> None:
    strided, plain = _candidates("cas-helper-float-max")
    for cand in (strided, plain):
        assert "fmaxf(perfagent_acc0, static_cast<float>(x[i] * 3.0f))" in cand
        assert "if (perfagent_lane == 0) atomic_max_f32(out, perfagent_acc0);" in cand
        assert "__int_as_float(0xff800000)" in cand  # -inf: the identity of a maximum


def test_two_addresses_get_two_accumulators() -> None:
    [cand] = _candidates("moments-two-words")
    assert "atomicAdd(&stats[0], perfagent_acc0)" in cand and "atomicAdd(&stats[1], perfagent_acc1)" in cand


def test_grid_stride_variant_sweeps_grid_and_block() -> None:
    source, kernel, launch = FORMS["dot-guard-float"]
    batch = RECIPES["block-aggregate-atomics"].candidates(
        _request(source, launch, kernel).model_copy(update={"max_candidates": 16})
    )
    grids = [c.launch.grid[0] for c in batch if c.launch is not None and c.launch.grid]
    assert {"2 * sm_count", "4 * sm_count", "8 * sm_count"} <= set(map(str, grids))


REFUSED: dict[str, tuple[str, str]] = {
    "thread-dependent-address": (
        DOT_GUARD.replace("atomicAdd(out,", "atomicAdd(&out[threadIdx.x % 4],"),
        "line 5: atomicAdd: the address &out[threadIdx.x % 4] depends on the thread: it depends on threadIdx.x",
    ),
    "thread-dependent-through-a-local": (
        ROW_SUMS_2D.replace("const int row = blockIdx.y;", "const int row = blockIdx.y + (threadIdx.x & 1);"),
        "row (line 3): it depends on threadIdx.x",
    ),
    "data-dependent-address (a histogram)": (
        MAX_INT.replace("atomicMax(best + SLOT,", "atomicMax(best + scores[idx] % 8,"),
        "it reads memory (scores[idx])",
    ),
    "loop-counter-address": (
        """
__global__ void per_channel(const float *x, float *out, int n, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int c = 0; c < C; ++c)
            atomicAdd(&out[c], x[i * C + c]);
}
""",
        "c changes on line 5",
    ),
    "result-used": (
        DOT_GUARD.replace(
            "atomicAdd(out, x[i] * y[i]);", "{ float old = atomicAdd(out, x[i] * y[i]); (void)old; }"
        ),
        "its result (the old value) is used",
    ),
    "target-read-elsewhere": (
        DOT_GUARD.replace("if (i < n)", "if (i < n && out[0] < 1e30f)"),
        "out is used other than as the atomics' target",
    ),
    "already-reduced-per-block": (
        DOT_GUARD.replace("if (i < n)", "__syncthreads();\n    if (i < n)"),
        "__syncthreads on line 4 (threads cooperate)",
    ),
    "helper-without-a-cas-loop": (
        SIGNED_FLOAT_TRICK,
        "line 8: atomic_max_signed() uses atomics, but not as a CAS-loop max, min or sum: it uses atomicMax, atomicMin",
    ),
    "atomic-exchange": (
        DOT_GUARD.replace("atomicAdd(out,", "atomicExch(out,"),
        "line 5: atomicExch is not an atomic this recipe combines",
    ),
    "no-atomics": (DOT_GUARD.replace("atomicAdd(out, x[i] * y[i]);", "out[i] = x[i];"), "no atomicAdd/Sub"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, why = REFUSED[name]
    reason = block_aggregate_atomics.applies(_request(source, _spec()))
    assert reason is not None and why in reason, reason
    assert block_aggregate_atomics.propose(_request(source, _spec())) == []


def test_registered_for_the_atomic_contention_transforms() -> None:
    from knowledge.transforms import catalog

    for transform in ("privatize-atomics", "warp-shuffle-reduction"):
        assert block_aggregate_atomics.RECIPE in recipes_for(transform, "cuda")
        assert "block-aggregate-atomics" in catalog()[transform].recipes


# ------------------------------------------------------------------------------ block-synchronous emulation


def _cases(name: str) -> list[Case]:
    """Both launches per case: the original grid, and for the rewrite the same grid (the plain variant)
    or a small one (the grid-stride variant walks the rest)."""
    one_d = {
        "dot-guard-float": lambda n: (Buf("float", n), Buf("float", n), Buf("float", 1), f"{n}"),
        "max-int": lambda n: (Buf("int", n), Buf("int", 1), f"{n}"),
        "float-early-return": lambda n: (Buf("float", n), Buf("float", 1), f"{n}"),
        "moments-two-words": lambda n: (Buf("float", n), Buf("float", 2), f"{n}"),
        "cas-helper-float-max": lambda n: (Buf("float", n), Buf("float", 1), f"{n}"),
        "cas-helper-double-add-early-return": lambda n: (Buf("double", n), Buf("double", 1), f"{n}"),
        "sum-grid-stride-double": lambda n: (Buf("double", n), Buf("double", 1), f"{n}L"),
    }
    if name == "min-and-count-partial-warp":
        return [
            Case(
                (Buf("unsigned", n), Buf("unsigned", 1), Buf("unsigned int", 1), f"{n}"),
                (((n + 47) // 48,), (48, 1)),
                (((n + 47) // 48,), (48, 1)),
                f"n={n}",
            )
            for n in (5, 200)
        ]
    if name == "row-sums-2d-grid":
        rows, cols = 5, 150
        launch = ((3, rows), (64, 1))
        return [Case((Buf("float", rows * cols), Buf("float", rows), f"{rows}", f"{cols}"), launch, launch)]
    return [
        Case(one_d[name](n), (((n + 63) // 64,), (64, 1)), (((n + 63) // 64,), (64, 1)), f"n={n}")
        for n in (3, 300)
    ]


def _strided_cases(name: str) -> list[Case]:
    return [Case(c.args, c.original, ((2,), c.rewritten[1]), c.name + " grid 2") for c in _cases(name)]


_TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, kernel, _ = FORMS[name]
    cands = _candidates(name)
    for sub in ("plain", "strided"):
        (tmp_path / sub).mkdir()
    assert_same(tmp_path / "plain", source, cands[-1], kernel, _cases(name), **_TOLERANCE)
    if len(cands) == 2:
        assert_same(tmp_path / "strided", source, cands[0], kernel, _strided_cases(name), **_TOLERANCE)


def test_the_emulation_catches_a_full_mask_in_a_partial_warp(tmp_path: Path) -> None:
    """A 48-thread block's second warp has 16 lanes: a full mask there reads lanes that do not exist."""
    source, kernel, _ = FORMS["min-and-count-partial-warp"]
    plain = _candidates("min-and-count-partial-warp")[-1]
    broken = plain.replace(
        "perfagent_lanes == 32u ? 0xffffffffu : (1u << perfagent_lanes) - 1u", "0xffffffffu"
    )
    broken = broken.replace("perfagent_lane + perfagent_off < perfagent_lanes", "true")
    ok, out = run(tmp_path, source, broken, kernel, _cases("min-and-count-partial-warp"), rtol=0.0, atol=0.0)
    assert broken != plain and not ok, out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    cands = _candidates(name)
    assert_compiled(nvcc_compile({f"{name}_{k}".replace("-", "_"): c for k, c in enumerate(cands)}, tmp_path))
