"""cooperative-row on items whose passes update an output row atomically (issue 23): an edge scatter-add
(early return), an ``index_add`` written as ``p + index`` on ints, a segment sum (a reduction, then one
atomic per item that lane 0 makes), a grid-stride scatter-max through a row pointer, and a bucket sum
whose destination row is computed; and the forms it must refuse (lanes of one item that could update one
element, an old value used, a non-commutative atomic, the buffer read too, two kinds of update). Kernels
written here, not the measuring set's.

Each rewrite runs against its original on the CPU emulators (lanes are real threads whose atomics really
race; the block variant under the block emulator) and compiles with nvcc -arch=sm_90.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import cooperative_row
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_lanes import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

FORMS: dict[str, str] = {
    "edge-scatter-add-early-return": """
extern "C" __global__ void edge_scatter(const float* x, const int* from, const int* to, float* acc,
                                        int n_items, int width)
{
    const int k = threadIdx.x + blockIdx.x * blockDim.x;
    if (k >= n_items) return;
    const int a = from[k];
    const int b = to[k];
    for (int c = 0; c < width; c++)
        atomicAdd(&acc[b * width + c], 0.5f * x[a * width + c]);
}
""",
    "index-add-int-pointer-plus": """
__global__ void index_add_rows(const int* __restrict__ src, const int* __restrict__ index, int* dst,
                               int n_items, int width)
{
    int item = blockIdx.x * blockDim.x + threadIdx.x;
    if (item < n_items) {
        const long long base = (long long)index[item] * width;
        for (int j = 0; j < width; ++j) {
            int v = src[(long long)item * width + j];
            if (v != 0) atomicAdd(dst + base + j, v);
        }
    }
}
""",
    "segment-sum-then-one-atomic": """
extern "C" __global__ void segment_sum(const float* vals, const int* segment_of, float* seg_total,
                                       int n_items, int width)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n_items) return;
    float s = 0.0f;
    for (int j = 0; j < width; ++j) s += vals[r * width + j];
    atomicAdd(&seg_total[segment_of[r]], s);
}
""",
    "grid-stride-scatter-max-row-pointer": """
extern "C" __global__ void scatter_max(const int* v, const int* rows, int* best, int n_items, int width)
{
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n_items; t += blockDim.x * gridDim.x) {
        int* out_row = best + rows[t] * width;
        for (int c = 0; c < width; ++c) atomicMax(&out_row[c], v[t * width + c]);
    }
}
""",
    "bucket-sum-computed-row-unsigned": """
