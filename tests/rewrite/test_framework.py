"""The recipe framework: discovery, the shared gates, one parse per source, the compile check, and the
launch sweeps a structural rewrite gets (checked block by block on the CPU against the original)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tree_sitter import Parser, Tree

from perfagent.rewrite.base import RETUNED, Candidate, LaunchContext, RewriteRequest, launch_context
from perfagent.rewrite.recipes import RECIPES, _compile_check, _cuda, _tree, privatize_atomics
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, at, register
from perfagent.rewrite.recipes_backend import RecipesRewriter
from perfagent.workloads.expr import evaluate_int
from perfagent.workloads.launch_spec import DEFAULT_DEVICE_ATTRS, Expr
from tests.rewrite.cuda_blocks import Buf, Case, assert_same
from tests.rewrite.helpers import ROOT, nvcc_or_skip

HIST = """
#define NBINS 16
__global__ void hist16(const unsigned int *v, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(bins + (v[i] & (NBINS - 1)), 1u);
}
"""
SPEC = launch_context(
    {
        "grid": ["ceil_div(n, 256)"],
        "block": [256],
        "params": {"n": 300},
        "args": [
            {"name": "v", "shape": ["n"]},
            {"name": "bins", "shape": ["NBINS"]},
            {"name": "n", "value": "n"},
        ],
    }
)


def _request(source: str = HIST, launch: LaunchContext | None = SPEC, **fields: Any) -> RewriteRequest:
    return RewriteRequest(
        source=source, language="cuda", transform="privatize-atomics", launch=launch, **fields
    )


def test_every_public_recipe_module_is_registered() -> None:
    modules = {
        p.stem
        for p in (ROOT / "perfagent" / "rewrite" / "recipes").glob("*.py")
        if not p.stem.startswith("_") and p.stem not in ("framework", "registry")
    }
    assert {name.replace("-", "_") for name in RECIPES} == modules


class _Counting:
    """A parser that counts what it is asked to parse (by the bytes)."""

    def __init__(self, inner: Parser) -> None:
        self.inner = inner
        self.seen: dict[bytes, int] = {}

    def parse(self, data: bytes) -> Tree:
        self.seen[data] = self.seen.get(data, 0) + 1
        return self.inner.parse(data)


@pytest.mark.parametrize(
    ("transform", "path"),
    [
        ("privatize-atomics", "examples/cuda/09_histogram_atomics/slow.cu"),
        ("coalesce-access", "examples/cuda/09_histogram_atomics/slow.cu"),
    ],
)
def test_each_source_is_parsed_once_per_proposal(
    monkeypatch: pytest.MonkeyPatch, transform: str, path: str
) -> None:
    counting = _Counting(_tree._parser())
    monkeypatch.setattr(_tree, "_parser", lambda: counting)
    _tree._parse_bytes.cache_clear()
    source = (ROOT / path).read_text()
    req = RewriteRequest(source=source, language="cuda", transform=transform, launch=SPEC)
    backend = RecipesRewriter()
    backend.applies(req)
    backend.propose(req)
    assert counting.seen.get(source.encode()) == 1
    assert set(counting.seen.values()) == {1}, "some source (original or candidate) was parsed twice"


class _Toy(CudaRecipe[Any]):
    name = "toy"
    transforms = ("toy",)
    summary = "a recipe made in a test"
    needs_launch = True
    launch_dims = 2

    def match(self, src: Source) -> Any:
        kernel = src.kernel
        if isinstance(kernel, str):
            return kernel
        body = kernel.child_by_field_name("body")
        assert body is not None
        return body

    def plan(self, src: Source, m: Any) -> list[Variant]:
        at_start = m.start_byte + 1
        return [
            Variant(edits=[Edit(at_start, at_start, "\n    undeclared_name = 1;")], description="broken"),
            Variant(
                edits=[Edit(at_start, at_start, "\n    int unused_ = 1; (void)unused_;")], description="fine"
            ),
        ]


def test_the_gates_refuse_in_shared_words() -> None:
    toy = register(_Toy())
    assert toy.applies(_request(launch=None)) == "no launch spec: the grid is set in the source's own launch"
    assert toy.applies(_request()) == "the launch spec's grid and block are not both 2-D"
    python = RewriteRequest(source="x = 1\n", language="python", transform="toy")
    assert toy.applies(python) == "not a CUDA source"


def test_refusals_name_their_line() -> None:
    tree = _cuda.parse(HIST)
    call = next(n for n in _cuda.walk(tree.root_node) if n.type == "call_expression")
    assert at(call, "why") == "line 6: why"


def test_the_compile_check_drops_a_variant_that_does_not_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    nvcc_or_skip()
    monkeypatch.setenv(_compile_check.ENV, "nvcc")
    spec = SPEC.model_copy(update={"grid": ["1", "1"], "block": ["16", "16"]})
    [cand] = register(_Toy()).propose(_request(launch=spec))
    assert cand.description == "fine"
    assert any("did not compile" in note and "undeclared_name" in note for note in cand.notes), cand.notes
    monkeypatch.setenv(_compile_check.ENV, "off")
    assert len(register(_Toy()).propose(_request(launch=spec))) == 2


def _value(expr: Expr, n: int) -> int:
    return evaluate_int(str(expr), {**DEFAULT_DEVICE_ATTRS, "n": n})


def test_a_structural_rewrite_brings_its_launch_sweeps() -> None:
    primaries = privatize_atomics.propose(_request())  # a per-block copy, then per-warp copies
    primary = primaries[0]
    batch = privatize_atomics.RECIPE.candidates(_request(max_candidates=8))
    assert batch[: len(primaries)] == primaries and len(primaries) == 2
    sweeps = [c for c in batch if RETUNED in c.parameters and c.source == primary.source]
    assert [c.launch.block for c in sweeps if c.launch] == [[1024], [512], [128]]
    for cand in sweeps:
        assert cand.source == primary.source and RETUNED in cand.parameters
        assert cand.launch is not None and cand.launch.grid is not None and cand.launch.block is not None
        block = int(cand.launch.block[0])
        for n in (1, 300, 5000):  # every thread of the original still has one in the new launch
            assert _value(cand.launch.grid[0], n) * block >= n


def test_the_backend_keeps_slots_for_the_sweeps() -> None:
    batch = RecipesRewriter().propose(_request(max_candidates=4))  # two rewrites, then their sweeps
    assert [RETUNED in c.parameters for c in batch] == [False, False, True, True]


def _grid(cand: Candidate) -> Expr:
    assert cand.launch is not None and cand.launch.grid is not None
    return cand.launch.grid[0]


def _block(cand: Candidate) -> Expr:
    assert cand.launch is not None and cand.launch.block is not None
    return cand.launch.block[0]


def test_the_sweeps_compute_what_the_original_computes_block_by_block(tmp_path: Path) -> None:
    batch = privatize_atomics.RECIPE.candidates(_request(max_candidates=8))
    cases = [
        Case(
            (Buf("unsigned int", n), Buf("unsigned int", 16), f"{n}"),
            ((-(-n // 256), 1), (256, 1)),
            ((_value(_grid(cand), n), 1), (int(_block(cand)), 1)),
            f"{cand.parameters[RETUNED]}, n={n}",
        )
        for cand in batch
        if RETUNED in cand.parameters and cand.source == batch[0].source
        for n in (5, 300)
    ]
    assert len(cases) == 6
    # every sweep shares the primary's source: one program checks them all
    assert_same(tmp_path, HIST, batch[0].source, "hist16", cases, rtol=0.0, atol=0.0)


def test_no_sweep_when_the_original_index_depends_on_the_block() -> None:
    per_block = HIST.replace("if (i < n)", "if (i < n && threadIdx.x % 2 == 0)")
    batch = privatize_atomics.RECIPE.candidates(_request(per_block, max_candidates=8))
    assert batch and not any(RETUNED in c.parameters for c in batch)


@pytest.mark.gpu
def test_the_nvrtc_check_drops_a_variant_that_does_not_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where cuda.core is installed (the GPU machines) the default check is NVRTC, in process."""
    pytest.importorskip("cuda.core")
    monkeypatch.setenv(_compile_check.ENV, "auto")
    assert _compile_check.compiler() == "nvrtc"
    spec = SPEC.model_copy(update={"grid": ["1", "1"], "block": ["16", "16"]})
    [cand] = register(_Toy()).propose(_request(launch=spec))
    assert cand.description == "fine"
    assert any("nvrtc" in note and "did not compile" in note for note in cand.notes), cand.notes


