"""cooperative-row: give a work item that one thread walks alone to a whole warp (or block).

Row-per-thread kernels (GEMV, row sums and maxima, softmax, L2/layer norm) derive a row index from the
x thread coordinates and loop over the row: the 32 lanes of a warp read 32 addresses a row apart, and
for short grids there are few threads at all. The textbook fix lets the 32 lanes of a warp share the
row: lane-strided loops (coalesced), a butterfly of ``__shfl_xor_sync`` after each reduction loop (so
every lane holds the row's result, which later passes need), lane 0 alone for scalar stores, and a grid
32 times larger.

The same holds for any work item one thread walks with a long serial loop (issue 23): a column (the walk
stays strided; the win is parallelism: a few warps become thousands), a plane (a rectangular nest
``for h, for w``, flattened: ``_coop_row_nest``), N planes of a channel (batch norm), a row gathered
through an index read once (``table + ids[t] * dim``: an embedding lookup), items handed out by a
grid-stride loop (its start and step divided by the sharers), and passes that only store (a copy, a map
whose iteration keeps private running values and serial inner loops: a pooling window with its argmax,
an SpMM output column with its sparse inner sum), and passes that update an output row atomically (a
scatter-add over edges, ``index_add``, a segment sum: ``_coop_row_atomics``). Passes without reductions
also get a part-warp variant (16 lanes per row) for rows shorter than a warp's loads.

Precondition, proven on the parse tree of the kernel:
- a 1-D launch whose block is a multiple of 32, one index derived from the x thread coordinates (the
  row, never reassigned), no other use of threadIdx/blockIdx/blockDim, no shared memory or barriers, and
  only commutative atomics whose lanes update distinct elements (``_coop_row_atomics``); so every warp holds one row and all code outside the loops is the same in its 32 lanes;
- every pass (a loop inside no other loop but the item loop) counts up by one from a start while
  ``i < bound`` (``<=``), or is a perfect rectangular nest of such loops (split as one flattened loop);
  names its body declares and reassigns, and its inner loops' counters, are private to one iteration
  (anything goes with them, but no store index reads them); otherwise its body is made of: declarations of per-iteration scalars with a value (``float e = expf(x[i] - m);``),
  element stores ``p[... + i] = e`` / ``p[... + i] /= s`` / ``p[... + i]++``, associative updates of
  accumulators — ``acc += e``, ``acc = acc + e`` (or ``e + acc``), ``acc++``, ``acc = fmaxf(acc, e)``
  (``max``, ``fmax``, ``fminf``, ``min``, ``fmin``, either argument order) — and ``if``/``else`` over
  those; no accumulator of a loop is read in that loop except by its own update (a running value,
  such as a prefix sum, is a loop-carried dependency and is refused), so one loop may fuse an
  element-wise pass with any number of reductions (softmax's ``e = expf(..); out[i] = e; sum += e;``);
- no assignment inside another expression, no address taken, no pointer dereferenced or moved, no
  call made as a statement (nothing is written that the analysis does not see);
- memory is reached by subscripts of pointer parameters or of row pointers into them declared once
  outside the loops (``const float* in_row = input + row * dim;``, ``&out[row * n]``); a buffer the
  kernel stores to in its loops is read and written through one subscript ``p[E + i]`` in all its
  loops (unit stride in the counter, ``E`` free of it and of any name assigned or declared twice),
  and those loops share their start, so every element of it stays with one lane from pass to pass
  (``out[i] = e`` then ``out[i] /= sum``); a buffer stored outside the loops (``out[row] = acc``) is
  read only in those stores, which lane 0 makes.

The rewrite: row = old row / 32, ``coop_lane = threadIdx.x % 32``; each loop starts at its start plus
the lane and steps by 32; after a loop, a butterfly per accumulator. A max/min accumulator may enter the
loop with any value every lane shares (an element, ``-INFINITY``, the result of an earlier loop): the
combine is idempotent, so the butterfly still gives the row's value (``max_val = in_row[0]`` then a
loop from 1 stays as it is, each lane starting from element 0). A sum must count its incoming value
once: unless the accumulator is declared with a literal zero and untouched until the loop, lanes other
than 0 set it to zero first (``float s = v[0]; for (c = 1; ...) s += v[c]``, or a sum continued by a
second loop). The arithmetic per element is unchanged; only the summation order of reductions changes
(the verifier judges that with its tolerance). Distinct pointer parameters are taken not to overlap.

Each variant comes first again with vectorised lanes (``_lane_vector``): the sharing proven here lets a
lane take 16 bytes of consecutive elements per step as well as one element, so the loops whose arrays
are ``p[i]`` / ``p[E + i]`` of a type with a 16-byte form move ``uint4`` / ``float4`` per lane behind a
run-time alignment test, the scalar loop taking the tail (the textbook row kernels' ``x8`` packs).
"""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _coop_row_emit, _cuda, _launch, _row_hoist
from perfagent.rewrite.recipes._coop_row_analysis import analyse
from perfagent.rewrite.recipes._coop_row_nest import expand_loop_macros
from perfagent.rewrite.recipes._coop_row_syntax import Plan
from perfagent.rewrite.recipes._lane_vector_emit import vectorize_lanes
from perfagent.rewrite.recipes.framework import CudaRecipe, Retune, Source, Variant, register
from perfagent.rewrite.recipes.vectorize_access import ALIGN_NOTE
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "cooperative-row"
PART_WARP = 16
"""The lanes per row of the part-warp variant (passes without reductions only)."""
BLOCK_PER_ITEM = 256
"""The block of the block-per-item variant before its sweep (the row index is blockIdx.x whatever it is)."""