extern "C" __global__ void bucket_sum(const unsigned int* w, unsigned int* buckets, int n_items, int width)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_items) {
        const unsigned int row = (i * 7u) % 5u;
        for (int c = 0; c < width; ++c) atomicAdd(&buckets[row * width + c], w[i * width + c] & 255u);
    }
}
""",
}

REFUSED: dict[str, tuple[str, str]] = {
    "lanes could update one element (a histogram inside the item)": (
        FORMS["bucket-sum-computed-row-unsigned"].replace(
            "atomicAdd(&buckets[row * width + c], w[i * width + c] & 255u)",
            "atomicAdd(&buckets[w[i * width + c] & 3u], 1u)",
        ),
        "its address is not offset + c",
    ),
    "old value used": (
        FORMS["edge-scatter-add-early-return"].replace(
            "atomicAdd(&acc[b * width + c], 0.5f * x[a * width + c]);",
            "{ float old = atomicAdd(&acc[b * width + c], 0.5f * x[a * width + c]); (void)old; }",
        ),
        "the result (the old value) of atomicAdd on line",
    ),
    "not commutative": (
        FORMS["grid-stride-scatter-max-row-pointer"].replace("atomicMax(", "atomicExch("),
        "atomicExch on line 6 is not a commutative atomic",
    ),
    "buffer read as well": (
        FORMS["edge-scatter-add-early-return"].replace(
            "0.5f * x[a * width + c]", "0.5f * x[a * width + c] + acc[a * width + c]"
        ),
        "is updated atomically (line 10) and reached as acc[a * width + c]",
    ),
    "buffer read inside its own address": (
        FORMS["segment-sum-then-one-atomic"].replace(
            "&seg_total[segment_of[r]]", "&seg_total[(int)seg_total[0] & 1]"
        ),
        "reached as seg_total[0] on line 9",
    ),
    "two kinds of update": (
        FORMS["grid-stride-scatter-max-row-pointer"].replace(
            "atomicMax(&out_row[c], v[t * width + c]);",
            "{ atomicMax(&out_row[c], v[t * width + c]); atomicMin(&out_row[c], 100); }",
        ),
        "takes atomicMax (line 6) and atomicMin (line 6)",
    ),
    "address through a reassigned name": (
        FORMS["edge-scatter-add-early-return"].replace(
            "for (int c = 0; c < width; c++)\n        atomicAdd(&acc[b * width + c]",
            "int o = b * width;\n    o += 1;\n    for (int c = 0; c < width; c++)\n        atomicAdd(&acc[o + c]",
        ),
        "reached through o, which is reassigned",
    ),
}

INT, F, U = "int", "float", "unsigned int"
Args = Callable[[int, int], tuple[Buf | str, ...]]
EMULATED: dict[str, tuple[str, Args]] = {
    # index buffers are filled with 0/1 ('mask'): every destination row is hit by many items (real races)
    "edge-scatter-add-early-return": (
        "edge_scatter",
        lambda n, w: (Buf(F, 2 * w), Buf(INT, n, "mask"), Buf(INT, n, "mask"), Buf(F, 2 * w), f"{n}", f"{w}"),
    ),
    "index-add-int-pointer-plus": (
        "index_add_rows",
        lambda n, w: (Buf(INT, n * w), Buf(INT, n, "mask"), Buf(INT, 2 * w), f"{n}", f"{w}"),
    ),
    "segment-sum-then-one-atomic": (
        "segment_sum",
        lambda n, w: (Buf(F, n * w), Buf(INT, n, "mask"), Buf(F, 2), f"{n}", f"{w}"),
    ),
    "grid-stride-scatter-max-row-pointer": (
        "scatter_max",
        lambda n, w: (Buf(INT, n * w), Buf(INT, n, "mask"), Buf(INT, 2 * w), f"{n}", f"{w}"),
    ),
    "bucket-sum-computed-row-unsigned": (
        "bucket_sum",
        lambda n, w: (Buf(U, n * w), Buf(U, 5 * w), f"{n}", f"{w}"),
    ),
}
SHAPES = [(3, 2), (70, 33), (45, 64)]
"""items x row length: rows shorter than the lanes, lengths not a multiple of 32, a partial block."""
BLOCK = 64
LAUNCH = LaunchContext(grid=["ceil_div(n_items, 64)"], block=[64], params={"n_items": 1000})


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=LAUNCH)


def _variant(name: str, rows_per_block: object) -> Candidate:
    cands = cooperative_row.propose(_request(FORMS[name]).model_copy(update={"max_candidates": 8}))
    return next(c for c in cands if c.parameters.get("rows_per_block") == rows_per_block)


def _grid(name: str, items: int) -> int:
    return 1 if name.startswith("grid-stride") else -(-items // BLOCK)


def test_every_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms_apply_and_keep_their_atomics(name: str) -> None:
    why = cooperative_row.applies(_request(FORMS[name]))
    assert why is None, why
    warp = _variant(name, "block / 32")
    assert "coop_lane = threadIdx.x % 32" in warp.source and "+= 32)" in warp.source
    assert warp.source.count("atomic") == FORMS[name].count("atomic")
    assert warp.launch is not None and warp.launch.grid == ["32 * (ceil_div(n_items, 64))"]


def test_the_scalar_atomic_is_made_by_lane_0_after_the_butterfly() -> None:
    source = _variant("segment-sum-then-one-atomic", "block / 32").source
    assert "__shfl_xor_sync" in source
    assert "if (coop_lane == 0) atomicAdd(&seg_total[segment_of[r]], s);" in source


def test_passes_without_reductions_get_a_part_warp_variant() -> None:
    part = _variant("edge-scatter-add-early-return", "block / 16")
    assert "threadIdx.x % 16" in part.source and "c += 16" in part.source
    assert part.launch is not None and part.launch.grid == ["16 * (ceil_div(n_items, 64))"]
    reduced = cooperative_row.propose(_request(FORMS["segment-sum-then-one-atomic"]))
    assert all(c.parameters.get("rows_per_block") != "block / 16" for c in reduced)  # butterflies need 32


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = cooperative_row.applies(_request(source))
    assert why is not None and reason in why, why
    assert "line" in why


# a reduction is shared by whole warps only: no part-warp variant of the segment sum
LANE_CASES = [
    (n, w) for n in sorted(EMULATED) for w in (32, 16) if (n, w) != ("segment-sum-then-one-atomic", 16)
]


@pytest.mark.parametrize(("name", "width"), LANE_CASES)
def test_lanes_per_item_match_the_original(name: str, width: int, tmp_path: Path) -> None:
    kernel, args = EMULATED[name]
    cand = _variant(name, f"block / {width}")
    cases = [
        Case(args(n, w), (_grid(name, n), BLOCK), (width * _grid(name, n), BLOCK), f"{n}x{w}")
        for n, w in SHAPES
    ]
    assert_same(tmp_path, FORMS[name], cand.source, kernel, cases, rtol=1e-5, atol=1e-5)


def test_block_per_item_matches_the_original_block_by_block(tmp_path: Path) -> None:
    """The form whose destination is computed (the block emulator fills every buffer at random, so no
    index buffer): a block of threads shares each item."""
    name = "bucket-sum-computed-row-unsigned"
    block = _variant(name, 1)
    cases = [
        cuda_blocks.Case(
            (cuda_blocks.Buf(U, n * w), cuda_blocks.Buf(U, 5 * w), f"{n}", f"{w}"),
            ((-(-n // BLOCK), 1), (BLOCK, 1)),
            ((-(-n // BLOCK) * BLOCK, 1), (BLOCK, 1)),
            f"{n}x{w}",
        )
        for n, w in SHAPES
    ]
    cuda_blocks.assert_same(tmp_path, FORMS[name], block.source, "bucket_sum", cases, rtol=0.0, atol=0.0)


def test_the_emulation_catches_lanes_that_share_an_element(tmp_path: Path) -> None:
    """A rewrite whose lanes all start at element 0 (a dropped lane offset) updates each element 32 times."""
    name = "edge-scatter-add-early-return"
    kernel, args = EMULATED[name]
    wrong = _variant(name, "block / 32").source.replace("int c = coop_lane;", "int c = 0;")
    cases = [Case(args(45, 64), (_grid(name, 45), BLOCK), (32 * _grid(name, 45), BLOCK))]
    from tests.rewrite.cuda_lanes import run

    ok, _ = run(tmp_path, FORMS[name], wrong, kernel, cases, rtol=1e-5, atol=1e-5)
    assert not ok


def test_candidates_compile_for_sm_90(tmp_path: Path) -> None:
    sources = {}
    for name in FORMS:
        for cand in cooperative_row.propose(_request(FORMS[name]).model_copy(update={"max_candidates": 8})):
            sources[f"{name}-{cand.parameters['rows_per_block']}".replace(" / ", "-per-")] = cand.source
    assert len(sources) >= 2 * len(FORMS)
    assert_compiled(nvcc_compile(sources, tmp_path))
