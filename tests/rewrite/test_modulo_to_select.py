"""modulo-to-select (fast-math): wrap-around indices whose dividend the index algebra bounds.

Own forms (issue 23: not the measuring set's kernel): a float 3 x 3 torus blur on a 2-D launch with
the neighbour offsets as loop counters (two subtractions: ``x + dx + W`` reaches ``2W``), an int
periodic heat step on a 1-D launch with ``size_t`` sizes, an early ``return`` and the row recovered
with ``/`` (``i < W * H`` bounds ``i / W`` below ``H``), and an unsigned grid-stride cellular
automaton with a flat row start (``c - c % n``) and a product size (the counter's own ``c % n`` is
carried by the loop), and a float bias broadcast ``bias[i % C]`` in a grid-stride loop whose divisor no
guard bounds (carried, with the run-time ``C > 0`` test). Each runs against its original
on the CPU block emulator over shapes with one row, one column and odd sizes, and compiles with nvcc.
Refused forms name the line and the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, modulo_to_select, recipes_for
from tests.rewrite.cuda_blocks import Buf, Case, assert_same, run
from tests.rewrite.helpers import assert_compiled, nvcc_compile

TORUS_BLUR = """
__global__ void torus_blur(const float *src, float *dst, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float acc = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                acc += src[((y + dy + H) % H) * W + (x + dx + W) % W];
        dst[y * W + x] = acc * (1.0f / 9.0f);
    }
}
"""
PERIODIC_HEAT = """
__global__ void periodic_heat(const int *t, int *next, size_t W, size_t H)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= W * H) return;
    size_t col = i % W;
    size_t row = i / W;
    size_t up = (row + H - 1) % H, down = (row + 1) % H;
    size_t left = (col + W - 1) % W, right = (col + 1) % W;
    next[i] = (4 * t[i] + t[up * W + col] + t[down * W + col] + t[row * W + left] + t[row * W + right]) / 8;
}
"""
RING_AUTOMATON = """
extern "C" __global__ void ring_automaton(const unsigned char *cells, unsigned char *out, unsigned n, unsigned rows)
{
    unsigned total = n * rows;
    for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < total; c += gridDim.x * blockDim.x) {
        unsigned base = c - c % n;
        unsigned k = c - base;
        unsigned west = (k + n - 1) % n, east = (k + 1) % n;
        unsigned north = (base + total - n) % total, south = (base + n) % total;
        out[c] = (cells[base + west] + cells[base + east] + cells[north + k] + cells[south + k]) & 3;
    }
}
"""

BIAS_BROADCAST = """
__global__ void bias_broadcast(const float *x, const float *bias, float *y, int n, int C)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = x[i] + bias[i % C];
}
"""


def _launch(grid: list[str], block: list[int]) -> LaunchContext:
    return launch_context({"grid": grid, "block": block})


FORMS: dict[str, tuple[str, LaunchContext, str, str]] = {
    "torus-blur-float-2d": (
        TORUS_BLUR,
        _launch(["ceil_div(W, 16)", "ceil_div(H, 16)"], [16, 16]),
        "torus_blur",
        "<2>",
    ),
    "periodic-heat-size-t": (PERIODIC_HEAT, _launch(["ceil_div(W * H, 128)"], [128]), "periodic_heat", "<1>"),
    "ring-automaton-grid-stride": (RING_AUTOMATON, _launch(["4 * sm_count"], [256]), "ring_automaton", "<1>"),
    "bias-broadcast-carried": (BIAS_BROADCAST, _launch(["8 * sm_count"], [256]), "bias_broadcast", ""),
}
REWRITTEN = {
    "torus-blur-float-2d": 2,
    "periodic-heat-size-t": 4,
    "ring-automaton-grid-stride": 4,
    "bias-broadcast-carried": 0,
}
CARRIED = {
    "ring-automaton-grid-stride": "perfagent_rem0",
    "bias-broadcast-carried": "((C) > 0 ? perfagent_rem0 : i % C)",
}

REFUSED: dict[str, tuple[str, str]] = {
    "may-be-negative": (
        TORUS_BLUR.replace("(x + dx + W) % W", "(x + dx) % W").replace("((y + dy + H) % H)", "y"),
        "line 10: '(x + dx)' is not provably >= 0",
    ),
    "too-far": (
        TORUS_BLUR.replace("(x + dx + W) % W", "(x + dx + 3 * W) % W").replace("((y + dy + H) % H)", "y"),
        "line 10: '(x + dx + 3 * W)' may reach 3 * (W)",
    ),
    "unguarded-divisor": (
        PERIODIC_HEAT.replace("size_t W, size_t H", "size_t W, size_t H, int P")
        .replace("(row + 1) % H", "(row + 1) % P")
        .replace("(col + W - 1) % W, right = (col + 1) % W", "col, right = col"),
        "line 8: the divisor 'P' is not provably >= 1",
    ),
    "constant-divisor": (
        "__global__ void k(const int *a, int *b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) b[i] = a[(i + 1) % 4];\n}\n",
        "line 3: a constant divisor",
    ),
    "shadowed-argument": (
        "__global__ void k(const int *a, int *b, int W) {\n    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (x < W) { int W = 3; b[x] = a[(x + 1) % W]; }\n}\n",
        "line 3: the divisor 'W' is not a size",
    ),
    "narrowing-cast": (
        "__global__ void k(const int *a, int *b, int W) {\n    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (x < W) b[x] = a[(int)(unsigned char)(x + 1) % W];\n}\n",
        "'(unsigned char)(x + 1)' is not index arithmetic",
    ),
    "written-twice": (
        "__global__ void k(const int *a, int *b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n    int j = i;\n    j += n;\n    b[i] = a[(j + 1) % n];\n}\n",
        "line 6: '(j + 1)' is not provably >= 0",
    ),
}


def _request(source: str, launch: LaunchContext) -> RewriteRequest:
    return RewriteRequest(source=source, language="cuda", transform="fast-math", launch=launch)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_wrapped_indices_become_compare_and_subtract(name: str) -> None:
    source, launch, _, steps = FORMS[name]
    req = _request(source, launch)
    assert modulo_to_select.applies(req) is None, modulo_to_select.applies(req)
    [cand] = modulo_to_select.propose(req)
    assert cand.source.count(f"perfagent_wrap{steps}(") == REWRITTEN[name], cand.source
    assert cand.launch is None  # same work per thread: the launch is the spec's
    if name in CARRIED:  # the counter's own remainder is carried by the loop's update
        assert CARRIED[name] in cand.source and ", perfagent_rem0 = perfagent_rem0 >=" in cand.source


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unprovable_remainders_are_refused_with_the_line(name: str) -> None:
    source, why = REFUSED[name]
    req = _request(source, FORMS["periodic-heat-size-t"][1])
    reason = modulo_to_select.applies(req)
    if reason is None:  # other remainders of the kernel were rewritten: this one is named in the notes
        [cand] = modulo_to_select.propose(req)
        reason = "; ".join(cand.notes)
    assert why in reason, reason


def test_the_unprovable_remainder_stays_and_is_named() -> None:
    [cand] = modulo_to_select.propose(_request(PERIODIC_HEAT, FORMS["periodic-heat-size-t"][1]))
    assert "size_t col = i % W;" in cand.source
    assert any("line 6: 'i' may reach 3 * (W)" in note for note in cand.notes), cand.notes


def test_registered_for_fast_math() -> None:
    from knowledge.transforms import catalog

    assert RECIPES["modulo-to-select"] is modulo_to_select.RECIPE
    assert modulo_to_select.RECIPE in recipes_for("fast-math", "cuda")
    assert "modulo-to-select" in catalog()["fast-math"].recipes


def _cases(name: str) -> list[Case]:
    out = []
    for w, h in ((1, 1), (1, 5), (7, 1), (2, 3), (37, 19)):
        size = w * h
        if name == "torus-blur-float-2d":
            grid = (-(-w // 16), -(-h // 16))
            out.append(
                Case(
                    (Buf("float", size), Buf("float", size), str(w), str(h)),
                    (grid, (16, 16)),
                    (grid, (16, 16)),
                    f"{w}x{h}",
                )
            )
        elif name == "periodic-heat-size-t":
            grid1 = (-(-size // 128),)
            out.append(
                Case(
                    (Buf("int", size), Buf("int", size), f"(size_t){w}", f"(size_t){h}"),
                    (grid1, (128, 1)),
                    (grid1, (128, 1)),
                    f"{w}x{h}",
                )
            )
        elif name == "bias-broadcast-carried":
            for blocks in (1, 3, 5):
                for c in (w, -w):  # a negative divisor: the run-time test keeps the original remainder
                    args = (Buf("float", size), Buf("float", w), Buf("float", size), str(size), str(c))
                    out.append(
                        Case(args, ((blocks,), (64, 1)), ((blocks,), (64, 1)), f"{size} % {c} grid {blocks}")
                    )
        else:
            out.extend(
                Case(
                    (Buf("unsigned char", size), Buf("unsigned char", size), f"{w}u", f"{h}u"),
                    ((blocks,), (64, 1)),
                    ((blocks,), (64, 1)),
                    f"{w}x{h} grid {blocks}",
                )
                for blocks in (1, 3)
            )
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_computes_what_the_original_computes(name: str, tmp_path: Path) -> None:
    source, launch, kernel, _ = FORMS[name]
    [cand] = modulo_to_select.propose(_request(source, launch))
    assert_same(tmp_path, source, cand.source, kernel, _cases(name), rtol=0.0, atol=0.0)


def test_the_emulation_catches_one_subtraction_too_few(tmp_path: Path) -> None:
    """The blur's ``x + dx + W`` reaches ``2W`` at the right edge: one subtraction leaves ``W`` there."""
    source, launch, kernel, _ = FORMS["torus-blur-float-2d"]
    [cand] = modulo_to_select.propose(_request(source, launch))
    broken = cand.source.replace("perfagent_wrap<2>((x + dx + W), W)", "perfagent_wrap<1>((x + dx + W), W)")
    assert broken != cand.source
    ok, _ = run(tmp_path, source, broken, kernel, _cases("torus-blur-float-2d"), rtol=0.0, atol=0.0)
    assert not ok


def test_candidates_compile(tmp_path: Path) -> None:
    sources = {}
    for name, (source, launch, *_) in FORMS.items():
        [cand] = modulo_to_select.propose(_request(source, launch))
        sources[name.replace("-", "_")] = cand.source
    assert_compiled(nvcc_compile(sources, tmp_path))
