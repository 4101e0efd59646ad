"""transpose-tile (coalesce-access): permuting copies staged through a 32 x 33 shared tile.

Positive forms: the held-out unseen/17 (NCHW -> NHWC) read from examples/ as it is, its inverse with
a braced guard, and a plain 2-D transpose without a batch index; each rewrite runs against its
original on the block-synchronous CPU emulator (tests/rewrite/cuda_blocks.py: real barriers, guard
words around every buffer) with extents that are not multiples of the tile, and compiles with nvcc.
Refused forms name why.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, recipes_for, transpose_tile
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

ROOT = Path(__file__).resolve().parents[2]
UNSEEN_17 = ROOT / "examples" / "unseen" / "17_nchw_to_nhwc_transposed_write"


def _spec(grid: list[str], block: list[object], args: list[tuple[str, str | None]]) -> LaunchContext:
    return launch_context({"grid": grid, "block": block, "args": [{"name": n, "value": v} for n, v in args]})


def _unseen_17() -> tuple[str, LaunchContext]:
    spec = tomllib.loads(next(UNSEEN_17.glob("*.launch.toml")).read_text())
    return (UNSEEN_17 / "slow.cu").read_text(), launch_context(spec)


NHWC_TO_NCHW = """
__global__ void nhwc_to_nchw(const float *in, float *out, int C, int HW) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int p = blockIdx.y;
    const int n = blockIdx.z;
    if (c < C) {
        out[((size_t)n * C + c) * HW + p] = in[((size_t)n * HW + p) * C + c];
    }
}
"""
NHWC_SPEC = _spec(
    ["ceil_div(C, 256)", "HW", "N"], [256], [("in", None), ("out", None), ("C", "C"), ("HW", "HW")]
)

TRANSPOSE_2D = """
__global__ void transpose_rows(const double *in, double *out, long long rows, long long cols) {
    long long col = threadIdx.x + (long long)blockIdx.x * blockDim.x;
    long long row = blockIdx.y;
    if (col < cols) out[col * rows + row] = in[row * cols + col];
}
"""
T2D_SPEC = _spec(
    ["ceil_div(cols, 128)", "rows"], [128], [("in", None), ("out", None), ("rows", "rows"), ("cols", "cols")]
)

NAIVE_2D_THREADS = """
__global__ void transposeNaive(float *odata, const float *idata, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) odata[x * height + y] = idata[y * width + x];
}
"""
NAIVE_SPEC = _spec(
    ["ceil_div(width, 16)", "ceil_div(height, 16)"],
    [16, 16],
    [("odata", None), ("idata", None), ("width", "width"), ("height", "height")],
)

EX01 = ROOT / "examples" / "cuda" / "01_transpose_naive"


def _ex01() -> tuple[str, LaunchContext]:
    return (EX01 / "slow.cu").read_text(), launch_context(
        tomllib.loads(next(EX01.glob("*.launch.toml")).read_text())
    )


ROWS_16 = """
#define TILE 16
__global__ void transpose16(double *out, const double *in, int n) {
    int x = TILE * blockIdx.x + threadIdx.x;
    int y = threadIdx.y + blockIdx.y * TILE;
    for (int r = 0; r < TILE; r += 4)
        out[x * n + (r + y)] = in[(y + r) * n + x];
}
"""
ROWS_16_SPEC = launch_context(
    {
        "grid": ["n / TILE", "n / TILE"],
        "block": ["TILE", "4"],
        "args": [{"name": "out"}, {"name": "in"}, {"name": "n", "value": "n"}],
    }
)

NAIVE_BLOCK_SIZE = """
#define BLOCK_SIZE 16
__global__ void transpose_bs(const float *A, float *B, int M, int N) {
    const int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    const int row = BLOCK_SIZE * blockIdx.y + threadIdx.y;
    if (row < M && col < N)
        B[col * M + row] = A[row * N + col];
}
"""
NAIVE_BS_SPEC = _spec(
    ["ceil_div(N, BLOCK_SIZE)", "ceil_div(M, BLOCK_SIZE)"],
    ["BLOCK_SIZE", "BLOCK_SIZE"],
    [("A", None), ("B", None), ("M", "M"), ("N", "N")],
)

FORMS: dict[str, tuple[str, LaunchContext]] = {
    "naive-block-size-macro": (NAIVE_BLOCK_SIZE, NAIVE_BS_SPEC),
    "examples-01-row-steps": _ex01(),
    "row-steps-unguarded-literal-rows": (ROWS_16, ROWS_16_SPEC),
    "naive-2d-threads": (NAIVE_2D_THREADS, NAIVE_SPEC),
    "unseen-17-nchw-to-nhwc": _unseen_17(),
    "nhwc-to-nchw-braced-guard": (NHWC_TO_NCHW, NHWC_SPEC),
    "transpose-2d-long-long": (TRANSPOSE_2D, T2D_SPEC),
}

REFUSED: dict[str, tuple[str, LaunchContext, str]] = {
    "already-coalesced-copy": (
        TRANSPOSE_2D.replace("out[col * rows + row]", "out[row * cols + col]"),
        T2D_SPEC,
        "the copy is coalesced already",
    ),
    "read-is-the-strided-side": (
        TRANSPOSE_2D.replace(
            "out[col * rows + row] = in[row * cols + col]", "out[row * cols + col] = in[col * rows + row]"
        ),
        T2D_SPEC,
        "is not a unit-stride index of the read",
    ),
    "no-guard": (
        TRANSPOSE_2D.replace("if (col < cols) ", ""),
        T2D_SPEC,
        "col is not bounds-checked",
    ),
    "not-a-plain-copy": (
        TRANSPOSE_2D.replace("= in[row * cols + col]", "= 2.0 * in[row * cols + col]"),
        T2D_SPEC,
        "not a plain copy",
    ),
    "grid-y-not-an-argument": (
        TRANSPOSE_2D,
        _spec(
            ["ceil_div(cols, 128)", "rows / 2"],
            [128],
            [("in", None), ("out", None), ("rows", "rows"), ("cols", "cols")],
        ),
        "the grid's y extent (rows / 2) is not one of the kernel's arguments",
    ),
    "two-d-block-unguarded-row": (
        TRANSPOSE_2D.replace(
            "long long row = blockIdx.y;", "long long row = blockIdx.y * blockDim.y + threadIdx.y;"
        ),
        T2D_SPEC,
        "row is not bounds-checked",
    ),
    "a-second-y-index": (
        NAIVE_2D_THREADS.replace(
            "int y = blockIdx.y * blockDim.y + threadIdx.y;",
            "int y = blockIdx.y * blockDim.y + threadIdx.y;\n    int y2 = blockIdx.y;",
        ),
        NAIVE_SPEC,
        "two indices from the y coordinates",
    ),
    "scaled-index-not-the-block": (
        NAIVE_BLOCK_SIZE.replace("blockIdx.x * BLOCK_SIZE", "blockIdx.x * 32"),
        NAIVE_BS_SPEC,
        "is not a thread index of the copy",
    ),
    "guard-on-another-name": (
        NAIVE_2D_THREADS.replace(
            "if (x < width && y < height)", "if (x < width && y < height && height < width)"
        ),
        NAIVE_SPEC,
        "the guard bounds height, not only the copy's indices",
    ),
    "thread-y-unguarded": (
        NAIVE_2D_THREADS.replace("if (x < width && y < height)", "if (x < width)"),
        NAIVE_SPEC,
        "y is not bounds-checked",
    ),
    "row-steps-block-mismatch": (
        ROWS_16,
        launch_context({"grid": ["n / TILE", "n / TILE"], "block": ["TILE", "8"], "args": []}),
        "the launch block",
    ),
    "row-steps-y-alone-in-guard": (
        ROWS_16.replace("        out[x", "        if (y < n) out[x"),
        ROWS_16_SPEC,
        "y and r are used other than as 'y + r'",
    ),
    "row-steps-not-a-multiple": (
        ROWS_16.replace("r += 4", "r += 6"),
        launch_context({"grid": ["n / TILE", "n / TILE"], "block": ["TILE", "6"], "args": []}),
        "TILE is not a known multiple of 6",
    ),
    "shared-memory": (
        TRANSPOSE_2D.replace("{\n", "{\n    __shared__ double s[32];\n", 1),
        T2D_SPEC,
        "already uses shared memory",
    ),
}


def _request(source: str, launch: LaunchContext) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="coalesce-access", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(*FORMS[name])
    assert transpose_tile.applies(req) is None, transpose_tile.applies(req)
    [cand] = transpose_tile.propose(req)
    assert "__shared__" in cand.source and "__syncthreads();" in cand.source
    if name.startswith(("examples-01", "row-steps")):  # the cuda-samples form keeps its tile and launch
        assert cand.launch is None and "perfagent_tile[threadIdx.x][threadIdx.y + perfagent_j]" in cand.source
        return
    assert "[32][33]" in cand.source
    assert cand.launch is not None and cand.launch.block == [32, 8]
    grid = cand.launch.grid or []
    assert str(grid[0]).startswith("ceil_div(") and str(grid[1]).endswith(", 32)")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, launch, why = REFUSED[name]
    reason = transpose_tile.applies(_request(source, launch))
    assert reason is not None and not reason.startswith("transpose-tile") and why in reason, reason
    assert transpose_tile.propose(_request(source, launch)) == []


def test_registered_for_coalesce_access_and_in_the_catalog() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["transpose-tile"] is transpose_tile.RECIPE
    assert transpose_tile.RECIPE in recipes_for("coalesce-access", "cuda")
    assert "transpose-tile" in catalog()["coalesce-access"].recipes


def test_the_unseen_permute_keeps_its_batch_grid() -> None:
    [cand] = transpose_tile.propose(_request(*FORMS["unseen-17-nchw-to-nhwc"]))
    assert cand.launch is not None and cand.launch.grid == ["ceil_div(HW, 32)", "ceil_div(C, 32)", "N"]


# ------------------------------------------------------------------------------ block-synchronous emulation

F = "float"


def _cases(name: str) -> list[Case]:
    out: list[Case] = []
    if name == "examples-01-row-steps":
        for w, h in ((37, 5), (70, 33)):
            args = (Buf(F, w * h), Buf(F, w * h), f"{w}", f"{h}")
            grid = (-(-w // 32), -(-h // 32))
            out.append(Case(args, (grid, (32, 8)), (grid, (32, 8)), f"{w}x{h}"))
        return out
    if name == "row-steps-unguarded-literal-rows":
        n = 48
        args16 = (Buf("double", n * n), Buf("double", n * n), f"{n}")
        return [Case(args16, ((3, 3), (16, 4)), ((3, 3), (16, 4)), "48x48")]
    if name == "naive-block-size-macro":
        for m, n in ((5, 37), (33, 70)):
            args = (Buf(F, m * n), Buf(F, m * n), f"{m}", f"{n}")
            naive_bs = ((-(-n // 16), -(-m // 16)), (16, 16))
            out.append(Case(args, naive_bs, ((-(-n // 32), -(-m // 32)), (32, 8)), f"{m}x{n}"))
        return out
    if name == "naive-2d-threads":
        for w, h in ((37, 5), (70, 33)):
            args = (Buf(F, w * h), Buf(F, w * h), f"{w}", f"{h}")
            naive = ((-(-w // 16), -(-h // 16)), (16, 16))
            out.append(Case(args, naive, ((-(-w // 32), -(-h // 32)), (32, 8)), f"{w}x{h}"))
        return out
    if name == "transpose-2d-long-long":
        for rows, cols in ((5, 37), (33, 70)):
            args = (Buf("double", rows * cols), Buf("double", rows * cols), f"{rows}LL", f"{cols}LL")
            out.append(
                Case(
                    args,
                    ((-(-cols // 128), rows), (128, 1)),
                    ((-(-cols // 32), -(-rows // 32)), (32, 8)),
                    f"{rows}x{cols}",
                )
            )
        return out
    for n, c, hw in ((2, 5, 37), (1, 40, 33)):
        args = (Buf(F, n * c * hw), Buf(F, n * c * hw), f"{c}", f"{hw}")
        if name == "unseen-17-nchw-to-nhwc":
            original, extent_x, extent_y = (-(-hw // 256), c, n), hw, c
        else:
            original, extent_x, extent_y = (-(-c // 256), hw, n), c, hw
        rewritten = (-(-extent_x // 32), -(-extent_y // 32), n)
        out.append(Case(args, (original, (256, 1)), (rewritten, (32, 8)), f"n={n} c={c} hw={hw}"))
    return out


KERNELS = {
    "naive-block-size-macro": "transpose_bs",
    "examples-01-row-steps": "transpose_naive",
    "row-steps-unguarded-literal-rows": "transpose16",
    "naive-2d-threads": "transposeNaive",
    "unseen-17-nchw-to-nhwc": "nchw_to_nhwc_naive",
    "nhwc-to-nchw-braced-guard": "nhwc_to_nchw",
    "transpose-2d-long-long": "transpose_rows",
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, launch = FORMS[name]
    [cand] = transpose_tile.propose(_request(source, launch))
    assert_same(tmp_path, source, cand.source, KERNELS[name], _cases(name), rtol=0.0, atol=0.0)


def test_the_emulation_catches_a_missing_barrier(tmp_path: Path) -> None:
    """Without __syncthreads the write phase reads tile entries other threads have not stored yet."""
    from tests.rewrite.cuda_blocks import run

    source, launch = FORMS["nhwc-to-nchw-braced-guard"]
    [cand] = transpose_tile.propose(_request(source, launch))
    ok, _ = run(
        tmp_path,
        source,
        cand.source.replace("__syncthreads();", ""),
        "nhwc_to_nchw",
        _cases("nhwc-to-nchw-braced-guard"),
        rtol=0.0,
        atol=0.0,
    )
    assert not ok


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    [cand] = transpose_tile.propose(_request(*FORMS[name]))
    assert_compiled(nvcc_compile({name: cand.source}, tmp_path))
