"""smem-pad-index (smem-padding): 1-D shared arrays get one unused word after every 32 (``i + (i >> 5)``).

Own forms (issue 23: not the measuring set's kernel): an interleaved-addressing tree sum of ints
(``2 * s * tid``), a flattened 32 x 32 float tile written by rows and read by columns, and a Blelloch
up-sweep on a ``constexpr``-sized array. Each rewrite runs against its original on the
block-synchronous CPU emulator and compiles with nvcc; refused forms name why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import RECIPES, recipes_for, smem_pad_index
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

TREE_SUM_INT = """
__global__ void tree_sum(const int *in, int *out) {
    __shared__ int sdata[128];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    for (unsigned s = 1; s < 128; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < 128) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"""
FLAT_TILE = """
#define T 32
__global__ void flat_transpose(const float *in, float *out) {
    __shared__ float tile[T * T];
    for (int r = 0; r < T; ++r) tile[r * T + threadIdx.x] = in[(blockIdx.x * T + r) * T + threadIdx.x];
    __syncthreads();
    for (int r = 0; r < T; ++r) out[(blockIdx.x * T + r) * T + threadIdx.x] = tile[threadIdx.x * T + r];
}
"""
UPSWEEP = """
constexpr int N = 64;
__global__ void upsweep(float *data) {
    __shared__ float buf[N];
    int t = threadIdx.x;
    buf[2 * t] = data[blockIdx.x * N + 2 * t];
    buf[2 * t + 1] = data[blockIdx.x * N + 2 * t + 1];
    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1;
            int bi = offset * (2 * t + 2) - 1;
            buf[bi] += buf[ai];
        }
        offset *= 2;
    }
    __syncthreads();
    data[blockIdx.x * N + 2 * t] = buf[2 * t];
    data[blockIdx.x * N + 2 * t + 1] = buf[2 * t + 1];
}
"""

FORMS: dict[str, tuple[str, str, Case]] = {
    "tree-sum-int": (TREE_SUM_INT, "tree_sum", Case((Buf("int", 3 * 128), Buf("int", 3)), ((3,), (128, 1)), ((3,), (128, 1)))),
    "flat-tile-float": (FLAT_TILE, "flat_transpose", Case((Buf("float", 2 * 1024), Buf("float", 2 * 1024)), ((2,), (32, 1)), ((2,), (32, 1)))),
    "upsweep-constexpr": (UPSWEEP, "upsweep", Case((Buf("float", 2 * 64),), ((2,), (32, 1)), ((2,), (32, 1)))),
}  # fmt: skip

REFUSED: dict[str, tuple[str, str]] = {
    "index-with-a-side-effect": (TREE_SUM_INT.replace("sdata[tid] =", "sdata[tid++] ="), "has a side effect"),
    "decayed-to-a-pointer": (
        TREE_SUM_INT.replace("    unsigned tid", "    int *p = sdata;\n    unsigned tid"),
        "used other than as sdata[i]",
    ),
    "eight-byte-elements": (
        FLAT_TILE.replace("__shared__ float", "__shared__ double"),
        "has double elements",
    ),
    "two-d-array": (
        FLAT_TILE.replace("tile[T * T]", "tile[T][T]")
        .replace("tile[r * T + threadIdx.x]", "tile[r][threadIdx.x]")
        .replace("tile[threadIdx.x * T + r]", "tile[threadIdx.x][r]"),
        "is not 1-D",
    ),
    "nested-shared-index": (
        TREE_SUM_INT.replace("= sdata[0]", "= sdata[sdata[0] & 127]"),
        "reads a shared array",
    ),
}


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="smem-padding")


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms_offset_every_access(name: str) -> None:
    source = FORMS[name][0]
    assert smem_pad_index.applies(_request(source)) is None
    [cand] = smem_pad_index.propose(_request(source))
    assert ">> 5)]" in cand.source and cand.launch is None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    reason = smem_pad_index.applies(_request(source))
    assert reason is not None and why in reason, reason


def test_registered_for_smem_padding_and_in_the_catalog() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["smem-pad-index"] is smem_pad_index.RECIPE
    assert smem_pad_index.RECIPE in recipes_for("smem-padding", "cuda")
    assert "smem-pad-index" in catalog()["smem-padding"].recipes


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, kernel, case = FORMS[name]
    [cand] = smem_pad_index.propose(_request(source))
    assert_same(tmp_path, source, cand.source, kernel, [case], rtol=0.0, atol=0.0)


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        n.replace("-", "_"): smem_pad_index.propose(_request(s))[0].source for n, (s, _, _) in FORMS.items()
    }
    assert_compiled(nvcc_compile(sources, tmp_path))


def test_unit_stride_arrays_are_refused() -> None:
    """A Kogge-Stone section scan reads ``s[t - stride]``: lanes are one word apart, nothing to pad."""
    kogge = """
__global__ void ks(const float *in, float *out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    for (int stride = 1; stride < 256; stride *= 2) {
        __syncthreads();
        float v = t >= stride ? s[t - stride] : 0.0f;
        __syncthreads();
        s[t] += v;
    }
    out[blockIdx.x * 256 + t] = s[t];
}
"""
    reason = smem_pad_index.applies(_request(kogge))
    assert reason is not None and "unit stride" in reason, reason
