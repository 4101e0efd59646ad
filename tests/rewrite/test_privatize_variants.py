"""privatize-atomics' two widenings (issue 23): per-warp sub-copies of the accumulator in shared memory,
and packed 32-bit loads of an 8- or 16-bit input walked by a grid-stride loop (alignment test, scalar
tail). Kernels written here, not the measuring set's: unsigned 8-bit pixels into 256 int-sized bins,
signed chars into 64 bins with a ``long long`` counter, 16-bit samples weighted by a float array read at
the same index (the element index stays declared), and a one-element-per-thread form (per-warp copies,
nothing to pack); and the loops whose input is not packed, with why.

Every variant runs against its original on the block-synchronous CPU emulator (real barriers) and
compiles with nvcc -arch=sm_90.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import _byte_pack, _cuda, privatize_atomics
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

FORMS: dict[str, tuple[str, str, int]] = {
    # name: (source, kernel, input elements per 32-bit word; 0: nothing packed)
    "u8-grid-stride-256-bins": (
        """
#define BINS 256
extern "C" __global__ void pixel_hist(const unsigned char *pix, int count, int *bins)
{
    for (int q = blockIdx.x * blockDim.x + threadIdx.x; q < count; q += blockDim.x * gridDim.x)
        atomicAdd(&bins[pix[q]], 1);
}
""",
        "pixel_hist",
        4,
    ),
    "s8-long-long-counter-64-bins": (
        """
constexpr int kBuckets = 64;
__global__ void level_hist(const signed char *__restrict__ levels, unsigned int *buckets, long long n)
{
    for (long long t = threadIdx.x + (long long)blockIdx.x * blockDim.x; t < n; t += (long long)gridDim.x * blockDim.x) {
        const int v = levels[t] + 128;
        atomicAdd(buckets + (v >> 2), 1u);
    }
}
""",
        "level_hist",
        4,
    ),
    "u16-weighted-float-1024-bins": (
        """
#define NB 1024
extern "C" __global__ void weighted16(const unsigned short *samples, const float *weight, float *acc, int n)
{
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += blockDim.x * gridDim.x) {
        if (weight[e] > 0.5f) continue;
        atomicAdd(&acc[samples[e] >> 6], weight[e]);
    }
}
""",
        "weighted16",
        2,
    ),
    "u8-one-per-thread": (
        """
