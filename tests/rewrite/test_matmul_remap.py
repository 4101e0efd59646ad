"""Naive matmuls on a flat 1-D or a 3-D thread map, inside ``load_inline`` wrappers (_matmul_remap).

Own forms (issue 23: not the measuring set's kernels), each a ``ModelNew``-style Python file whose
wrapper launches the kernel with sizes from ``.size()``:

- ``flat-early-return``: one thread per output of ``a @ bt^T * alpha`` on a flat index, decoded
  ``n = idx % N`` / ``m = idx / N`` after ``if (idx >= M * N) return;``, B stored transposed;
- ``grid-stride-batched``: a batched product in a grid-stride loop whose grid is capped, decoded through
  an intermediate ``rem = t % (rows * cols)``, the step written inline in the loop's update;
- ``row-col-guard-long-index``: a ``long`` flat index decoded before a guard on the decoded row and
  column, the launch written inline in the ``<<<...>>>`` with ``.size()`` calls, a ReLU epilogue;
- ``axes-3d-broadcast``: one coordinate per thread axis (column on x, batch on y, row on z), one weight
  matrix shared by every batch (no batch term in its subscript).

smem-tiling and register-tiling must propose for each; every candidate runs against the original on the
block-synchronous CPU emulator (``cuda_blocks``) with the original's and the candidate's launches as the
wrappers compute them for ragged sizes, and compiles with ``nvcc -arch=sm_90 -cubin``. Forms that cannot be
remapped safely are refused with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest
from perfagent.rewrite.embed.adapter import Embedded, embedded_cuda
from perfagent.rewrite.recipes import _cuda, register_tiling, smem_tiling
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.expr import evaluate
from tests.rewrite import cuda_blocks
from tests.rewrite.helpers import assert_compiled, nvcc_compile

FLAT_EARLY_RETURN = r"""
__global__ void scaled_abt(const float* __restrict__ a, const float* __restrict__ bt, float* out,
                           int M, int N, int K, float alpha) {
    const int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= M * N) return;
    const int n = idx % N;
    const int m = idx / N;
    float s = 0.f;
    for (int q = 0; q < K; q++)
        s += a[m * K + q] * bt[n * K + q];
    out[idx] = s * alpha;
}

torch::Tensor scaled_abt_cuda(torch::Tensor a, torch::Tensor bt, double alpha) {
    const int M = a.size(0), K = a.size(1), N = bt.size(0);
    auto out = torch::empty({M, N}, a.options());
    dim3 threads(128);
    dim3 blocks((M * N + 127) / 128);
    scaled_abt<<<blocks, threads>>>(a.data_ptr<float>(), bt.data_ptr<float>(), out.data_ptr<float>(),
                                    M, N, K, (float)alpha);
    return out;
}
"""
GRID_STRIDE_BATCHED = r"""
__global__ void bmm_strided_loop(const float* X, const float* Y, float* Z, int nb, int rows, int inner, int cols) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < nb * rows * cols; t += gridDim.x * blockDim.x) {
        int rem = t % (rows * cols);
        int r = rem / cols;
        int c = rem % cols;
        int bi = t / (rows * cols);
        float acc = 0.0f;
        for (int q = 0; q < inner; ++q)
            acc = fmaf(X[bi * rows * inner + r * inner + q], Y[bi * inner * cols + q * cols + c], acc);
        Z[t] = acc;
    }
}

torch::Tensor bmm_loop(torch::Tensor X, torch::Tensor Y) {
    int nb = X.size(0);
    int rows = X.size(1);
    int inner = X.size(2);
    int cols = Y.size(2);
    auto Z = torch::zeros({nb, rows, cols}, X.options());
    bmm_strided_loop<<<64, 256>>>(X.data_ptr<float>(), Y.data_ptr<float>(), Z.data_ptr<float>(), nb, rows, inner, cols);
    return Z;
}
"""
AXES_3D_BROADCAST = r"""
__global__ void project_seq(const float* inp, const float* weight, float* res, int B, int S, int D, int E) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    int s = blockIdx.z * blockDim.z + threadIdx.z;
    if (b < B && s < S && e < E) {
        float sum = 0.0f;
        for (int d = 0; d < D; ++d) {
            sum += inp[b * S * D + s * D + d] * weight[d * E + e];
        }
        res[b * S * E + s * E + e] = sum;
    }
}

