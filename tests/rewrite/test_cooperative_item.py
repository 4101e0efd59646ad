"""cooperative-row on the other "one thread does a whole work item" forms (issue 23): a column per thread,
a gather copy, a 2-D plane (flattened nest), two passes per channel over N planes, a grid-stride item
loop, a pooling window with private running values, a row of outputs each with its own serial inner
reduction; and the forms it must refuse, with the line. Kernels written here, not the measuring set's.

Each rewrite is run against its original on the CPU emulators (32 real lanes per warp; real barriers per
block) and compiled with nvcc -arch=sm_90; ``test_gpu_times_the_item_forms`` verifies and times them on a
GPU (scripts/gpu_coop_items.sh runs it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import cooperative_row
from tests.rewrite import cuda_blocks
from tests.rewrite.cuda_lanes import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

F = "float"
FORMS: dict[str, str] = {
    "column-sum": """
extern "C" __global__ void colsum(const float* m, float* out, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float acc = 0.f;
    for (int r = 0; r < rows; ++r) acc += m[(size_t)r * cols + col];  // strided: the win is parallelism
    out[col] = acc;
}
""",
    "gather-copy": """
extern "C" __global__ void gather(const int* ids, const float* table, float* out, int rows, int cols)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= rows) return;
    const float* src = table + ids[t] * cols;
    float* dst = out + (size_t)t * cols;
    for (int d = 0; d < cols; ++d) dst[d] = src[d] * 2.f;
}
""",
    "plane-max-2d-nest": """
extern "C" __global__ void planemax(const float* x, float* out, int rows, int cols)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < rows) {
        float best = -1e30f;
        for (int h = 0; h < 3; ++h) {
            for (int w = 0; w < cols; ++w) {
                best = fmaxf(best, x[((size_t)p * 3 + h) * cols + w]);
            }
        }
        out[p] = best;
    }
}
""",
    "channel-mean-var-normalise": """
extern "C" __global__ void chnorm(const float* x, float* y, float* mean_out, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= rows) return;
    float sum = 0.0f;
    for (int n = 0; n < 2; ++n)
        for (int i = 0; i < cols; ++i)
            sum += x[((long long)n * rows + c) * cols + i];
    const float mean = sum / (2 * cols);
    float sq = 0.0f;
    for (int n = 0; n < 2; ++n)
        for (int i = 0; i < cols; ++i) {
            const float d = x[((long long)n * rows + c) * cols + i] - mean;
            sq += d * d;
        }
    const float inv = 1.0f / sqrtf(sq / (2 * cols) + 1e-5f);
    for (int n = 0; n < 2; ++n)
        for (int i = 0; i < cols; ++i) {
            const long long off = ((long long)n * rows + c) * cols + i;
            y[off] = (x[off] - mean) * inv;
        }
    mean_out[c] = mean;
}
""",
    "grid-stride-rows": """
extern "C" __global__ void rms_rows(const float* x, float* y, int rows, int cols)
{
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += blockDim.x * gridDim.x) {
        float ss = 0.f;
        for (int c = 0; c < cols; ++c) ss += x[(size_t)r * cols + c] * x[(size_t)r * cols + c];
        const float inv = 1.0f / sqrtf(ss / cols + 1e-6f);
        for (int c = 0; c < cols; ++c) y[(size_t)r * cols + c] = x[(size_t)r * cols + c] * inv;
    }
}
""",
    "grid-stride-macro-plane-mean": """
#define ITEM_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; \\
                             i < (n); i += blockDim.x * gridDim.x)

extern "C" __global__ void plane_mean(const float* x, float* out, int rows, int cols)
{
    ITEM_LOOP(p, rows)
    {
        const float* plane = x + (size_t)p * 2 * cols;
        float s = 0;
        for (int h = 0; h < 2; ++h) {
            for (int w = 0; w < cols; ++w) {
                s += plane[h * cols + w];
            }
        }
        out[p] = s / (2 * cols);
    }
}
""",
    "pool-window-argmax": """
extern "C" __global__ void pool(const float* x, float* out, int* arg, int rows, int cols)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= rows) return;
    const float* plane = x + (size_t)p * 4 * cols;
    for (int ph = 0; ph < 2; ++ph) {
        for (int pw = 0; pw < cols / 2; ++pw) {
            int h0 = ph * 2 - 1;
            h0 = max(h0, 0);
            float m = -1e30f;
            int at = -1;
            for (int h = h0; h < ph * 2 + 2; ++h)
                for (int w = pw * 2; w < pw * 2 + 2; ++w) {
                    const int k = h * cols + w;
                    if (plane[k] > m) { m = plane[k]; at = k; }
                }
            out[(size_t)p * cols + ph * (cols / 2) + pw] = m;
            arg[(size_t)p * cols + ph * (cols / 2) + pw] = at;
        }
    }
}
""",
    "outputs-with-serial-inner-sums": """
