"""permute-rows (vectorize-access, coalesce-access): flat-index permutes that keep the innermost dimension.

Own forms (issue 23: not the measuring set's kernel): a float split-heads permute with an int index
and an argument bound, a ``__half`` swap of the two outer dimensions with a ``size_t`` index and the
``N <= idx`` guard, and a ``uint8`` merge-heads gather (the read is the peeled side, 16 lanes). Each
runs against its original on the CPU emulator with an innermost extent that is a multiple of the
vector (the uint4 path) and one that is not (the per-element fallback), and compiles with nvcc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, permute_rows, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile


def _spec(total: str, args: list[str]) -> LaunchContext:
    return launch_context(
        {
            "grid": [f"ceil_div({total}, 128)"],
            "block": [128],
            "args": [{"name": n, "value": n if n.isupper() else None} for n in args],
        }
    )


SPLIT_HEADS_FLOAT = """
__global__ void split_heads(const float *x, float *y, int n, int S, int H, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int e = i % D;
    int r = i / D;
    int head = r % H;
    r = r / H;
    int pos = r % S;
    int batch = r / S;
    y[((batch * H + head) * S + pos) * D + e] = x[i];
}
"""
SWAP_OUTER_HALF = """
#include <cuda_fp16.h>
extern "C" __global__ void swap_outer(const __half *src, __half *dst, int P, int Q, int C) {
    size_t flat = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    size_t count = (size_t)P * Q * C;
    if (count <= flat) { return; }
    size_t c = flat % C;
    size_t pq = flat / C;
    size_t q = pq % Q;
    size_t p = pq / Q;
    dst[(q * P + p) * C + c] = src[flat];
}
"""
MERGE_HEADS_U8 = """
__global__ void merge_heads(const unsigned char *a, unsigned char *b, long long N, int S, int H, int D) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= N) return;
    long long d = o % D;
    long long t = o / D;
    long long h = t % H;
    t /= H;
    long long s = t % S;
    long long n = t / S;
    b[o] = a[d + ((n * H + h) * S + s) * D];
}
"""

FORMS: dict[str, tuple[str, LaunchContext, str, int]] = {
    "split-heads-float": (SPLIT_HEADS_FLOAT, _spec("N", ["x", "y", "N", "S", "H", "D"]), "split_heads", 4),
    "swap-outer-half": (SWAP_OUTER_HALF, _spec("P * Q * C", ["src", "dst", "P", "Q", "C"]), "swap_outer", 8),
    "merge-heads-u8": (MERGE_HEADS_U8, _spec("N", ["a", "b", "N", "S", "H", "D"]), "merge_heads", 16),
}

REFUSED: dict[str, tuple[str, str]] = {
    "innermost-moved": (
        SPLIT_HEADS_FLOAT.replace("y[((batch * H + head) * S + pos) * D + e]", "y[(e * S + pos) * H + head]"),
        "the write index is not contiguous along e",
    ),
    "row-local-from-the-flat-index": (
        SPLIT_HEADS_FLOAT.replace("int r = i / D;", "int r = i / 2;"),
        "r differs along the row",
    ),
    "no-guard": (SPLIT_HEADS_FLOAT.replace("    if (i >= n) return;\n", ""), "no guard"),
    "not-a-copy": (SPLIT_HEADS_FLOAT.replace("= x[i]", "= 2.0f * x[i]"), "not a copy"),
    "no-peel": (
        "__global__ void k(const float *x, float *y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    y[i] = x[i];\n}\n",
        "not one innermost coordinate",
    ),
}


def _request(source: str, launch: LaunchContext, transform: str = "vectorize-access") -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform=transform, launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms_shrink_the_grid_by_the_vector(name: str) -> None:
    source, launch, _, lanes = FORMS[name]
    req = _request(source, launch)
    assert permute_rows.applies(req) is None, permute_rows.applies(req)
    [cand] = permute_rows.propose(req)
    assert "reinterpret_cast<uint4 *>" in cand.source and f"perfagent_k < {lanes}" in cand.source
    assert cand.launch is not None and cand.launch.grid == [f"ceil_div({launch.grid[0]}, {lanes})"]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms_say_why(name: str) -> None:
    source, why = REFUSED[name]
    launch = FORMS["split-heads-float"][1]
    reason = permute_rows.applies(_request(source, launch))
    assert reason is not None and why in reason, reason


def test_registered_for_both_transforms() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["permute-rows"] is permute_rows.RECIPE
    for transform in ("vectorize-access", "coalesce-access"):
        assert permute_rows.RECIPE in recipes_for(transform, "cuda")
        assert "permute-rows" in catalog()[transform].recipes


def _cases(name: str, lanes: int) -> list[Case]:
    out = []
    for inner in (2 * lanes, lanes + 3):  # the uint4 path, then rows the vector does not divide
        if name == "swap-outer-half":
            dims, scalars = (3, 5, inner), ["3", "5", str(inner)]
        else:
            dims = (2, 3, 5, inner)
            scalars = [str(2 * 3 * 5 * inner), "3", "5", str(inner)]
        total = 1
        for d in dims:
            total *= d
        element = {
            "split-heads-float": "float",
            "swap-outer-half": "__half",
            "merge-heads-u8": "unsigned char",
        }
        bufs = (Buf(element[name], total), Buf(element[name], total))
        blocks = -(-total // 128)
        original = ((blocks,), (128, 1))
        rewritten = ((-(-blocks // lanes),), (128, 1))
        out.append(Case((*bufs, *scalars), original, rewritten, f"inner={inner}"))
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_moves_what_the_original_moves(name: str, tmp_path: Path) -> None:
    source, launch, kernel, lanes = FORMS[name]
    [cand] = permute_rows.propose(_request(source, launch))
    assert_same(tmp_path, source, cand.source, kernel, _cases(name, lanes), rtol=0.0, atol=0.0)


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {}
    for name, (source, launch, *_) in FORMS.items():
        [cand] = permute_rows.propose(_request(source, launch))
        sources[name.replace("-", "_")] = cand.source
    assert_compiled(nvcc_compile(sources, tmp_path))


def test_the_emulation_catches_a_vector_across_a_row_end(tmp_path: Path) -> None:
    """Without the in-one-row check the uint4 path moves elements of the next row to the wrong place."""
    from tests.rewrite.cuda_blocks import run

    source, launch, kernel, lanes = FORMS["split-heads-float"]
    [cand] = permute_rows.propose(_request(source, launch))
    broken = cand.source.replace(f"|| e + {lanes} > D", "")
    assert broken != cand.source
    ok, _ = run(tmp_path, source, broken, kernel, _cases("split-heads-float", lanes), rtol=0.0, atol=0.0)
    assert not ok