torch::Tensor project_seq_forward(torch::Tensor inp, torch::Tensor weight) {
    int B = inp.size(0);
    int S = inp.size(1);
    int D = inp.size(2);
    int E = weight.size(1);
    auto res = torch::empty({B, S, E}, inp.options());
    dim3 block(16, 4, 4);
    dim3 grid((E + 15) / 16, (B + 3) / 4, (S + 3) / 4);
    project_seq<<<grid, block>>>(inp.data_ptr<float>(), weight.data_ptr<float>(), res.data_ptr<float>(), B, S, D, E);
    return res;
}
"""

ROW_COL_GUARD = r"""
__global__ void mm_rc(const float* P, const float* Q, float* R, int rows, int inner, int cols) {
    long g = (long)blockIdx.x * blockDim.x + threadIdx.x;
    int r = g / cols;
    int c = g % cols;
    if (r < rows && c < cols) {
        float v = 0.0f;
        for (int q = 0; q < inner; q++) {
            v = v + P[r * inner + q] * Q[q * cols + c];
        }
        R[r * cols + c] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor mm_rc_forward(torch::Tensor P, torch::Tensor Q) {
    auto R = torch::empty({P.size(0), Q.size(1)}, P.options());
    mm_rc<<<(P.size(0) * Q.size(1) + 255) / 256, 256>>>(P.data_ptr<float>(), Q.data_ptr<float>(), R.data_ptr<float>(),
                                                       P.size(0), P.size(1), Q.size(1));
    return R;
}
"""


def _module(cuda: str, function: str) -> str:
    """A ModelNew-style file: the CUDA in a triple-quoted literal handed to load_inline."""
    return (
        "import torch\nfrom torch.utils.cpp_extension import load_inline\n\n"
        f'cuda_src = """\n#include <torch/extension.h>\n{cuda}"""\n\n'
        f'ext = load_inline(name="m", cpp_sources="", cuda_sources=cuda_src, functions=["{function}"])\n'
    )


# name: (python file, kernel, leaf sizes for the CPU run, buffer sizes, scalar arguments)
FORMS: dict[str, tuple[str, str, dict[str, int], list[int], list[str]]] = {
    "flat-early-return": (
        _module(FLAT_EARLY_RETURN, "scaled_abt_cuda"),
        "scaled_abt",
        {"a_size_0": 37, "a_size_1": 29, "bt_size_0": 45},
        [37 * 29, 45 * 29, 37 * 45],
        ["37", "45", "29", "0.5f"],
    ),
    "row-col-guard-long-index": (
        _module(ROW_COL_GUARD, "mm_rc_forward"),
        "mm_rc",
        {"P_size_0": 30, "P_size_1": 27, "Q_size_1": 38},
        [30 * 27, 27 * 38, 30 * 38],
        ["30", "27", "38"],
    ),
    "grid-stride-batched": (
        _module(GRID_STRIDE_BATCHED, "bmm_loop"),
        "bmm_strided_loop",
        {"X_size_0": 3, "X_size_1": 21, "X_size_2": 19, "Y_size_2": 35},
        [3 * 21 * 19, 3 * 19 * 35, 3 * 21 * 35],
        ["3", "21", "19", "35"],
    ),
    "axes-3d-broadcast": (
        _module(AXES_3D_BROADCAST, "project_seq_forward"),
        "project_seq",
        {"inp_size_0": 3, "inp_size_1": 18, "inp_size_2": 23, "weight_size_1": 41},
        [3 * 18 * 23, 23 * 41, 3 * 18 * 41],
        ["3", "18", "23", "41"],
    ),
}
RECIPES = {"smem-tiling": smem_tiling, "register-tiling": register_tiling}


def _embedded(source: str, transform: str) -> Embedded:
    found = embedded_cuda(RewriteRequest(source=source, path="m.py", language="python", transform=transform))
    assert isinstance(found, Embedded)
    assert found.inner.launch is not None, found.launch_note
    return found


def _names(launch: LaunchContext, sizes: dict[str, int]) -> dict[str, float | int]:
    """The wrapper's leaves bound to ``sizes`` (each leaf is named after the C++ it stands for)."""
    names: dict[str, float | int] = dict(launch.params)
    for leaf in launch.params:
        for key, value in sizes.items():
            if leaf.endswith(key):
                names[leaf] = value
    return names


def _dims(exprs: list, names: dict[str, float | int]) -> tuple[int, ...]:
    return tuple(int(evaluate(e, names)) for e in exprs)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("name", sorted(FORMS))
def test_flat_and_3d_maps_are_tiled_with_a_new_grid(name: str, recipe: str) -> None:
    source = FORMS[name][0]
    found = _embedded(source, recipe)
    cands = RECIPES[recipe].propose(found.inner)
    assert cands, RECIPES[recipe].applies(found.inner)
    batched = name not in ("flat-early-return", "row-col-guard-long-index")
    for cand in cands:
        assert cand.launch is not None and cand.launch.grid is not None and cand.launch.block is not None
        assert len(cand.launch.grid) == (3 if batched else 2), cand.launch
        assert "blockIdx.z" in cand.source if batched else "blockIdx.z" not in cand.source
        assert "gridDim" not in _kernel_text(cand.source, FORMS[name][1])
    # through the backend, the Python candidate carries the new launch in its wrapper
    python = [
        c
        for c in RecipesRewriter().propose(
            RewriteRequest(source=source, path="m.py", language="python", transform=recipe)
        )
        if c.recipe == recipe
    ]
    assert python and all("dim3((unsigned int)" in c.source for c in python)


def _kernel_text(unit: str, kernel: str) -> str:
    found = _cuda.select_kernel(_cuda.parse(unit), kernel)
    assert not isinstance(found, str), found
    return _cuda.text(found)


def _kernels_only(cuda: str) -> str:
    return "\n".join(_cuda.text(k) for k in _cuda.kernels(_cuda.parse(cuda))) + "\n"


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_candidate_matches_the_original_on_ragged_sizes(name: str, recipe: str, tmp_path: Path) -> None:
    source, kernel, sizes, buffers, scalars = FORMS[name]
    found = _embedded(source, recipe)
    launch = found.inner.launch
    assert launch is not None
    names = _names(launch, sizes)
    bufs = [cuda_blocks.Buf("float", n) for n in buffers]
    original = (_dims(launch.grid, names), _dims(launch.block, names))
    cands = RECIPES[recipe].propose(found.inner)
    assert cands
    for i, cand in enumerate(cands):
        assert cand.launch is not None and cand.launch.grid and cand.launch.block
        rewritten = (_dims(cand.launch.grid, names), _dims(cand.launch.block, names))
        case = cuda_blocks.Case((*bufs, *scalars), original, rewritten)
        (tmp_path / str(i)).mkdir()
        cuda_blocks.assert_same(
            tmp_path / str(i),
            _kernels_only(found.inner.source),
            _kernels_only(cand.source),
            kernel,
            [case],
            rtol=1e-5,
            atol=1e-5,
        )


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {
        f"{name}_{recipe}_{i}".replace("-", "_"): _kernels_only(c.source)
        for name, (source, *_rest) in FORMS.items()
        for recipe, mod in RECIPES.items()
        for i, c in enumerate(mod.propose(_embedded(source, recipe).inner))
    }
    assert len(sources) >= 6
    assert_compiled(nvcc_compile(sources, tmp_path))


def test_the_emulation_catches_a_wrong_decode(tmp_path: Path) -> None:
    """Swapping the decoded row and column of the flat form must fail the CPU comparison."""
    source, kernel, sizes, buffers, scalars = FORMS["flat-early-return"]
    found = _embedded(source, "smem-tiling")
    assert found.inner.launch is not None
    [cand, *_] = smem_tiling.propose(found.inner)
    broken = cand.source.replace("bt[pa_col_t * K", "bt[pa_col_t * N")
    assert broken != cand.source
    names = _names(found.inner.launch, sizes)
    assert cand.launch is not None and cand.launch.grid and cand.launch.block
    case = cuda_blocks.Case(
        (*[cuda_blocks.Buf("float", n) for n in buffers], *scalars),
        (_dims(found.inner.launch.grid, names), _dims(found.inner.launch.block, names)),
        (_dims(cand.launch.grid, names), _dims(cand.launch.block, names)),
    )
    ok, _ = cuda_blocks.run(
        tmp_path, _kernels_only(found.inner.source), _kernels_only(broken), kernel, [case]
    )
    assert not ok


REFUSED = {
    # a batch term that also holds the row: hoisting it as a per-batch offset would drop the row
    "batch-term-reads-the-row": (
        AXES_3D_BROADCAST.replace("inp[b * S * D + s * D + d]", "inp[(b * S + s) * D + d]"),
        "also reads s: not a per-batch offset",
    ),
    # the column is the flat index's quotient: the output is not C[row * ldc + col] of a decode
    "decode-not-mixed-radix": (
        FLAT_EARLY_RETURN.replace("const int n = idx % N;", "const int n = idx % K;"),
        "the flat index is not decoded",
    ),
    # a continue in the grid-stride loop cannot become a bounds check
    "continue-in-the-loop": (
        GRID_STRIDE_BATCHED.replace("float acc = 0.0f;", "if (r == c) continue;\n        float acc = 0.0f;"),
        "continue in the per-output statements",
    ),
    # the batch coordinate's stride is not rows x columns
    "3d-store-not-contiguous": (
        AXES_3D_BROADCAST.replace("res[b * S * E + s * E + e]", "res[b * S * D + s * E + e]"),
        "not rows x columns",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsafe_remaps_are_refused_with_the_reason(name: str) -> None:
    cuda, why = REFUSED[name]
    function = "bmm_loop" if "bmm_strided_loop" in cuda else "f"
    found = _embedded(_module(cuda, function), "smem-tiling")
    reason = smem_tiling.applies(found.inner)
    assert reason is not None and why in reason, reason