extern "C" __global__ void rowmix(const float* w, const float* b, float* out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    for (int n = 0; n < cols; ++n) {
        float acc = 0.f;
        for (int j = 0; j < 4; ++j) acc += w[r * 4 + j] * b[j * cols + n];
        out[(size_t)r * cols + n] = acc;
    }
}
""",
}

REFUSED: dict[str, tuple[str, str]] = {
    "outer counter not scaled by the inner bound": (
        FORMS["channel-mean-var-normalise"].replace(
            "const long long off = ((long long)n * rows + c) * cols + i;",
            "const long long off = (long long)c * cols + n + i;",
        ),
        "names the outer counter n outside a product with the inner bound",
    ),
    "item reads what another iteration stores": (
        FORMS["gather-copy"].replace("dst[d] = src[d] * 2.f;", "dst[d] = src[d] + dst[0];"),
        "lanes would share its elements",
    ),
    "gathered index rewritten": (
        FORMS["gather-copy"]
        .replace("const int* ids", "int* ids")
        .replace("dst[d] = src[d] * 2.f;", "dst[d] = src[d] * 2.f;\n    ids[t] = 0;"),
        "to place a row and stored on line",
    ),
    "running value (a scan) in a nest": (
        """
extern "C" __global__ void run(const float* x, float* y, int rows, int cols)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= rows) return;
    float s = 0.f;
    for (int h = 0; h < 2; ++h)
        for (int w = 0; w < cols; ++w) { s += x[(p * 2 + h) * cols + w]; y[(p * 2 + h) * cols + w] = s; }
}
""",
        "loop-carried dependency",
    ),
    "return inside an iteration": (
        FORMS["outputs-with-serial-inner-sums"].replace(
            "out[(size_t)r * cols + n] = acc;", "if (acc > 0.f) return; out[(size_t)r * cols + n] = acc;"
        ),
        "holds a return statement",
    ),
}

Args = Callable[[int, int], tuple[Buf | str, ...]]
EMULATED: dict[str, tuple[str, Args]] = {
    "column-sum": ("colsum", lambda r, c: (Buf(F, r * c), Buf(F, c), f"{r}", f"{c}")),
    "gather-copy": (
        "gather",
        lambda r, c: (Buf("int", r, "mask"), Buf(F, 2 * c), Buf(F, r * c), f"{r}", f"{c}"),
    ),
    "plane-max-2d-nest": ("planemax", lambda r, c: (Buf(F, 3 * r * c), Buf(F, r), f"{r}", f"{c}")),
    "channel-mean-var-normalise": (
        "chnorm",
        lambda r, c: (Buf(F, 2 * r * c), Buf(F, 2 * r * c), Buf(F, r), f"{r}", f"{c}"),
    ),
    "grid-stride-macro-plane-mean": (
        "plane_mean",
        lambda r, c: (Buf(F, 2 * r * c), Buf(F, r), f"{r}", f"{c}"),
    ),
    "grid-stride-rows": ("rms_rows", lambda r, c: (Buf(F, r * c), Buf(F, r * c), f"{r}", f"{c}")),
    "pool-window-argmax": (
        "pool",
        lambda r, c: (Buf(F, 4 * r * c), Buf(F, r * c), Buf("int", r * c), f"{r}", f"{c}"),
    ),
    "outputs-with-serial-inner-sums": (
        "rowmix",
        lambda r, c: (Buf(F, 4 * r), Buf(F, 4 * c), Buf(F, r * c), f"{r}", f"{c}"),
    ),
}
SHAPES = [(3, 2), (70, 33), (70, 64)]
"""items x their length: items shorter than a warp, lengths not a multiple of 32, a partial block."""
BLOCK = 64
LAUNCH = LaunchContext(grid=["ceil_div(rows, 64)"], block=[64], params={"rows": 1000})
STRIDE_GRID = 1
"""The grid-stride kernel runs on one block of 64 threads: each thread (warp, block) walks several items."""


def _request(source: str) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="cooperative-row", launch=LAUNCH)


def _variants(name: str) -> tuple[Candidate, Candidate]:
    cands = cooperative_row.propose(_request(FORMS[name]))
    warp = next(c for c in cands if c.parameters.get("rows_per_block") == "block / 32")
    block = next(c for c in cands if c.parameters.get("rows_per_block") == 1)
    return warp, block


def _grid(name: str, rows: int) -> int:
    return STRIDE_GRID if name.startswith("grid-stride") else -(-rows // BLOCK)


def test_every_form_is_emulated() -> None:
    assert sorted(EMULATED) == sorted(FORMS)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms_apply_with_warp_and_block_variants(name: str) -> None:
    warp, block = _variants(name)
    assert "coop_lane = threadIdx.x % 32" in warp.source and "coop_tid = threadIdx.x" in block.source
    assert warp.launch is not None and warp.launch.grid == ["32 * (ceil_div(rows, 64))"]
    assert block.launch is not None and block.launch.grid == ["(ceil_div(rows, 64)) * (64)"]
    if "nest" in name or "channel" in name or "pool" in name or "plane" in name:
        assert "coop_flat" in warp.source  # the plane (or N planes) split as one long row


def test_the_sweep_retunes_both_variants() -> None:
    request = _request(FORMS["channel-mean-var-normalise"]).model_copy(update={"max_candidates": 16})
    cands = cooperative_row.RECIPE.batch(request)  # type: ignore[misc]
    retuned = [c for c in cands if "retuned" in c.parameters]
    assert {c.parameters["rows_per_block"] for c in retuned} == {"block / 32", 1}
    assert any(c.launch is not None and c.launch.block == [1024] for c in retuned)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = cooperative_row.applies(_request(source))
    assert why is not None and reason in why, why
    assert "line" in why


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_warp_per_item_matches_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    kernel, args = EMULATED[name]
    warp, _ = _variants(name)
    cases = [
        Case(args(r, c), (_grid(name, r), BLOCK), (32 * _grid(name, r), BLOCK), f"{r}x{c}") for r, c in SHAPES
    ]
    assert_same(tmp_path, FORMS[name], warp.source, kernel, cases, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_block_per_item_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    kernel, args = EMULATED[name]
    _, block = _variants(name)

    def blocks_args(rows: int, cols: int) -> tuple[cuda_blocks.Buf | str, ...]:
        return tuple(cuda_blocks.Buf(a.ctype, a.size) if isinstance(a, Buf) else a for a in args(rows, cols))

    cases = [
        cuda_blocks.Case(
            blocks_args(r, c),
            ((_grid(name, r), 1), (BLOCK, 1)),
            ((_grid(name, r) * BLOCK, 1), (BLOCK, 1)),
            f"{r}x{c}",
        )
        for r, c in SHAPES
        if name != "gather-copy"  # the block emulator fills every buffer at random: ids would be no rows
    ]
    if cases:
        cuda_blocks.assert_same(tmp_path, FORMS[name], block.source, kernel, cases, rtol=2e-5, atol=2e-5)


def test_candidates_compile_for_sm_90(tmp_path: Path) -> None:
    sources = {}
    for name in FORMS:
        for cand in cooperative_row.propose(_request(FORMS[name])):
            sources[f"{name}-{cand.parameters['rows_per_block']}".replace(" / ", "-per-")] = cand.source
    assert len(sources) > 2 * len(FORMS)  # the map passes also have a 16-lanes-per-item variant
    assert_compiled(nvcc_compile(sources, tmp_path))


PART_WARP_FORMS = [
    n
    for n in sorted(EMULATED)
    if any(
        c.parameters.get("rows_per_block") == "block / 16"
        for c in cooperative_row.propose(_request(FORMS[n]))
    )
]


def test_the_map_forms_get_a_part_warp_variant() -> None:
    assert PART_WARP_FORMS == ["gather-copy", "outputs-with-serial-inner-sums", "pool-window-argmax"]


@pytest.mark.parametrize("name", PART_WARP_FORMS)
def test_sixteen_lanes_per_item_match_the_original_lane_by_lane(name: str, tmp_path: Path) -> None:
    kernel, args = EMULATED[name]
    part = next(
        c
        for c in cooperative_row.propose(_request(FORMS[name]))
        if c.parameters.get("rows_per_block") == "block / 16"
    )
    cases = [
        Case(args(r, c), (_grid(name, r), BLOCK), (16 * _grid(name, r), BLOCK), f"{r}x{c}") for r, c in SHAPES
    ]
    assert_same(tmp_path, FORMS[name], part.source, kernel, cases, rtol=2e-5, atol=2e-5)
