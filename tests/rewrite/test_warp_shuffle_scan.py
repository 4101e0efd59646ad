"""warp-shuffle-scan: Kogge-Stone block scans written several ways (our own kernels), each rewritten and
run against its original on the CPU block emulator (fibers, real barriers, shuffles that fail when a
lane is missing), compiled with nvcc, and the shapes that are not a provable block scan refused with the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import warp_shuffle_scan as rec
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_blocks import Buf, Case
from tests.rewrite.helpers import assert_clean_cuda, assert_compiled, nvcc_compile

# PMPP Fig. 11.3 as printed: the sum into a temporary, a barrier, the copy back; bound blockDim.x
PMPP = """
#define SECTION_SIZE 256
__global__ void ks(const float *X, float *Y, unsigned int N) {
    __shared__ float XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) XY[threadIdx.x] = X[i];
    else XY[threadIdx.x] = 0.0f;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float temp;
        if (threadIdx.x >= stride)
            temp = XY[threadIdx.x] + XY[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride)
            XY[threadIdx.x] = temp;
    }
    if (i < N) Y[i] = XY[threadIdx.x];
}
"""

# the neighbour into a temporary, `+=` after the barrier; an alias of threadIdx.x, a constant bound,
# an exclusive result and the section sums a second pass would scan
EXCLUSIVE_WITH_SUMS = """
#define SEC 128
extern "C" __global__ void section_scan(const int *in, int *out, int *sums, int n) {
    __shared__ int buf[SEC];
    const int tid = threadIdx.x;
    int g = blockIdx.x * SEC + tid;
    buf[tid] = g < n ? in[g] : 0;
    for (int s = 1; s < SEC; s <<= 1) {
        int tmp;
        __syncthreads();
        if (tid >= s) tmp = buf[tid - s];
        __syncthreads();
        if (tid >= s) buf[tid] += tmp;
    }
    __syncthreads();
    if (g < n) out[g] = tid > 0 ? buf[tid - 1] : 0;
    if (tid == SEC - 1) sums[blockIdx.x] = buf[tid];
}
"""

# `stride <= tid`, the barrier at the end of the step, a running maximum
MAX_SCAN = """
__global__ void running_max(const float *__restrict__ a, float *__restrict__ m, unsigned n) {
    __shared__ float sm[512];
    unsigned t = threadIdx.x;
    unsigned k = blockIdx.x * blockDim.x + t;
    sm[t] = k < n ? a[k] : -1e30f;
    __syncthreads();
    for (unsigned d = 1; d <= blockDim.x / 2; d = d * 2) {
        float nb;
        if (d <= t) nb = sm[t - d];
        __syncthreads();
        if (d <= t) sm[t] = fmaxf(sm[t], nb);
        __syncthreads();
    }
    if (k < n) m[k] = sm[t];
}
"""

# the read as a ternary with the identity, the write unguarded; doubles; `s += s`
TERNARY = """
__global__ void dscan(const double *x, double *y, long n) {
    __shared__ double v[1024];
    int t = threadIdx.x;
    long e = (long)blockIdx.x * blockDim.x + t;
    v[t] = e < n ? x[e] : 0.0;
    for (int s = 1; s < blockDim.x; s += s) {
        __syncthreads();
        double left = (t >= s) ? v[t - s] : 0.0;
        __syncthreads();
        v[t] = v[t] + left;
    }
    __syncthreads();
    if (e < n) y[e] = v[t];
}
"""

# an xor scan of unsigned words (prefix parity), the combined form with the neighbour first
XOR_SCAN = """
__global__ void prefix_xor(const unsigned int *w, unsigned int *p, int n) {
    __shared__ unsigned int acc[64];
    int lane = threadIdx.x;
    int at = blockIdx.x * 64 + lane;
    acc[lane] = at < n ? w[at] : 0u;
    for (unsigned int step = 1; step < 64; step *= 2) {
        __syncthreads();
        unsigned int x;
        if (lane >= step) x = acc[lane - step] ^ acc[lane];
        __syncthreads();
        if (lane >= step) acc[lane] = x;
    }
    if (at < n) p[at] = acc[lane];
}
"""

FORMS: dict[str, tuple[str, str, int, tuple[Buf | str, ...], str]] = {
    # name: (source, kernel, block, args, combine)
    "pmpp-fig-11-3": (PMPP, "ks", 256, (Buf("float", 700), Buf("float", 700), "700u"), "+"),
    "exclusive-with-section-sums": (
        EXCLUSIVE_WITH_SUMS,
        "section_scan",
        128,
        (Buf("int", 300), Buf("int", 300), Buf("int", 3), "300"),
        "+",
    ),
    "stride-le-tid-max": (
        MAX_SCAN,
        "running_max",
        512,
        (Buf("float", 1100), Buf("float", 1100), "1100u"),
        "fmaxf",
    ),
    "ternary-identity-double": (
        TERNARY,
        "dscan",
        1024,
        (Buf("double", 1500), Buf("double", 1500), "1500L"),
        "+",
    ),
    "xor-neighbour-first": (
        XOR_SCAN,
        "prefix_xor",
        64,
        (Buf("unsigned int", 150), Buf("unsigned int", 150), "150"),
        "^",
    ),
}


def _request(source: str, kernel: str, block: int) -> RewriteRequest:
    return RewriteRequest(
        source=source,
        language="cuda",
        transform="warp-shuffle-reduction",
        kernel=kernel,
        launch=LaunchContext(grid=["4"], block=[str(block)]),
    )


def _rewritten(name: str) -> str:
    source, kernel, block, _args, _combine = FORMS[name]
    candidates = rec.propose(_request(source, kernel, block))
    assert len(candidates) == 1, rec.applies(_request(source, kernel, block))
    assert candidates[0].source is not None
    return candidates[0].source


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_is_matched_with_its_combine(name: str) -> None:
    source, kernel, block, _args, combine = FORMS[name]
    assert rec.applies(_request(source, kernel, block)) is None
    out = _rewritten(name)
    assert_clean_cuda(out)
    assert "__shfl_up_sync" in out and "wscan_totals" in out
    assert out.count("for (") == source.count("for (") + 1  # the Kogge-Stone loop went, two warp scans came
    candidate = rec.propose(_request(source, kernel, block))[0]
    assert candidate.parameters["combine"] == combine


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_computes_what_the_original_does(name: str, tmp_path: Path) -> None:
    source, kernel, block, args, _combine = FORMS[name]
    size = next(a.size for a in args if isinstance(a, Buf))
    grid = (size + block - 1) // block
    cases = [Case(args=args, original=((grid,), (block, 1)), rewritten=((grid,), (block, 1)), name=name)]
    cuda_blocks.assert_same(tmp_path, source, _rewritten(name), kernel, cases, rtol=1e-9, atol=1e-3)


def test_every_form_compiles_with_nvcc(tmp_path: Path) -> None:
    assert_compiled(nvcc_compile({name: _rewritten(name) for name in FORMS}, tmp_path))


def test_dynamic_shared_memory_is_matched_too() -> None:
    source = PMPP.replace("__shared__ float XY[SECTION_SIZE];", "extern __shared__ float XY[];")
    assert rec.applies(_request(source, "ks", 256)) is None


REFUSED = {
    # name: (source, block, words the refusal must hold)
    "partial-warp-block": (PMPP, 48, "multiple of 32"),
    "loop-inside-a-branch": (
        PMPP.replace("    for (unsigned int stride", "    if (N > 0) for (unsigned int stride"),
        256,
        "inside a branch",
    ),
    "return-before-the-loop": (
        PMPP.replace(
            "    if (i < N) XY[threadIdx.x] = X[i];", "    if (i >= N) return;\n    XY[threadIdx.x] = X[i];"
        ),
        256,
        "return before",
    ),
    "strides-stop-short": (
        PMPP.replace("stride < blockDim.x", "stride < 32"),
        256,
        "stops the strides short",
    ),
    "bound-varies-by-thread": (
        PMPP.replace("stride < blockDim.x", "stride < i"),
        256,
        "neither a constant nor",
    ),
    "no-barrier-between-steps": (
        PMPP.replace("        __syncthreads();\n        float temp;", "        float temp;"),
        256,
        "no __syncthreads() between",
    ),
    "subtraction-is-not-a-scan": (
        PMPP.replace(
            "XY[threadIdx.x] + XY[threadIdx.x - stride]", "XY[threadIdx.x] - XY[threadIdx.x - stride]"
        ),
        256,
        "not one Kogge-Stone step",
    ),
    "off-by-one-guard": (
        PMPP.replace("threadIdx.x >= stride", "threadIdx.x > stride"),
        256,
        "not one Kogge-Stone step",
    ),
    "temporary-read-after-the-loop": (
        PMPP.replace("        float temp;\n", "")
        .replace("    if (i < N) XY", "    float temp = 0.0f;\n    if (i < N) XY", 1)
        .replace("    if (i < N) Y[i] = XY[threadIdx.x];", "    if (i < N) Y[i] = XY[threadIdx.x] + temp;"),
        256,
        "temp is used outside the scan loop",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_shapes_that_are_not_a_provable_block_scan_are_refused(name: str) -> None:
    source, block, words = REFUSED[name]
    why = rec.applies(_request(source, "ks" if "void ks" in source else "db", block))
    assert why is not None and words in why, why
    if name not in ("partial-warp-block", "double-buffered"):  # kernel-wide reasons have no one line
        assert why.startswith("line "), why


def test_the_emulation_catches_a_scan_that_skips_the_warp_totals(tmp_path: Path) -> None:
    # the check has teeth: without the offset of the warps before, every warp past the first is wrong
    source, kernel, block, args, _combine = FORMS["pmpp-fig-11-3"]
    broken = _rewritten("pmpp-fig-11-3").replace("if (wscan_warp > 0u) wscan_v =", "if (false) wscan_v =")
    cases = [Case(args=args, original=((3,), (block, 1)), rewritten=((3,), (block, 1)))]
    ok, out = cuda_blocks.run(tmp_path, source, broken, kernel, cases)
    assert not ok and "differs" in out


# GPU Gems 3 ch. 39's double buffer (flat halves, selectors swapped at the top of each step), exclusive
TWO_ROWS = """
__global__ void db(const float *x, float *y, int n) {
    __shared__ float t[2][256];
    int pout = 0, pin = 1, k = threadIdx.x;
    t[0][k] = x[blockIdx.x * 256 + k];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        pout = 1 - pout; pin = 1 - pout;
        if (k >= off) t[pout][k] = t[pin][k] + t[pin][k - off];
        else t[pout][k] = t[pin][k];
        __syncthreads();
    }
    y[blockIdx.x * 256 + k] = t[pout][k];
}
"""

GEMS_DOUBLE = """
__global__ void gems(const float *g_idata, float *g_odata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    int base = blockIdx.x * n;
    temp[pout * n + thid] = (thid > 0) ? g_idata[base + thid - 1] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_odata[base + thid] = temp[pout * n + thid];
}
"""

# a [2][N] array, the ternary step, a barrier first, the minimum; a section total after the loop
TWO_ROWS_MIN = """
#define SECTION 256
__global__ void running_min(const int *a, int *m, int *total) {
    __shared__ int buf[2][SECTION];
    int t = threadIdx.x, src = 0, dst = 1;
    buf[0][t] = a[blockIdx.x * SECTION + t];
    for (int s = 1; s < SECTION; s *= 2) {
        __syncthreads();
        buf[dst][t] = t >= s ? min(buf[src][t - s], buf[src][t]) : buf[src][t];
        int swap = src;
        src = dst;
        dst = swap;
    }
    __syncthreads();
    m[blockIdx.x * SECTION + t] = buf[src][t];
    if (t == 0) total[blockIdx.x] = buf[src][SECTION - 1];
}
"""


def test_double_buffered_forms_are_matched_and_compile(tmp_path: Path) -> None:
    gems = rec.propose(
        _request(
            GEMS_DOUBLE.replace("extern __shared__ float temp[];", "__shared__ float temp[512];"), "gems", 256
        )
    )
    assert (
        len(gems) == 1 and gems[0].source is not None and "wscan_out = &temp[pout*n+thid]" in gems[0].source
    )
    assert_compiled(nvcc_compile({"gems": gems[0].source}, tmp_path))


def test_double_buffered_gems_computes_what_the_original_does(tmp_path: Path) -> None:
    source = GEMS_DOUBLE.replace("extern __shared__ float temp[];", "__shared__ float temp[512];")
    out = rec.propose(_request(source, "gems", 256))[0].source
    assert out is not None
    args = (Buf("float", 3 * 256), Buf("float", 3 * 256), "256")
    cases = [Case(args=args, original=((3,), (256, 1)), rewritten=((3,), (256, 1)))]
    cuda_blocks.assert_same(tmp_path, source, out, "gems", cases, rtol=1e-9, atol=1e-3)


def test_a_two_row_double_buffer_computes_what_the_original_does(tmp_path: Path) -> None:
    out = rec.propose(_request(TWO_ROWS, "db", 256))
    assert len(out) == 1 and out[0].source is not None, rec.applies(_request(TWO_ROWS, "db", 256))
    args = (Buf("float", 2 * 256), Buf("float", 2 * 256), "512")
    cases = [Case(args=args, original=((2,), (256, 1)), rewritten=((2,), (256, 1)))]
    cuda_blocks.assert_same(tmp_path, TWO_ROWS, out[0].source, "db", cases, rtol=1e-9, atol=1e-3)
    assert_compiled(nvcc_compile({"two_rows": out[0].source}, tmp_path))


def test_a_swap_after_the_step_is_refused_when_the_result_is_read_through_the_other_selector() -> None:
    # after the swap, the result is buf[src]: the selector of the last write was dst
    why = rec.applies(_request(TWO_ROWS_MIN, "running_min", 256))
    assert why is not None and "line 7" in why


def test_a_parameter_bound_is_tested_at_run_time_and_both_paths_agree(tmp_path: Path) -> None:
    # `stride < N`: the warp scan where N spans the block, the original steps where it does not
    source = PMPP.replace("stride < blockDim.x", "stride < N")
    out = rec.propose(_request(source, "ks", 256))[0].source
    assert out is not None and "if ((N) > 128)" in out
    cases = [
        Case(
            args=(Buf("float", n), Buf("float", n), f"{n}u"),
            original=((g,), (256, 1)),
            rewritten=((g,), (256, 1)),
        )
        for n, g in ((700, 3), (100, 1))
    ]
    cuda_blocks.assert_same(tmp_path, source, out, "ks", cases, rtol=1e-9, atol=1e-3)


def test_barriers_around_the_scan_are_dropped_only_where_threads_touch_their_own_slot_alone() -> None:
    # PMPP: loads into XY[threadIdx.x], reads back XY[threadIdx.x]: two barriers in all, as the textbook fix
    pmpp = _rewritten("pmpp-fig-11-3")
    assert pmpp.count("__syncthreads()") == 2
    # the exclusive form reads buf[tid - 1] after the scan: the barrier after it stays
    exclusive = _rewritten("exclusive-with-section-sums")
    assert "no barrier first" in exclusive and "no barrier last" not in exclusive


# more spellings of one step, each a full kernel: (name, loop body) over s[] with t the thread index
STEP_SPELLINGS = {
    "temporary-starts-at-zero": """
        float val = 0;
        if (t >= d) val = s[t - d];
        __syncthreads();
        s[t] += val;
        __syncthreads();""",
    "own-value-then-guarded-add": """
        __syncthreads();
        float mine = s[t];
        if (t >= d) mine += s[t - d];
        __syncthreads();
        s[t] = mine;""",
    "ternary-combined-or-own": """
        float nv = (t >= d) ? s[t - d] + s[t] : s[t];
        __syncthreads();
        s[t] = nv;
        __syncthreads();""",
    "braced-guards-max": """
        __syncthreads();
        float x;
        if (d <= t) { x = s[t - d]; }
        __syncthreads();
        if (d <= t) { s[t] = fmaxf(x, s[t]); }""",
}
STEP_KERNEL = """
__global__ void steps(const float *in, float *out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int g = blockIdx.x * 128 + t;
    s[t] = g < n ? in[g] : 0.0f;
    for (int d = 1; d < 128; d *= 2) {@BODY@
    }
    if (g < n) out[g] = s[t];
}
"""


@pytest.mark.parametrize("name", sorted(STEP_SPELLINGS))
def test_more_step_spellings_compute_what_the_original_does(name: str, tmp_path: Path) -> None:
    source = STEP_KERNEL.replace("@BODY@", STEP_SPELLINGS[name])
    out = rec.propose(_request(source, "steps", 128))
    assert len(out) == 1 and out[0].source is not None, rec.applies(_request(source, "steps", 128))
    args = (Buf("float", 300), Buf("float", 300), "300")
    cases = [Case(args=args, original=((3,), (128, 1)), rewritten=((3,), (128, 1)))]
    cuda_blocks.assert_same(tmp_path, source, out[0].source, "steps", cases, rtol=1e-9, atol=1e-3)


def test_a_temporary_that_starts_at_a_non_identity_is_refused() -> None:
    source = STEP_KERNEL.replace(
        "@BODY@", STEP_SPELLINGS["temporary-starts-at-zero"].replace("val = 0;", "val = 1;")
    )
    why = rec.applies(_request(source, "steps", 128))
    assert why is not None and "not one Kogge-Stone step" in why