def _block_per_row(launch: LaunchContext, kernel: Node, plan: Plan) -> str | None:
    """Why the block-per-row variant does not apply (its block must be whole warps, up to 1024), or None."""
    block = _launch.block_size(launch)
    if block is None:
        return f"the block size {launch.block[0]} cannot be evaluated"
    if block <= 0 or block % 32 or block > _coop_row_emit.MAX_BLOCK:
        return f"the block ({block} threads) is not a whole number of warps up to {_coop_row_emit.MAX_BLOCK}"
    types = _coop_row_emit.accumulator_types(kernel, plan)
    return types if isinstance(types, str) else None


class _CooperativeRow(CudaRecipe[Plan]):
    name = NAME
    transforms = ("cooperative-row",)
    summary = (
        "row-per-thread reductions (GEMV, softmax, norms): a warp (or, for few long rows, a block) per row"
    )
    needs_launch = True
    launch_dims = 1

    def match(self, src: Source) -> Plan | str:
        expanded = expand_loop_macros(src.text)
        if expanded != src.text:  # a grid-stride loop behind a macro (CUDA_KERNEL_LOOP) is read written out
            src = Source(src.request.model_copy(update={"source": expanded}))
        hoisted = _hoisted(self, src)
        if hoisted is not None and not isinstance(hoisted, str):
            return hoisted  # each element recomputed its row: share the row's work, once per row
        plan = src.on_kernel(analyse)
        assert src.launch is not None
        if isinstance(plan, str):
            return f"{plan}; {hoisted}" if hoisted else plan
        plan.source, plan.kernel = src.text, src.kernel if not isinstance(src.kernel, str) else None
        return _launch.warp_multiple_block(src.launch) or plan

    def plan(self, src: Source, plan: Plan) -> list[Variant]:
        if plan.launch is not None:  # planned on the kernel rewritten one thread per row
            src = Source(src.request.model_copy(update={"source": plan.source, "launch": plan.launch}))
        kernel = plan.kernel
        assert src.launch is not None and kernel is not None
        grid, block = str(src.launch.grid[0]), str(src.launch.block[0])
        reductions = [f"{acc} ({combine})" for acc, combine in plan.reductions] or [
            "none (map or atomic passes)"
        ]
        out = [
            Variant(
                source=_coop_row_emit.rewrite(plan.source, plan, _coop_row_emit.WARP),
                description=(
                    f"warp per row: lane-strided loops (coalesced), butterfly shuffles after the reductions of "
                    f"{', '.join(reductions)}, lane 0 stores the scalars; grid x32. Summation order changes: "
                    "results differ by rounding only"
                ),
                parameters={"rows_per_block": "block / 32", "reductions": len(reductions)},
                launch=LaunchOverride(grid=[f"32 * ({grid})"]),
                # a warp now walks what a thread walked: any whole number of warps per block does, with the
                # grid re-derived from the threads the rows need (32 * grid * block is a multiple of 1024,
                # so every swept block covers exactly those threads)
                # (one swept block only: the block-per-item variant's larger blocks matter more for few items,
                # and a batch keeps ``max_candidates``)
                retune=Retune(per="thread", threads=f"32 * {_launch.threads_x(grid, block)}", blocks=(256,)),
            )
        ]
        if not plan.reductions:  # map and atomic passes: short rows may share a part of a warp
            out.append(
                Variant(
                    source=_coop_row_emit.rewrite(plan.source, plan, _coop_row_emit.lanes(PART_WARP)),
                    description=(
                        f"{PART_WARP} lanes per row (rows shorter than a warp's loads): lane-strided loops "
                        f"(coalesced), lane 0 stores the scalars; grid x{PART_WARP}"
                    ),
                    parameters={"rows_per_block": f"block / {PART_WARP}", "reductions": 0},
                    launch=LaunchOverride(grid=[f"{PART_WARP} * ({grid})"]),
                )
            )
        if _block_per_row(src.launch, kernel, plan) is None:
            types = _coop_row_emit.accumulator_types(kernel, plan)
            assert not isinstance(types, str)
            out.append(
                Variant(
                    source=_coop_row_emit.rewrite(plan.source, plan, _coop_row_emit.block(types)),
                    description=(
                        f"block per row (for few long rows): block-strided loops (coalesced), warp butterflies and one shared "
                        f"step after the reductions of {', '.join(reductions)}, thread 0 stores the scalars; grid x{block}. "
                        "Summation order changes: results differ by rounding only"
                    ),
                    parameters={"rows_per_block": 1, "reductions": len(reductions)},
                    # the textbook's 256 threads per item first (the spec's block was sized for a thread per item)
                    launch=LaunchOverride(grid=[f"({grid}) * ({block})"], block=[BLOCK_PER_ITEM]),
                    # one row per block whatever its size (whole warps: the butterflies): block swept, grid kept
                    retune=Retune(per="block", max_block=_coop_row_emit.MAX_BLOCK),
                )
            )
        return _with_vector_lanes(out, plan)


