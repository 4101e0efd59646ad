"""thread-map-swap (coalesce-access): positive and refused forms on real parse trees, nvcc builds of
every candidate, and a proof on small shapes that the re-gridded launch still covers every (row, col)
the original covered, each exactly once within bounds."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.recipes import RECIPES, thread_map_swap
from perfagent.workloads.expr import evaluate_int
from tests.rewrite.helpers import assert_compiled, nvcc_compile

SCALE = """
extern "C" __global__ void k(const float* src, float* dst, int rows, int cols)
{
    unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        size_t idx = (size_t)r * cols + c;
        dst[idx] = 2.0f * src[idx];
    }
}
"""

MATMUL = """
#define N_COLS 512
__global__ void mm(int M, int K, const float* __restrict__ A, const float* __restrict__ B, float* C)
{
    const int row = threadIdx.x + blockDim.x * blockIdx.x;
    const int col = threadIdx.y + blockDim.y * blockIdx.y;
    if (row < M && col < N_COLS) {
        float acc = 0.f;
        for (int k = 0; k < K; k++) acc = acc + A[row * K + k] * B[k * N_COLS + col];
        C[row * N_COLS + col] = acc;
    }
}
"""

STENCIL = """
extern "C" __global__ void st(const double* u, double* v, long long nx, long long ny)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (i >= ny || j >= nx) return;
    long long p = i * nx + j;
    v[p] = (i > 0 && i < ny - 1) ? 0.5 * (u[p - nx] + u[p + nx]) : u[p];
}
"""

DIRECT = """
extern "C" __global__ void d(float* out, const float* in, int h, int w)
{
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    int x = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < h && x < w) out[(size_t)y * w + x] = in[(size_t)y * w + x] + 1.0f;
}
"""

POSITIVE = {
    "scale-local-index": SCALE,
    "matmul-macro-width": MATMUL,
    "stencil-early-return": STENCIL,
    "direct-index": DIRECT,
}

REFUSED = {
    "already coalesced": (
        SCALE.replace(
            "unsigned r = blockIdx.x * blockDim.x + threadIdx.x",
            "unsigned r = blockIdx.y * blockDim.y + threadIdx.y",
        ).replace(
            "unsigned c = blockIdx.y * blockDim.y + threadIdx.y",
            "unsigned c = blockIdx.x * blockDim.x + threadIdx.x",
        ),
        "already the unit-stride index",
    ),
    "shared memory": (
        SCALE.replace("{\n    unsigned r", "{\n    __shared__ float t[32][32];\n    unsigned r"),
        "shared memory",
    ),
    "builtin used elsewhere": (
        SCALE.replace("dst[idx] = 2.0f * src[idx];", "dst[idx] = 2.0f * src[idx] + threadIdx.x;"),
        "outside the two index derivations",
    ),
    "no bounds check": (
        SCALE.replace("if (r < rows && c < cols)", "if (r < rows)"),
        "not both bounds-checked",
    ),
    "one-dimensional": (
        'extern "C" __global__ void v(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }',
        "one from the y thread coordinates",
    ),
    "y index never unit stride": (
        SCALE.replace("(size_t)r * cols + c", "(size_t)c * rows + r"),
        "already the unit-stride",
    ),
    "neither index unit stride": (
        SCALE.replace("(size_t)r * cols + c", "(size_t)r * cols * 2 + c * 2"),
        "never the unit-stride term",
    ),
    "transpose (both orders uncoalesced)": (
        """extern "C" __global__ void t(float* o, const float* in, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) o[(size_t)x * h + y] = in[(size_t)y * w + x];
}""",
        "already the unit-stride index",
    ),
}

LAUNCH = LaunchContext(
    grid=["ceil_div(rows, 32)", "ceil_div(cols, 8)"], block=[32, 8], params={"rows": 70, "cols": 45}
)


def _request(source: str, launch: LaunchContext = LAUNCH) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="coalesce-access", launch=launch)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_positive_forms_are_swapped(name: str) -> None:
    req = _request(POSITIVE[name])
    assert thread_map_swap.applies(req) is None
    cands = thread_map_swap.propose(req)
    assert cands and cands[0].launch is not None and cands[0].launch.block is None  # block kept
    src = cands[0].source
    assert src.count("threadIdx.x") == 1 and src.count("threadIdx.y") == 1
    # the derivation that fed the strided index now comes from y, and vice versa
    first = re.search(r"=\s*([^;]*threadIdx\.[xy][^;]*);", src)
    assert first is not None and "threadIdx.y" in first.group(1)
    assert len(cands) == 2 and cands[1].launch is not None and cands[1].launch.block == [8, 32]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, reason = REFUSED[name]
    why = thread_map_swap.applies(_request(source))
    assert why is not None and reason in why, why
    assert thread_map_swap.propose(_request(source)) == []


def test_one_dimensional_launch_is_refused() -> None:
    why = thread_map_swap.applies(_request(SCALE, LaunchContext(grid=["ceil_div(n, 256)"], block=[256])))
    assert why is not None and "2-D" in why


def test_registered_for_coalesce_access() -> None:
    assert "thread-map-swap" in RECIPES and RECIPES["thread-map-swap"].transforms == ("coalesce-access",)


def _cover(
    derivations: dict[str, str], grid: tuple[int, int], block: tuple[int, int], rows: int, cols: int
) -> list[tuple[int, int]]:
    """Every in-bounds (r, c) the launch produces, evaluating the two derivations per thread."""
    out = []
    for bx, by, tx, ty in itertools.product(range(grid[0]), range(grid[1]), range(block[0]), range(block[1])):
        ns = {
            "blockIdx": SimpleNamespace(x=bx, y=by),
            "blockDim": SimpleNamespace(x=block[0], y=block[1]),
            "threadIdx": SimpleNamespace(x=tx, y=ty),
        }
        r, c = (eval(derivations[v], ns) for v in ("r", "c"))  # noqa: S307 - test-only, our own text
        if r < rows and c < cols:
            out.append((r, c))
    return out


@pytest.mark.parametrize(("rows", "cols"), [(70, 45), (64, 64), (5, 300)])
def test_the_new_launch_covers_every_element_exactly_once(rows: int, cols: int) -> None:
    launch = LaunchContext(grid=LAUNCH.grid, block=LAUNCH.block, params={"rows": rows, "cols": cols})
    [kept, swapped] = thread_map_swap.propose(_request(SCALE, launch))

    def derivations(src: str) -> dict[str, str]:
        return {m.group(1): m.group(2) for m in re.finditer(r"unsigned (\w) = ([^;]+);", src)}

    def geometry(grid: list[object], block: list[object]) -> tuple[tuple[int, int], tuple[int, int]]:
        env = {"rows": rows, "cols": cols}
        g = tuple(evaluate_int(str(e), env) for e in grid)
        b = tuple(evaluate_int(str(e), env) for e in block)
        return (g[0], g[1]), (b[0], b[1])

    before = _cover(derivations(SCALE), *geometry(LAUNCH.grid, LAUNCH.block), rows, cols)
    assert sorted(before) == sorted(itertools.product(range(rows), range(cols)))
    for cand in (kept, swapped):
        assert cand.launch is not None
        g, b = geometry(cand.launch.grid or LAUNCH.grid, cand.launch.block or LAUNCH.block)
        after = _cover(derivations(cand.source), g, b, rows, cols)
        assert sorted(after) == sorted(before), "each element exactly once"


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    cands = thread_map_swap.propose(_request(POSITIVE[name]))
    assert_compiled(nvcc_compile({f"c{i}": c.source for i, c in enumerate(cands)}, tmp_path))
