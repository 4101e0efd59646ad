"""smem-tiling: naive matmul loop nests from public styles, positive and refused, on real parse trees.

Every candidate is checked three ways: its structure on the parse tree (two shared tiles, two barriers,
the launch of (TILE, TILE) blocks), an nvcc build, and a block-synchronous CPU run
(``cuda_blocks.py``: each thread a fiber, ``__syncthreads()`` a real block barrier) against the
original on sizes that are multiples of neither 16 nor 32, every output and guard word compared.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchArg, LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.embed.adapter import Embedded, embedded_cuda
from perfagent.rewrite.recipes import RECIPES, _cuda, smem_tiling
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.expr import evaluate
from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite import cuda_blocks
from tests.rewrite.helpers import EXAMPLES, ROOT, assert_clean_cuda, assert_compiled, nvcc_compile

DATA = ROOT / "tests" / "data" / "smem_tiling"
CTYPES = {"float32": "float", "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16"}

SPEC_CASES = {
    # name: (kernel file, launch spec, small sizes: multiples of neither 16 nor 32 where the kernel allows)
    "unseen-08-row-from-x": (
        EXAMPLES / "unseen" / "08_matmul_naive_row_from_x" / "slow.cu",
        EXAMPLES / "unseen" / "08_matmul_naive_row_from_x" / "sgemm.launch.toml",
        {"M": 37, "N": 45, "K": 70},
    ),
    "cuda-10-sgemm-naive": (
        EXAMPLES / "cuda" / "10_sgemm_naive" / "slow.cu",
        EXAMPLES / "cuda" / "10_sgemm_naive" / "sgemm.launch.toml",
        {"M": 50, "N": 33, "K": 41},
    ),
    "pmpp-square-unguarded": (
        DATA / "pmpp_square_unguarded.cu",
        DATA / "pmpp_square_unguarded.launch.toml",
        {"Width": 48},  # the original has no bounds check: a multiple of its 16-wide blocks
    ),
    "hgemm-half-sizet-early-return": (
        DATA / "hgemm_half_sizet_early_return.cu",
        DATA / "hgemm_half_sizet_early_return.launch.toml",
        {"M": 37, "N": 45, "K": 70},
    ),
    "hgemm-b-k-major": (
        DATA / "hgemm_b_k_major.cu",
        DATA / "hgemm_b_k_major.launch.toml",
        {"M": 45, "N": 37, "K": 66},
    ),
    "sgemm-permuted-names-relu": (
        DATA / "sgemm_permuted_names_relu.cu",
        DATA / "sgemm_permuted_names_relu.launch.toml",
        {"N": 35, "M": 70, "K": 47},
    ),
    "dgemm-fma-leading-dims": (
        DATA / "dgemm_fma_leading_dims.cu",
        DATA / "dgemm_fma_leading_dims.launch.toml",
        {"m": 37, "n": 45, "k": 70, "lda": 73, "ldb": 47, "ldc": 50},
    ),
    "hgemm-float-acc-temporaries": (
        DATA / "hgemm_float_acc_temporaries.cu",
        DATA / "hgemm_float_acc_temporaries.launch.toml",
        {"M": 33, "N": 50, "K": 39},
    ),
}

EMBEDDED = {
    # name: (python file, wrapper sizes for the CPU run)
    "kernelbench-06-square": (
        EXAMPLES / "unseen" / "kernelbench" / "06_square_matmul_solution.py",
        {"A_size_0": 45},
    ),
    "inline-row-from-x": (
        ROOT / "tests" / "data" / "kernelbench_inline" / "matmul_naive_inline.py",
        {"A_size_0": 37, "B_size_1": 45, "A_size_1": 70},
    ),
}

A_T = """
__global__ void mm_tn(const float* At, const float* B, float* C, int M, int N, int K)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M && c < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s += At[k * M + r] * B[k * N + c];
        C[r * N + c] = s;
    }
}
"""
"""A stored K x M (a "TN" GEMM): the transposed-A load."""

C_T = """
__global__ void mm_ct(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s += A[row * K + k] * B[k * N + col];
        C[col * M + row] = s;
    }
}
"""
"""C written transposed: read as C^T = B^T A^T (B the transposed 'A' operand, A the transposed 'B')."""

REFUSED_FILES = {
    "refused_1d_thread_index.cu": "does not derive its row and column",
    "refused_matrix_struct.cu": "load pointer parameters",
}

GUARDED = """
__global__ void g(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}
"""

REFUSED_INLINE = {
    "already tiled": (
        (EXAMPLES / "cuda" / "10_sgemm_naive" / "fixed.cu").read_text(),
        "already uses __shared__",
    ),
    "loop bound per thread": (GUARDED.replace("k < K", "k < row"), "not the same in every thread"),
    "counter used in the body": (
        GUARDED.replace("s += A[row * K + k] * B[k * N + col]", "s += A[row * K + k] * B[k * N + col] * k"),
        "not one accumulation",
    ),
    "not a product of loads": (
        GUARDED.replace(
            "s += A[row * K + k] * B[k * N + col]", "s += fabsf(A[row * K + k] - B[k * N + col])"
        ),
        "not one accumulation",
    ),
    "A column-strided by the column": (
        GUARDED.replace("A[row * K + k]", "A[col * K + k]"),
        "the operands are not",
    ),
    "stores into an operand": (
        GUARDED.replace("C[row * N + col] = s;", "C[row * N + col] = s;\n        ((float*)B)[col] = s;"),
        "store",
    ),
    "guard with an else": (
        GUARDED.replace("C[row * N + col] = s;\n    }", "C[row * N + col] = s;\n    } else { return; }"),
        "else branch",
    ),
    "guard on one index only": (GUARDED.replace("row < M && col < N", "row < M"), "does not bound both"),
    "pre-loop memory read": (
        GUARDED.replace("float s = 0.0f;", "float s = C[row * N + col];"),
        "free of memory reads",
    ),
    "two loops": (
        GUARDED.replace(
            "C[row * N + col] = s;", "for (int j = 0; j < 2; ++j) s *= 2.0f;\n        C[row * N + col] = s;"
        ),
        "2 loops",
    ),
    "integer matrices": (GUARDED.replace("const float* A", "const int* A"), "holds int"),
    "threadIdx used elsewhere": (
        GUARDED.replace("C[row * N + col] = s;", "C[row * N + col] = s + threadIdx.x;"),
        "outside the row/column derivations",
    ),
}

MM_ARGS = [
    LaunchArg(name="A"),
    LaunchArg(name="B"),
    LaunchArg(name="C"),
    LaunchArg(name="M", value="M"),
    LaunchArg(name="N", value="N"),
    LaunchArg(name="K", value="K"),
]
MM_LAUNCH = LaunchContext(
    grid=["ceil_div(N, 16)", "ceil_div(M, 16)"],
    block=[16, 16],
    params={"M": 300, "N": 200, "K": 100},
    args=MM_ARGS,
)


def _spec_request(name: str) -> RewriteRequest:
    path, spec_path, _ = SPEC_CASES[name]
    spec = load_launch_spec(spec_path)
    return RewriteRequest(
        source=path.read_text(encoding="utf-8"),
        path=str(path.relative_to(ROOT)),
        language="cuda",
        transform="smem-tiling",
        launch=launch_context(spec.model_dump(mode="json")),
    )


def _embedded(name: str) -> Embedded:
    path, _ = EMBEDDED[name]
    request = RewriteRequest(
        source=path.read_text(encoding="utf-8"),
        path=str(path.relative_to(ROOT)),
        language="python",
        transform="smem-tiling",
    )
    found = embedded_cuda(request)
    assert isinstance(found, Embedded)
    return found


def _structure(source: str, tile: int) -> None:
    assert_clean_cuda(source)
    assert source.count("__syncthreads()") == 2
    assert len(re.findall(rf"__shared__ \w+ pa_tile_[ab]\[{tile}\]\[(?:{tile}|{tile + 1})\]", source)) == 2, (
        source
    )
    assert f"blockIdx.y * {tile} + threadIdx.y" in source and f"blockIdx.x * {tile} + threadIdx.x" in source


# --------------------------------------------------------------------------- parse-tree tests


def test_registered_with_the_catalog_transform() -> None:
    assert RECIPES["smem-tiling"].transforms == ("smem-tiling",)
    assert RECIPES["smem-tiling"].languages == ("cuda",)


@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_applies_and_proposes_both_tiles(name: str) -> None:
    request = _spec_request(name)
    assert RecipesRewriter().applies(request) is None
    cands = RecipesRewriter().propose(request)
    assert [c.parameters["tile"] for c in cands] == [32, 16]
    for cand in cands:
        tile = cand.parameters["tile"]
        assert cand.recipe == "smem-tiling" and cand.transform == "smem-tiling"
        assert cand.launch is not None and cand.launch.block == [tile, tile]
        assert cand.launch.grid is not None and all(f", {tile})" in str(g) for g in cand.launch.grid)
        _structure(cand.source, tile)
        again = request.model_copy(update={"source": cand.source})
        assert "already uses __shared__" in (smem_tiling.applies(again) or "")


def test_grid_covers_columns_then_rows() -> None:
    [c32, _] = smem_tiling.propose(_spec_request("sgemm-permuted-names-relu"))
    # x < N rows, y < K columns: the columns (K) go on the grid's x
    assert c32.launch is not None and c32.launch.grid == ["ceil_div(K, 32)", "ceil_div(N, 32)"]
    [p32, _] = smem_tiling.propose(_spec_request("pmpp-square-unguarded"))
    assert "Row < Width && Col < Width" in p32.source and p32.notes and "no bounds check" in p32.notes[0]


def test_row_from_x_becomes_row_from_y() -> None:
    [cand, _] = smem_tiling.propose(_spec_request("unseen-08-row-from-x"))
    assert "const unsigned int x = blockIdx.y * 32 + threadIdx.y;" in cand.source
    assert "const unsigned int y = blockIdx.x * 32 + threadIdx.x;" in cand.source
    # the epilogue and its guard are kept, the accumulator is hoisted out of the guard
    assert cand.source.index("float tmp = 0.0f;") < cand.source.index("__shared__")
    assert "if (x < M && y < N) {\n        C[x * N + y] = alpha * tmp + beta * C[x * N + y];" in cand.source


def test_early_return_moves_after_the_tile_loop() -> None:
    [cand, _] = smem_tiling.propose(_spec_request("hgemm-float-acc-temporaries"))
    src = cand.source
    assert src.index("__syncthreads();") < src.index("if (m >= M || n >= N) return;")
    assert "__float2half(0.0f)" in src and "__half2float(pa_tile_a[threadIdx.y][pa_kk])" in src


def test_transposed_operands_load_along_k() -> None:
    [cand, _] = smem_tiling.propose(_spec_request("hgemm-b-k-major"))
    assert "pa_tile_b[threadIdx.x][threadIdx.y]" in cand.source and "pa_tile_b[32][33]" in cand.source
    assert "const decltype(col) pa_col_t = col - threadIdx.x + threadIdx.y;" in cand.source
    request = RewriteRequest(source=A_T, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    [a32, _] = smem_tiling.propose(request)
    assert "pa_tile_a[threadIdx.x][threadIdx.y]" in a32.source and "pa_tile_a[32][33]" in a32.source


@pytest.mark.parametrize("name", sorted(REFUSED_FILES))
def test_refused_public_forms(name: str) -> None:
    request = RewriteRequest(
        source=(DATA / name).read_text(), language="cuda", transform="smem-tiling", launch=MM_LAUNCH
    )
    why = smem_tiling.applies(request)
    assert why is not None and REFUSED_FILES[name] in why, why
    assert smem_tiling.propose(request) == []


@pytest.mark.parametrize("name", sorted(REFUSED_INLINE))
def test_refused_forms(name: str) -> None:
    source, reason = REFUSED_INLINE[name]
    request = RewriteRequest(source=source, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    why = smem_tiling.applies(request)
    assert why is not None and reason in why, why


def test_refused_without_a_launch_or_coverage() -> None:
    plain = RewriteRequest(source=GUARDED, language="cuda", transform="smem-tiling")
    assert "no launch spec" in (smem_tiling.applies(plain) or "")
    one_d = plain.model_copy(update={"launch": LaunchContext(grid=["n"], block=[256])})
    assert "not 2-D" in (smem_tiling.applies(one_d) or "")
    # no guard, and M = N = K in every parameter set: which one bounds the rows is unknowable
    unguarded = GUARDED.replace("if (row < M && col < N) {", "{")
    square = MM_LAUNCH.model_copy(
        update={"grid": ["N / 16", "M / 16"], "params": {"M": 64, "N": 64, "K": 64}}
    )
    request = plain.model_copy(update={"source": unguarded, "launch": square})
    why = smem_tiling.applies(request) or ""
    assert "the loop is nested" in why or "matches" in why, why


def test_embedded_kernelbench_candidates_write_the_wrapper_launch() -> None:
    for name in sorted(EMBEDDED):
        path, _ = EMBEDDED[name]
        request = RewriteRequest(
            source=path.read_text(), path=str(path), language="python", transform="smem-tiling"
        )
        assert RecipesRewriter().applies(request) is None, name
        cands = RecipesRewriter().propose(request)
        assert [c.parameters["tile"] for c in cands] == [32, 16], name
        for cand in cands:
            tile = cand.parameters["tile"]
            compile(cand.source, str(path), "exec")
            assert f"dim3({tile}, {tile})" in cand.source and "__syncthreads()" in cand.source
            assert any("launch written in the wrapper" in n for n in cand.notes)


def test_every_candidate_compiles_with_nvcc(tmp_path: Path) -> None:
    sources: dict[str, str] = {}
    for name in SPEC_CASES:
        for cand in smem_tiling.propose(_spec_request(name)):
            sources[f"{name}-{cand.parameters['tile']}"] = cand.source
    for name in EMBEDDED:
        for cand in smem_tiling.propose(_embedded(name).inner):
            sources[f"{name}-{cand.parameters['tile']}"] = _kernels_only(cand.source)
    request = RewriteRequest(source=A_T, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    for cand in smem_tiling.propose(request):
        sources[f"a-transposed-{cand.parameters['tile']}"] = cand.source
    sources = {k: "#include <cuda_fp16.h>\n" + v for k, v in sources.items()}
    assert_compiled(nvcc_compile(sources, tmp_path))


# --------------------------------------------------------------------------- numerical proof on the CPU


def _kernels_only(cuda: str) -> str:
    """The ``#define`` lines and ``__global__`` functions of a translation unit (no host wrapper)."""
    tree = _cuda.parse(cuda)
    defines = [ln for ln in cuda.splitlines() if ln.lstrip().startswith("#define")]
    return "\n".join(defines + [_cuda.text(k) for k in _cuda.kernels(tree)]) + "\n"