def _hoisted(recipe: _CooperativeRow, src: Source) -> Plan | str | None:
    """The plan of an element-per-thread row pass rewritten one thread per row (``_row_hoist``), why that
    rewrite or its plan does not hold, or None: not such a kernel."""
    hoisted = _row_hoist.normalise(src)
    if hoisted is None:
        return None
    if isinstance(hoisted, str):
        return f"one thread per element recomputing its row: {hoisted}"
    plan = recipe.match(hoisted)
    if isinstance(plan, str):
        return f"one thread per element recomputing its row, as a thread per row: {plan}"
    plan.launch = hoisted.launch
    return plan


def _with_vector_lanes(scalar: list[Variant], plan: Plan) -> list[Variant]:
    """Each variant again with its lane-strided loops moving 16 bytes per lane (``_lane_vector``), first:
    the sharing this recipe proved lets a lane take ``V`` consecutive elements as well as one. The
    scalar variants follow (the batch keeps the vectorised ones and their launch sweeps)."""
    name = _cuda.function_name(plan.kernel) if plan.kernel is not None else None
    vectorised = []
    for variant in scalar:
        assert variant.source is not None
        me, step = _sharer(variant)
        done = vectorize_lanes(variant.source, name, me, step)
        if isinstance(done, str):
            continue
        text, notes = done
        vectorised.append(
            replace(
                variant,
                source=text,
                description=variant.description
                + "; lanes move 16 bytes per access ("
                + "; ".join(notes)
                + ")",
                notes=[*variant.notes, ALIGN_NOTE],
                parameters={**variant.parameters, "vector_lanes": True},
                # V elements per thread and step: a row needs V times fewer threads, so the sweep tries
                # the blocks next to the current one (128 and 512 around 256) before the largest
                retune=(
                    replace(variant.retune, per="thread")
                    if variant.retune is not None and variant.retune.per == "block"
                    else variant.retune
                ),
            )
        )
    return vectorised + scalar


def _sharer(variant: Variant) -> tuple[str, str]:
    """(sharer index, loop step) of a variant: a block's threads, or lanes of a (part of a) warp."""
    rows = str(variant.parameters.get("rows_per_block"))
    if rows == "1":
        return _coop_row_emit.TID, "blockDim.x"
    return _coop_row_emit.WARP.me, rows.removeprefix("block / ")


RECIPE = register(_CooperativeRow())
applies, propose = RECIPE.applies, RECIPE.propose