GEMV = """
extern "C" __global__ void gemv(const float* A, const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += A[row * cols + c] * x[c];
    y[row] = s;
}
"""


def test_a_warp_per_row_is_swept_and_every_sweep_covers_the_rows_lane_by_lane(tmp_path: Path) -> None:
    """cooperative-row's warp variant re-tuned: blocks swept, grid re-derived from the rows' threads;
    each sweep stores what the row-per-thread original stores (32 real lanes per warp)."""
    from tests.rewrite import cuda_lanes

    spec = LaunchContext(grid=["ceil_div(rows, 64)"], block=[64], params={"rows": 70})
    req = RewriteRequest(
        source=GEMV, language="cuda", transform="cooperative-row", launch=spec, max_candidates=16
    )
    batch = RECIPES["cooperative-row"].candidates(req)
    warp = batch[0]
    sweeps = [c for c in batch if RETUNED in c.parameters and c.source == warp.source]
    # one swept block for the warp variant (the block-per-item variant's larger blocks follow in the batch)
    assert [int(_block(c)) for c in sweeps] == [256]
    blocked = [c for c in batch if c.parameters.get("rows_per_block") == 1]
    vectorised = [int(_block(c)) for c in blocked if c.parameters.get("vector_lanes")]
    scalar = [int(_block(c)) for c in blocked if not c.parameters.get("vector_lanes")]
    assert scalar == [256, 1024, 512, 128]
    # 16-byte lanes need fewer threads per row: the blocks next to the current one first
    assert vectorised == [256, 128, 512, 1024]
    assert warp.parameters.get("vector_lanes"), "the vectorised warp variant leads the batch"

    def rows_value(expr: Expr, rows: int) -> int:
        return evaluate_int(str(expr), {**DEFAULT_DEVICE_ATTRS, "rows": rows})

    cases = [
        cuda_lanes.Case(
            (
                cuda_lanes.Buf("float", rows * 40),
                cuda_lanes.Buf("float", 40),
                cuda_lanes.Buf("float", rows),
                f"{rows}",
                "40",
            ),
            (-(-rows // 64), 64),
            (rows_value(_grid(c), rows), int(_block(c))),
            f"{c.parameters[RETUNED]}, rows={rows}",
        )
        for c in sweeps
        for rows in (5, 70)
    ]
    cuda_lanes.assert_same(tmp_path, GEMV, warp.source, "gemv", cases, rtol=2e-5, atol=2e-5)


def test_a_template_kernel_is_found_by_its_instantiated_name() -> None:
    """A launch spec names a template kernel as instantiated (``k<double, 0, 2, 1>``); the definition is
    named ``k``: without this every recipe said 'no __global__ kernel named k<double, 0, 2, 1>'."""
    from perfagent.rewrite.recipes import _cuda

    source = (
        "template <typename T, int A>\n__global__ void k(T *p) { p[threadIdx.x] = A; }\n"
        "__global__ void other(float *p) { p[0] = 1; }\n"
        "template __global__ void k<double, 2>(double *);\n"
    )
    tree = _cuda.require_clean(source)
    found = _cuda.select_kernel(tree, "k<double, 2>")
    assert not isinstance(found, str) and _cuda.function_name(found) == "k"
    assert (
        _cuda.select_kernel(tree, "missing<int>") == "no __global__ kernel named missing<int> in the source"
    )