def _names(launch: LaunchContext, small: dict[str, int]) -> dict[str, float | int]:
    names: dict[str, float | int] = {**launch.params, **small}
    for key, value in launch.defines.items():
        names[key] = evaluate(value, names)
    return names


def _dims(exprs: list, names: dict[str, float | int]) -> tuple[int, int]:
    values = [int(evaluate(e, names)) for e in exprs]
    return values[0], values[1] if len(values) > 1 else 1


def _case(launch: LaunchContext, small: dict[str, int], override: object) -> cuda_blocks.Case:
    names = _names(launch, small)
    args: list[cuda_blocks.Buf | str] = []
    for arg in launch.args:
        if arg.value is not None:
            value = evaluate(arg.value, names)
            args.append(repr(float(value)) if arg.dtype in ("float32", "float64") else str(int(value)))
        else:
            size = math.prod(int(evaluate(s, names)) for s in arg.shape)
            args.append(cuda_blocks.Buf(CTYPES.get(arg.dtype or "float32", "float"), size))
    grid, block = getattr(override, "grid", None), getattr(override, "block", None)
    return cuda_blocks.Case(
        args=tuple(args),
        original=(_dims(launch.grid, names), _dims(launch.block, names)),
        rewritten=(_dims(grid or launch.grid, names), _dims(block or launch.block, names)),
    )


