"""cooperative-scan: give a running value that one thread walks along its row to a whole warp.

Row-per-thread scans (cumsum, cumprod, reverse, exclusive and masked cumsum: KernelBench level 1
problems 89-93 are written this way by most naive solutions) keep a running value and store it at
every element: ``acc += x[i]; out[i] = acc;``. cooperative-row refuses them (the running value is a
loop-carried dependency); the textbook fix is a warp per row that walks the row 32 elements at a time:
each lane loads one element (coalesced), the warp scans the 32 contributions with ``__shfl_up_sync``
(Hillis–Steele, 5 steps), adds the carry from the chunks before, stores, and broadcasts the new carry
from lane 31.

Precondition, proven on the parse tree of the kernel:
- a 1-D launch whose block is a multiple of 32, one row index derived from the x thread coordinates
  (never reassigned), no other use of thread or block coordinates, no shared memory, barriers,
  shuffles or atomics;
- one counted loop (from a start, by +1 or -1, while the counter is below / above a bound free of it,
  in the direction it moves), not nested, whose body holds, at its top level: declarations of
  per-iteration scalars with a value (``int idx = row * cols + j;``, ``float v = x[idx];``), exactly one
  update of a running value — a sum (``acc += e``, ``acc -= e``, ``acc = acc + e``, ``acc++``), a product
  (``acc *= e``, ``acc = acc * e``) or, for float/double, a max/min (``acc = fmaxf(acc, e)``) — either
  alone or as the only statement of an ``if`` without ``else``
  (``if (mask[idx]) acc += x[idx];``), and element stores ``p[E + i] = value`` (unit stride in the
  counter) — at least one of which reads the accumulator: before the update (an exclusive scan) or
  after it (inclusive);
- the accumulator is a plain numeric scalar declared with a value before the loop, changed only by that
  update and read only by it and by those stores (not after the loop);
- memory is reached only by subscripts of pointer parameters; a buffer stored in the loop is reached
  there by one subscript only and nowhere else; nothing is stored outside the loop; no assignment
  inside another expression, no call made as a statement.

The rewrite: row = old row / 32, ``coop_lane = threadIdx.x % 32``; the loop steps over chunks of 32
(all lanes iterate together, so the shuffles always see the full warp); each lane computes its
element's contribution (the identity where the update does not fire or past the bound), declarations that read
memory are guarded by the bound, the warp scans, the stores read the carry plus the lane's inclusive
(or exclusive) value, and lane 31's total becomes the carry. Grid x32. Only the order of the additions
changes (the verifier's accuracy rule compares both against a float64 run).
"""

from __future__ import annotations

from perfagent.rewrite.recipes import _launch
from perfagent.rewrite.recipes._scan_analysis import ScanPlan, analyse
from perfagent.rewrite.recipes._scan_emit import rewrite
from perfagent.rewrite.recipes.framework import CudaRecipe, Retune, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "cooperative-scan"


class _CooperativeScan(CudaRecipe[ScanPlan]):
    name = NAME
    transforms = ("cooperative-row",)
    summary = (
        "row-per-thread running sums, products, maxima (cumsum family): a warp, or a block, scans each row"
    )
    needs_launch = True
    launch_dims = 1

    def match(self, src: Source) -> ScanPlan | str:
        plan = src.on_kernel(analyse)
        assert src.launch is not None
        return plan if isinstance(plan, str) else (_launch.warp_multiple_block(src.launch) or plan)

    def plan(self, src: Source, m: ScanPlan) -> list[Variant]:
        assert src.launch is not None
        grid, block = str(src.launch.grid[0]), str(src.launch.block[0])
        kind = (
            "exclusive and inclusive"
            if m.stores_before and m.stores_after
            else ("exclusive" if m.stores_before else "inclusive")
        )
        what = {"+": "sum", "*": "product"}.get(m.combine, m.combine)
        return [
            Variant(
                source=rewrite(src.text, m),
                description=(
                    f"warp per row: the running {what} {m.acc} ({kind}) scanned 32 elements at a time with "
                    "__shfl_up_sync, loads and stores coalesced, the carry broadcast from lane 31; grid x32. "
                    "Combination order changes: results differ by rounding only"
                ),
                parameters={"rows_per_block": "block / 32", "scan": kind},
                launch=LaunchOverride(grid=[f"32 * ({grid})"]),
                # a warp now walks what a thread walked: rows per block = block / 32, so any multiple of 32
                # does with the grid re-derived from the threads the rows need
                retune=Retune(per="thread", threads=f"32 * {_launch.threads_x(grid, block)}"),
            ),
            Variant(
                source=rewrite(src.text, m, block=True),
                description=(
                    f"block per row (for few long rows): the running {what} {m.acc} ({kind}) scanned "
                    f"{block} elements at a time in shared memory (Hillis-Steele, barrier-separated), the carry "
                    f"from the last thread; grid x{block}. Combination order changes: results differ by rounding only"
                ),
                parameters={"rows_per_block": 1, "scan": kind},
                launch=LaunchOverride(grid=[f"({grid}) * ({block})"]),
                # one row per block whatever its size: the block is swept, the grid (the rows) kept
                retune=Retune(per="block", power_of_two=False),
            ),
        ]


RECIPE = register(_CooperativeScan())
applies, propose = RECIPE.applies, RECIPE.propose
