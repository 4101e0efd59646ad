"""privatize-atomics: global atomicAdd into a small array -> per-block shared copy, merged once.

Positive forms: examples/cuda/09 (grid-stride, guarded macro) read as it is, a one-element-per-thread
histogram with unsigned counts and ``bins + b``, a float-weighted histogram with a constexpr size, and
an image histogram on 2-D blocks (the flattened thread index zeroes and merges every entry once).
Each rewrite runs against its original on the block-synchronous CPU emulator (real barriers, guard
words) and compiles with nvcc; refused forms name why.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from perfagent.rewrite.base import Candidate, LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, privatize_atomics, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import assert_compiled, nvcc_compile

ROOT = Path(__file__).resolve().parents[2]
EX09 = ROOT / "examples" / "cuda" / "09_histogram_atomics"


def _spec(
    args: list[tuple[str, list[str]]], grid: list[object] | None = None, block: list[object] | None = None
) -> LaunchContext:
    return launch_context(
        {
            "grid": grid or ["ceil_div(n, 256)"],
            "block": block or [256],
            "args": [{"name": n, "shape": s} for n, s in args],
        }
    )


def _ex09() -> tuple[str, LaunchContext]:
    return (EX09 / "slow.cu").read_text(), launch_context(
        tomllib.loads(next(EX09.glob("*.launch.toml")).read_text())
    )


PER_THREAD = """
#define NBINS 16
__global__ void hist16(const unsigned int *v, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(bins + (v[i] & (NBINS - 1)), 1u);
}
"""
WEIGHTED = """
constexpr int kBins = 64;
__global__ void weighted(const float *x, const float *w, float *hist, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int b = min(max((int)((x[i] + 1.0f) * 32.0f), 0), kBins - 1);
        atomicAdd(&hist[b], w[i]);
    }
}
"""
IMAGE_2D = """
__global__ void image_hist(const int *img, int *hist, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int v = img[y * w + x] & 255;
        atomicAdd(&hist[v], 1);
    }
}
"""

FORMS: dict[str, tuple[str, LaunchContext]] = {
    "examples-09-grid-stride": _ex09(),
    "per-thread-unsigned-pointer-plus": (PER_THREAD, _spec([("v", ["n"]), ("bins", ["NBINS"])])),
    "weighted-float-constexpr": (WEIGHTED, _spec([("x", ["n"]), ("w", ["n"]), ("hist", ["kBins"])])),
    "image-2d-blocks-literal-size": (
        IMAGE_2D,
        _spec([("img", ["h", "w"]), ("hist", ["256"])], ["ceil_div(w, 16)", "ceil_div(h, 16)"], [16, 16]),
    ),
}

REFUSED: dict[str, tuple[str, LaunchContext, str]] = {
    # a top-level `if (i >= n) return;` is followed (test_privatize_runtime.py); one inside the work is not
    "return-inside-the-work": (
        PER_THREAD.replace(
            "if (i < n)\n        atomicAdd",
            "if (i < n) {\n        if (v[i] == 0u) return;\n        atomicAdd",
        ).replace("1u);\n}", "1u);\n    }\n}"),
        FORMS["per-thread-unsigned-pointer-plus"][1],
        "a return inside the work",
    ),
    "result-used": (
        PER_THREAD.replace(
            "atomicAdd(bins + (v[i] & (NBINS - 1)), 1u);",
            "{ unsigned int o = atomicAdd(bins + (v[i] & (NBINS - 1)), 1u); (void)o; }",
        ),
        FORMS["per-thread-unsigned-pointer-plus"][1],
        "the result of atomicAdd on bins is used",
    ),
    "array-read-too": (
        PER_THREAD.replace("if (i < n)", "if (i < n && bins[0] < 100u)"),
        FORMS["per-thread-unsigned-pointer-plus"][1],
        "bins is used other than as the target of atomicAdd",
    ),
    "runtime-size": (
        PER_THREAD,
        _spec([("v", ["n"]), ("bins", ["nbins"])]),
        "nbins is neither a constant nor a scalar argument",  # a run-time size must be an argument's value
    ),
    "too-big-for-shared-memory": (
        PER_THREAD.replace("#define NBINS 16", "#define NBINS 16384")
        .replace("unsigned int *bins", "unsigned long long *bins")
        .replace("1u);", "1ull);"),
        _spec([("v", ["n"]), ("bins", ["NBINS"])]),
        "does not fit the 48 KiB of static shared memory",
    ),
    "no-launch-spec": (PER_THREAD, None, "no launch spec"),  # type: ignore[dict-item]
    "no-atomics": (
        PER_THREAD.replace("atomicAdd(bins + (v[i] & (NBINS - 1)), 1u);", "bins[i % NBINS] = v[i];"),
        FORMS["per-thread-unsigned-pointer-plus"][1],
        "no atomicAdd into a pointer argument",
    ),
}


def _request(source: str, launch: LaunchContext | None) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="privatize-atomics", launch=launch)


def _per_block(request: RewriteRequest) -> Candidate:
    """The per-block copy (the per-warp variant: tests/rewrite/test_privatize_variants.py)."""
    return next(c for c in privatize_atomics.propose(request) if c.parameters["copies"] == "block")


@pytest.mark.parametrize("name", sorted(FORMS))
def test_positive_forms(name: str) -> None:
    req = _request(*FORMS[name])
    assert privatize_atomics.applies(req) is None, privatize_atomics.applies(req)
    cand = _per_block(req)
    assert cand.source.count("__syncthreads();") == 2 and "__shared__" in cand.source
    assert "atomicAdd(&perfagent_private[" in cand.source or "atomicAdd(perfagent_private +" in cand.source
    assert cand.launch is None  # the launch stays


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_forms(name: str) -> None:
    source, launch, why = REFUSED[name]
    reason = privatize_atomics.applies(_request(source, launch))
    assert reason is not None and not reason.startswith("privatize-atomics") and why in reason, reason
    assert privatize_atomics.propose(_request(source, launch)) == []


def test_registered_and_in_the_catalog() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["privatize-atomics"] is privatize_atomics.RECIPE
    assert privatize_atomics.RECIPE in recipes_for("privatize-atomics", "cuda")
    entry = catalog()["privatize-atomics"]
    assert "privatize-atomics" in entry.recipes and "recipes" in entry.backends


# ------------------------------------------------------------------------------ block-synchronous emulation

KERNELS = {
    "examples-09-grid-stride": "histogram_global_atomics",
    "per-thread-unsigned-pointer-plus": "hist16",
    "weighted-float-constexpr": "weighted",
    "image-2d-blocks-literal-size": "image_hist",
}


def _cases(name: str) -> list[Case]:
    if name == "examples-09-grid-stride":
        return [
            Case((Buf("int", n), Buf("int", 256), f"{n}"), ((3, 1), (64, 1)), ((3, 1), (64, 1)), f"n={n}")
            for n in (1, 1000)
        ]
    if name == "per-thread-unsigned-pointer-plus":
        return [
            Case(
                (Buf("unsigned int", n), Buf("unsigned int", 16), f"{n}"),
                ((-(-n // 64), 1), (64, 1)),
                ((-(-n // 64), 1), (64, 1)),
                f"n={n}",
            )
            for n in (5, 300)
        ]
    if name == "weighted-float-constexpr":
        return [
            Case(
                (Buf("float", n), Buf("float", n), Buf("float", 64), f"{n}"),
                ((2, 1), (32, 1)),
                ((2, 1), (32, 1)),
                f"n={n}",
            )
            for n in (7, 500)
        ]
    w, h = 21, 13
    return [
        Case(
            (Buf("int", w * h), Buf("int", 256), f"{w}", f"{h}"),
            ((2, 2), (16, 8)),
            ((2, 2), (16, 8)),
            f"{w}x{h}",
        )
    ]


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_matches_the_original_block_by_block(name: str, tmp_path: Path) -> None:
    source, launch = FORMS[name]
    cand = _per_block(_request(source, launch))
    tol = {"rtol": 1e-5, "atol": 1e-5} if name == "weighted-float-constexpr" else {"rtol": 0.0, "atol": 0.0}
    assert_same(tmp_path, source, cand.source, KERNELS[name], _cases(name), **tol)


def test_the_emulation_catches_a_merge_without_its_barrier(tmp_path: Path) -> None:
    """Dropping the second barrier merges counts other threads have not added yet."""
    from tests.rewrite.cuda_blocks import run

    source, launch = FORMS["examples-09-grid-stride"]
    cand = _per_block(_request(source, launch))
    head, sep, rest = cand.source.rpartition("__syncthreads();")
    ok, _ = run(
        tmp_path,
        source,
        head + rest,
        KERNELS["examples-09-grid-stride"],
        _cases("examples-09-grid-stride"),
        rtol=0.0,
        atol=0.0,
    )
    assert sep and not ok


@pytest.mark.parametrize("name", sorted(FORMS))
def test_candidates_compile(name: str, tmp_path: Path) -> None:
    cand = _per_block(_request(*FORMS[name]))
    assert_compiled(nvcc_compile({name: cand.source}, tmp_path))