def _emulate(
    tmp: Path,
    original: str,
    kernel: str,
    launch: LaunchContext,
    small: dict[str, int],
    request: RewriteRequest,
) -> None:
    cands = smem_tiling.propose(request)
    assert len(cands) == 2
    for cand in cands:
        case = _case(launch, small, cand.launch)
        where = tmp / f"tile{cand.parameters['tile']}"
        where.mkdir()
        cuda_blocks.assert_same(
            where, original, _kernels_only(cand.source), kernel, [case], rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_tiled_kernel_equals_the_original_on_ragged_sizes(name: str, tmp_path: Path) -> None:
    path, spec_path, small = SPEC_CASES[name]
    request = _spec_request(name)
    assert request.launch is not None
    kernel = load_launch_spec(spec_path).kernel
    # the spec's buffers hold the original's shapes; for transposed B the shape is (N, K) and so on
    _emulate(tmp_path, _kernels_only(path.read_text()), kernel, request.launch, small, request)


@pytest.mark.parametrize("name", sorted(EMBEDDED))
def test_embedded_tiled_kernel_equals_the_original(name: str, tmp_path: Path) -> None:
    found = _embedded(name)
    launch = found.inner.launch
    assert launch is not None and found.inner.kernel is None
    _, sizes = EMBEDDED[name]
    side = {"A_size_0": sizes.get("A_size_0", 0)}
    m = sizes["A_size_0"]
    n = sizes.get("B_size_1", m)
    k = sizes.get("A_size_1", m)
    small = {**sizes, **side, "A_numel": m * k, "B_numel": k * n, "C_numel": m * n}
    [kernel] = [_cuda.function_name(k) for k in _cuda.kernels(_cuda.parse(found.inner.source))]
    assert kernel is not None
    _emulate(tmp_path, _kernels_only(found.inner.source), kernel, launch, small, found.inner)


def test_transposed_a_equals_the_original(tmp_path: Path) -> None:
    request = RewriteRequest(source=A_T, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    launch = MM_LAUNCH.model_copy(
        update={
            "args": [
                LaunchArg(name="At", shape=["K", "M"], dtype="float32"),
                LaunchArg(name="B", shape=["K", "N"], dtype="float32"),
                LaunchArg(name="C", shape=["M", "N"], dtype="float32"),
                *[a.model_copy(update={"dtype": "int32"}) for a in MM_ARGS[3:]],
            ]
        }
    )
    _emulate(tmp_path, A_T, "mm_tn", launch, {"M": 45, "N": 37, "K": 70}, request)


def test_transposed_output_equals_the_original(tmp_path: Path) -> None:
    request = RewriteRequest(source=C_T, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    [cand, _] = smem_tiling.propose(request)
    assert cand.parameters["a"] == "B" and cand.parameters["b"] == "A"
    _emulate(tmp_path, C_T, "mm_ct", _float_launch(), {"M": 45, "N": 37, "K": 70}, request)


def _float_launch() -> LaunchContext:
    shapes = (["M", "K"], ["K", "N"], ["M", "N"])
    return MM_LAUNCH.model_copy(
        update={
            "args": [
                *[
                    a.model_copy(update={"shape": s, "dtype": "float32"})
                    for a, s in zip(MM_ARGS[:3], shapes, strict=True)
                ],
                *[a.model_copy(update={"dtype": "int32"}) for a in MM_ARGS[3:]],
            ]
        }
    )


@pytest.mark.parametrize(
    "broken",
    [
        [("__syncthreads();\n    }", "\n    }")],  # no barrier before the next tile overwrites this one
        [(" && pa_k0 + threadIdx.x < K)", ")"), ("(pa_k0 + threadIdx.y < K && ", "(")],  # no k edge guards
    ],
    ids=["missing-barrier", "missing-edge-guards"],
)
def test_the_emulator_catches_a_broken_tiling(broken: list[tuple[str, str]], tmp_path: Path) -> None:
    """The CPU run is a real check: the tiled kernel without its second barrier, or without its edge
    guards along k (one zero side is enough for a padded product to vanish; both gone, it does not),
    differs from the original on ragged sizes."""
    request = RewriteRequest(source=GUARDED, language="cuda", transform="smem-tiling", launch=MM_LAUNCH)
    [cand, _] = smem_tiling.propose(request)
    racy = cand.source
    for old, new in broken:
        assert old in racy
        racy = racy.replace(old, new, 1)
    case = _case(_float_launch(), {"M": 40, "N": 40, "K": 70}, cand.launch)
    ok, out = cuda_blocks.run(tmp_path, GUARDED, racy, "g", [case])
    assert not ok and "differs" in out
