"""chunk-interleave (coalesce-access): contiguous per-thread chunks visited warp-contiguously.

Positive forms are spelled the ways hand-coarsened element-wise kernels write them (counter or index
loop, base in a variable or inline, a local global index, several index types, the chunk a macro,
literal or parameter, guards by ``if``/``break``); each one's rewrite is run against its original on
the CPU lane emulator (tests/rewrite/cuda_lanes.py: guard words around every buffer, so a store out of
range fails) with sizes that are not a multiple of the block's tile, and compiled with nvcc. Refused
forms name why. The test kernel unseen/16 is read from examples/ as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import RECIPES, chunk_interleave, recipes_for
from tests.rewrite.cuda_lanes import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

ROOT = Path(__file__).resolve().parents[2]
UNSEEN_16 = ROOT / "examples" / "unseen" / "16_double_sigmoid_chunked" / "slow.cu"

FORMS: dict[str, str] = {
    "counter-base-var-idx-local": """
#define CHUNK 16
__global__ void scale(const float *in, float *out, long long n) {
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
    for (int k = 0; k < CHUNK; ++k) {
        const long long idx = first + k;
        if (idx < n) out[idx] = 2.0f * in[idx] + 1.0f;
    }
}
""",
    "counter-inline-gid-local-int": """
__global__ void relu4(const float* x, float* y, int n) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 4; i++) {
        int e = gid * 4 + i;
        if (e < n) { float v = x[e]; y[e] = v > 0.f ? v : 0.f; }
    }
}
""",
    "counter-chunk-first-break-size_t": """
#define ITEMS 8
__global__ void axpy(const double *x, double *y, double a, size_t n) {
    size_t base = ITEMS * (threadIdx.x + (size_t)blockIdx.x * blockDim.x);
    for (int j = 0; j < ITEMS; j += 1) {
        if (base + j >= n) break;
        y[base + j] = a * x[base + j] + y[base + j];
    }
}
""",
    "index-loop-with-bound": """
__global__ void add(const int *a, const int *b, int *c, int n, int chunk) {
    const int start = (blockDim.x * blockIdx.x + threadIdx.x) * chunk;
    for (int i = start; i < start + chunk && i < n; ++i) {
        c[i] = a[i] + b[i];
    }
}
""",
}

REFUSED: dict[str, tuple[str, str]] = {
    "running-sum": (
        """
__global__ void partial(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    float s = 0.f;
    for (int k = 0; k < 8; ++k) { int idx = first + k; if (idx < n) { s += in[idx]; out[idx] = s; } }
}
""",
        "'s' carries a value from one element to the next",
    ),
    "neighbour-read": (
        """
__global__ void diff(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int k = 0; k < 8; ++k) { int idx = first + k; if (idx + 1 < n) out[idx] = in[idx + 1] - in[idx]; }
}
""",
        "is not indexed by the element index alone",
    ),
    "pointer-moved": (
        """
__global__ void shifted(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int k = 0; k < 8; ++k) { int idx = first + k; if (idx < n) out[idx] = *(in + idx + 1); }
}
""",
        "the pointer in is used other than by a subscript",
    ),
    "pointer-passed-to-a-call": (
        """
__device__ float peek(const float *p, int i) { return p[i + 1]; }
__global__ void called(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int k = 0; k < 8; ++k) { int idx = first + k; if (idx < n) out[idx] = peek(in, idx); }
}
""",
        "the pointer in is used other than by a subscript",
    ),
    "counter-used-as-value": (
        """
__global__ void stamp(int *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k) { int idx = first + k; if (idx < n) out[idx] = k; }
}
""",
        "the counter k is used for more than",
    ),
    "shared-memory": (
        """
__global__ void staged(const float *in, float *out, int n) {
    __shared__ float t[1024];
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k) { int idx = first + k; if (idx < n) out[idx] = in[idx]; }
}
""",
        "shared memory",
    ),
    "atomic": (
        """
__global__ void hist(const int *in, int *bins, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k) { int idx = first + k; if (idx < n) atomicAdd(&bins[idx], in[idx]); }
}
""",
        "atomicAdd ties threads together",
    ),
    "base-guard-before-loop": (
        """
__global__ void early(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (first >= n) return;
    for (int k = 0; k < 4; ++k) { int idx = first + k; if (idx < n) out[idx] = in[idx]; }
}
""",
        "the chunk base first is used for more than 'first + k'",
    ),
    "two-d": (
        """
__global__ void rows(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4 + blockIdx.y * n;
    for (int k = 0; k < 4; ++k) { out[first + k] = in[first + k]; }
}
""",
        "blockIdx.y is used",
    ),
    "grid-stride-not-chunked": (
        """
__global__ void copy(const float *in, float *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i];
}
""",
        "gridDim.x is used",
    ),
    "code-after-loop": (
        """
