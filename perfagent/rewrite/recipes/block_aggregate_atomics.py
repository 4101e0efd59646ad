"""block-aggregate-atomics: one atomic per block instead of one per thread, when the address is the block's.

The "just use atomics" reduction (a dot product, a sum, a max, a counter, a per-block or per-row total:
``atomicAdd(result, a[i] * b[i])``) sends every thread's value to one L2 address, where the atomics
serialise. The textbook fix (PMPP 4th ed. ch. 10; Luitjens, "Faster Parallel Reductions on Kepler";
vLLM's FP8 scale kernel): each thread combines its values locally (over a grid-stride loop, so a thread
has many), warps reduce with shuffles, warp results meet in shared memory, and one atomic per block
reaches global memory.

Precondition (``_atomic_sites``): an ``atomicAdd`` / ``atomicSub`` / ``atomicMax`` / ``atomicMin`` /
``atomicAnd`` / ``atomicOr`` / ``atomicXor`` statement (result unused) on an element type CUDA defines
it for, whose address is rooted at a pointer parameter and is block-invariant — proven by a taint check
over the kernel's assignments (no ``threadIdx``, no memory read, no variable that changes); the
parameter is used nowhere else and with one atomic function only; the kernel does not already cooperate
(shared memory, barriers, warp collectives); no ``goto``. Float maxima written on the bit pattern of
non-negative floats (``atomicMax((unsigned *)p, __float_as_uint(a))``) are unsigned maxima and match.

The rewrite: per-thread accumulators (identity values: inactive threads and guards need no shuffle under
divergence), each atomic replaced by a local combine, and a block reduction at the end that every thread
reaches (a kernel with ``return`` runs its body in an immediately invoked lambda, so a return ends the
thread's share of the work, not the thread). Candidates: the original launch made grid-stride first
(thread-coarsening's loop, one wave of blocks, the grid and block swept: many elements per thread, few
blocks, few atomics), then the aggregation at the original launch. Integer and max/min results are
exact; float sums change order (the verifier's tolerance judges them).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import (
    _aggregate_emit,
    _atomic_helpers,
    _atomic_sites,
    _cuda,
    _thread_index,
    thread_coarsening,
)
from perfagent.rewrite.recipes._aggregate_emit import Accumulator
from perfagent.rewrite.recipes._threads import block_free_retune
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Retune, Source, Variant, at, register

NAME = "block-aggregate-atomics"


@dataclass(frozen=True)
class _Match:
    kernel: Node
    body: Node
    accumulators: list[Accumulator]
    returns: bool
    notes: list[str]


def analyse(src: Source) -> _Match | str:
    """The kernel's block-invariant atomics, or why there are none to aggregate."""
    found = src.kernel_body
    if isinstance(found, str):
        return found
    kernel, body = found
    jump = next((n for n in _cuda.walk(body) if n.type in ("goto_statement", "labeled_statement")), None)
    if jump is not None:
        return at(jump, "goto or a label: the reduction at the end could be skipped")
    constants = _file_constants(src)
    sites, reasons = _atomic_sites.sites(kernel, body, constants, _atomic_helpers.helpers(src.tree))
    if not sites:
        if not reasons:
            return "no atomicAdd/Sub/Max/Min/And/Or/Xor statement into a pointer parameter"
        return "; ".join(reasons)
    why = _thread_index.cooperation(body)
    if why is not None:
        return f"{why}: the block already reduces before its atomics, or shares memory the rewrite would race with"
    accs = _aggregate_emit.accumulators(sites)
    returns = any(n.type == "return_statement" for n in _cuda.walk(body))
    return _Match(kernel, body, accs, returns, reasons)


def _file_constants(src: Source) -> set[str]:
    """Every ``#define`` name and file-scope constant: values the whole grid shares (a ``const`` local of a
    function is not one: its value may come from the thread)."""
    macros = {
        _cuda.text(name)
        for node in _cuda.walk(src.tree.root_node)
        if node.type in ("preproc_def", "preproc_function_def")
        and (name := node.child_by_field_name("name")) is not None
    }
    scoped = {
        name
        for name, const in src.constants.items()
        if _cuda.enclosing(const.value_node, "function_definition") is None
    }
    return macros | scoped


def rewrite(text: str, m: _Match) -> str:
    """``text`` (whose tree ``m`` was proven on) with the atomics aggregated."""
    edits = [
        Edit(
            site.statement.start_byte,
            site.statement.end_byte,
            _aggregate_emit.local_update(acc, _cuda.text(site.value)),
        )
        for acc in m.accumulators
        for site in acc.sites
    ]
    decls = _aggregate_emit.declarations(m.accumulators)
    tail = _aggregate_emit.reduction(m.accumulators)
    lo, hi = m.body.start_byte + 1, m.body.end_byte - 1
    if not m.returns:
        edits += [Edit(lo, lo, "\n" + decls), Edit(hi, hi, tail)]
        return _cuda.apply_edits(text, edits)
    # a return must end this thread's work, not skip the block reduction: the body becomes a lambda
    edits += [
        Edit(lo, lo, "\n" + decls + "    [&]() {  // a return here ends this thread's share, not the thread"),
        Edit(hi, hi, "\n    }();\n" + tail),
    ]
    return _cuda.apply_edits(text, edits)


def _describe(m: _Match) -> str:
    what = ", ".join(f"{a.function}({a.address}) x{len(a.sites)}" for a in m.accumulators)
    return f"aggregate block-invariant atomics ({what}): per-thread accumulators, warp shuffles, one atomic per block"


class _BlockAggregate(CudaRecipe[_Match]):
    name = NAME
    transforms = ("privatize-atomics", "warp-shuffle-reduction")
    summary = (
        "atomics into one address per block (dot products, sums, maxima, counters): local accumulators, a warp-"
        "shuffle + shared-memory block reduction, one atomic per block; grid-stride with a re-tuned grid"
    )

    def match(self, src: Source) -> _Match | str:
        return analyse(src)

    def plan(self, src: Source, m: _Match) -> list[Variant]:
        out = []
        strided = _grid_stride(src)
        if strided is not None:
            out.append(strided)
        out.append(
            Variant(
                source=rewrite(src.text, m),
                description=_describe(m) + "; launch unchanged",
                parameters={"accumulators": len(m.accumulators), "grid_stride": False},
                notes=m.notes,
                # fewer, larger blocks mean fewer atomics: swept when no grid-stride form is offered
                retune=None if strided is not None else block_free_retune(m.kernel, src.launch, per="block"),
            )
        )
        return out


def _grid_stride(src: Source) -> Variant | None:
    """The textbook form: thread-coarsening's grid-stride loop first, then the aggregation; None when the
    kernel has no coarsenable 1-D index (or no launch spec)."""
    if src.launch is None or len(src.launch.grid) != 1 or len(src.launch.block) != 1:
        return None
    strided = thread_coarsening.grid_stride(src)
    if isinstance(strided, str):
        return None
    text, launch = strided
    again = Source(src.request.model_copy(update={"source": text}))
    m = analyse(again)
    if isinstance(m, str):
        return None
    return Variant(
        source=rewrite(text, m),
        description=_describe(m)
        + f"; grid-stride loop, one wave of blocks (grid {launch.grid[0] if launch.grid else '?'})",
        parameters={"accumulators": len(m.accumulators), "grid_stride": True},
        launch=launch,
        notes=m.notes,
        # many elements per thread now: the grid (2, 4, 8 blocks per SM) and the block are swept
        retune=Retune(per="thread", threads=None, grid_stride=True),
    )


RECIPE = register(_BlockAggregate())
applies, propose = RECIPE.applies, RECIPE.propose