#define BINS 32
extern "C" __global__ void per_thread(const unsigned char *pix, unsigned int *h, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&h[pix[i] & (BINS - 1)], 1u);
}
""",
        "per_thread",
        0,
    ),
}
SHAPES: dict[str, list[tuple[str, str | None]]] = {  # every argument in order (None: a scalar)
    "u8-grid-stride-256-bins": [("pix", "count"), ("count", None), ("bins", "BINS")],
    "s8-long-long-counter-64-bins": [("levels", "n"), ("buckets", "kBuckets"), ("n", None)],
    "u16-weighted-float-1024-bins": [("samples", "n"), ("weight", "n"), ("acc", "NB"), ("n", None)],
    "u8-one-per-thread": [("pix", "n"), ("h", "BINS"), ("n", None)],
}
NOT_PACKED: dict[str, tuple[str, str]] = {
    "input read at another index": (
        FORMS["u8-grid-stride-256-bins"][0].replace("&bins[pix[q]]", "&bins[pix[q] ^ pix[0]]"),
        "pix is reached as pix[0]",
    ),
    "a break leaves the loop": (
        FORMS["u16-weighted-float-1024-bins"][0].replace("continue;", "break;"),
        "a break leaves the element loop",
    ),
    "no narrow input": (
        FORMS["u8-grid-stride-256-bins"][0].replace("unsigned char *pix", "int *pix"),
        "no 8- or 16-bit",
    ),
    "counter changed": (
        FORMS["u16-weighted-float-1024-bins"][0].replace("continue;", "{ e += 1; continue; }"),
        "the body changes the counter e",
    ),
}


def _launch(name: str) -> LaunchContext:
    grid = ["ceil_div(n, 128)"] if name == "u8-one-per-thread" else ["4 * sm_count"]
    return launch_context(
        {
            "grid": grid,
            "block": [128],
            "args": [{"name": a, "shape": [s]} if s else {"name": a, "value": a} for a, s in SHAPES[name]],
        }
    )


def _variants(name: str) -> dict[object, Candidate]:
    request = RewriteRequest(
        source=FORMS[name][0], language="cuda", transform="privatize-atomics", launch=_launch(name)
    )
    return {c.parameters["copies"]: c for c in privatize_atomics.propose(request)}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_both_variants_are_offered_and_packed_where_proven(name: str) -> None:
    variants = _variants(name)
    assert set(variants) == {"block", 4}  # 128 threads: 4 warps, 4 sub-copies
    per_warp = variants[4].source
    assert "perfagent_private[4][" in per_warp and "% 4;" in per_warp
    packed = FORMS[name][2]
    for cand in variants.values():
        assert cand.parameters["packed"] is bool(packed)
        assert (f"perfagent_k < {packed}" in cand.source) is bool(packed)
    grid_stride = name != "u8-one-per-thread"
    launch = variants[4].launch
    assert (launch is not None and launch.grid == ["2 * sm_count"]) is grid_stride


@pytest.mark.parametrize("name", sorted(NOT_PACKED))
def test_loops_not_packed_say_why(name: str) -> None:
    source, why = NOT_PACKED[name]
    tree = _cuda.require_clean(source)
    kernel = _cuda.kernels(tree)[0]
    body = kernel.child_by_field_name("body")
    assert body is not None
    found = _byte_pack.find(kernel, body)
    assert isinstance(found, str) and why in found, found


def _cases(name: str, copies: object) -> list[Case]:
    out = []
    for n in (1, 37, 1003):  # fewer elements than a word, a ragged tail, several words per thread
        args: tuple[Buf | str, ...]
        if name == "u8-grid-stride-256-bins":
            args = (Buf("unsigned char", n), f"{n}", Buf("int", 256))
        elif name == "s8-long-long-counter-64-bins":
            args = (Buf("signed char", n), Buf("unsigned int", 64), f"{n}ll")
        elif name == "u16-weighted-float-1024-bins":
            args = (Buf("unsigned short", n), Buf("float", n), Buf("float", 1024), f"{n}")
        else:
            args = (Buf("unsigned char", n), Buf("unsigned int", 32), f"{n}")
        grid = -(-n // 128) if name == "u8-one-per-thread" else 3
        rewritten = 2 if copies == 4 and name != "u8-one-per-thread" else grid  # the variant's own grid
        out.append(Case(args, ((grid, 1), (128, 1)), ((rewritten, 1), (128, 1)), f"n={n}"))
    return out


@pytest.mark.parametrize("copies", ["block", 4])
@pytest.mark.parametrize("name", sorted(FORMS))
def test_variants_match_the_original_block_by_block(name: str, copies: object, tmp_path: Path) -> None:
    cand = _variants(name)[copies]
    tol = {"rtol": 1e-5, "atol": 1e-4} if "float" in name else {"rtol": 0.0, "atol": 0.0}
    assert_same(tmp_path, FORMS[name][0], cand.source, FORMS[name][1], _cases(name, copies), **tol)


def test_the_emulation_catches_a_lost_tail(tmp_path: Path) -> None:
    """Dropping the scalar tail loses the last n % 4 pixels."""
    name = "u8-grid-stride-256-bins"
    source = _variants(name)["block"].source
    head, sep, rest = source.partition("// the last")
    broken = head + "if (0)" + rest[rest.index("\n") :]
    from tests.rewrite.cuda_blocks import run

    ok, _ = run(tmp_path, FORMS[name][0], broken, FORMS[name][1], _cases(name, "block"), rtol=0.0, atol=0.0)
    assert sep and not ok


def test_variants_compile_for_sm_90(tmp_path: Path) -> None:
    sources = {f"{name}-{copies}": c.source for name in FORMS for copies, c in _variants(name).items()}
    assert len(sources) == 2 * len(FORMS)
    assert_compiled(nvcc_compile(sources, tmp_path))