__global__ void tail(const float *in, float *out, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k) { int idx = first + k; if (idx < n) out[idx] = in[idx]; }
    if (first == 0) out[0] = 0.f;
}
""",
        "code after the chunk loop",
    ),
}


def _request(source: str, launch: LaunchContext | None = None) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="coalesce-access", launch=launch)


SCALED = """
#define THREADS 128
#define PER 4
__global__ void halve(const float *in, float *out, int n) {
    int t = blockIdx.x * THREADS + threadIdx.x;
    for (int k = 0; k < PER; ++k) { int i = t * PER + k; if (i < n) out[i] = 0.5f * in[i]; }
}
"""


def test_a_block_size_macro_in_the_index_needs_the_spec_to_say_it_is_the_block() -> None:
    """'blockIdx.x * THREADS + threadIdx.x' is the global index only when THREADS is the block size."""
    spec = LaunchContext(grid=["ceil_div(n, THREADS * PER)"], block=["THREADS"])
    assert chunk_interleave.applies(_request(SCALED, spec)) is None
    [cand] = chunk_interleave.propose(_request(SCALED, spec))
    assert (
        "int i = ((int)blockIdx.x * blockDim.x * (PER) + threadIdx.x) + (int)k * blockDim.x;" in cand.source
    )
    assert chunk_interleave.applies(_request(SCALED)) is not None  # no spec: THREADS is unknown
    other = LaunchContext(grid=["ceil_div(n, 256 * PER)"], block=[256])
    assert chunk_interleave.applies(_request(SCALED, other)) is not None


def test_the_scaled_form_matches_the_original_lane_by_lane(tmp_path: Path) -> None:
    spec = LaunchContext(grid=["ceil_div(n, THREADS * PER)"], block=["THREADS"])
    [cand] = chunk_interleave.propose(_request(SCALED, spec))
    cases = []
    for n in (37, 128 * 4 + 3, 3 * 128 * 4 - 1):
        grid = -(-n // (128 * 4))
        cases.append(Case((Buf(F, n), Buf(F, n), f"{n}"), (grid, 128), (grid, 128), f"n={n}"))
    assert_same(tmp_path, SCALED, cand.source, "halve", cases, rtol=0.0, atol=0.0)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(FORMS[name])
    assert chunk_interleave.applies(req) is None, chunk_interleave.applies(req)
    [cand] = chunk_interleave.propose(req)
    assert "blockIdx.x * blockDim.x * (" in cand.source and "+ threadIdx.x)" in cand.source
    assert "blockDim.x" in cand.source.split("for", 1)[1]  # the step (or the counter) is scaled by the block
    assert cand.launch is None  # same launch
    assert cand.recipe == "chunk-interleave"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, why = REFUSED[name]
    reason = chunk_interleave.applies(_request(source))
    assert reason is not None and not reason.startswith("chunk-interleave")
    assert why in reason, reason
    assert chunk_interleave.propose(_request(source)) == []


def test_registered_for_coalesce_access_and_in_the_catalog() -> None:
    assert RECIPES["chunk-interleave"] is chunk_interleave.RECIPE
    assert chunk_interleave.RECIPE in recipes_for("coalesce-access", "cuda")
    from knowledge.transforms import catalog

    assert "chunk-interleave" in catalog()["coalesce-access"].recipes


def test_the_unseen_chunked_sigmoid_is_interleaved() -> None:
    [cand] = chunk_interleave.propose(_request(UNSEEN_16.read_text()))
    assert (
        "const long long first = ((long long)blockIdx.x * blockDim.x * (CHUNK) + threadIdx.x);" in cand.source
    )
    assert "const long long idx = first + (long long)k * blockDim.x;" in cand.source


# ------------------------------------------------------------------------------------- CPU lane emulation

F = "float"
BLOCK = 64
EMULATED: dict[str, tuple[str, int, object]] = {
    # form: (kernel, chunk, arguments for n)
    "counter-base-var-idx-local": ("scale", 16, lambda n: (Buf(F, n), Buf(F, n), f"{n}LL")),
    "counter-inline-gid-local-int": ("relu4", 4, lambda n: (Buf(F, n), Buf(F, n), f"{n}")),
    "counter-chunk-first-break-size_t": (
        "axpy",
        8,
        lambda n: (Buf("double", n), Buf("double", n), "0.75", f"(size_t){n}"),
    ),
    "index-loop-with-bound": ("add", 5, lambda n: (Buf("int", n), Buf("int", n), Buf("int", n), f"{n}", "5")),
}


def test_every_positive_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_rewrite_matches_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    """Same launch, same stores: sizes below one tile, one tile plus a ragged tail, several tiles."""
    kernel, chunk, args = EMULATED[name]
    [cand] = chunk_interleave.propose(_request(FORMS[name]))
    cases = []
    for n in (37, BLOCK * chunk + 3, 3 * BLOCK * chunk - 1):
        grid = -(-n // (BLOCK * chunk))
        cases.append(Case(args(n), (grid, BLOCK), (grid, BLOCK), f"n={n}"))  # type: ignore[operator]
    assert_same(tmp_path, FORMS[name], cand.source, kernel, cases, rtol=0.0, atol=0.0)


def test_the_emulation_catches_an_interleave_without_the_tile_base(tmp_path: Path) -> None:
    """A wrong base (threadIdx.x alone, no block tile) computes other elements: the comparison fails."""
    from tests.rewrite.cuda_lanes import run

    source = FORMS["counter-base-var-idx-local"]
    [cand] = chunk_interleave.propose(_request(source))
    wrong = cand.source.replace("(long long)blockIdx.x * blockDim.x * (CHUNK) + ", "")
    n = 3 * BLOCK * 16 - 1
    case = Case((Buf(F, n), Buf(F, n), f"{n}LL"), (3, BLOCK), (3, BLOCK), "wrong")
    ok, _ = run(tmp_path, source, wrong, "scale", [case], rtol=0.0, atol=0.0)
    assert not ok


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    [cand] = chunk_interleave.propose(_request(FORMS[name]))
    assert_compiled(nvcc_compile({name: cand.source}, tmp_path))


def test_the_backend_names_the_recipe_once_in_its_reason() -> None:
    """The backend prefixes each recipe's reason with the recipe's name: the recipe must not repeat it."""
    from perfagent.rewrite import get_rewriter

    source = REFUSED["running-sum"][0]
    why = get_rewriter("recipes").applies(_request(source))
    assert why is not None and why.count("chunk-interleave") == 1, why
