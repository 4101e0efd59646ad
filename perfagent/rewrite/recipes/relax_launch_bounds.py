"""Recipe ``relax-launch-bounds``: the ``reduce-register-pressure`` fix that needs no knowledge of the
kernel's live state: a register cap the source itself sets.

Precondition (tree-sitter-cuda tree of the kernel): ``__launch_bounds__(T, minBlocks)`` with a
minimum-blocks argument (it caps registers at 65536 / (T x minBlocks) per thread, and a tight cap
spills). Candidates: the minimum halved (while above 1), then dropped; T stays, so the block size the
launch relies on is still guaranteed.

Spills without such a cap come from what the kernel keeps live (large per-thread arrays, dynamic
indexing of local arrays, wide tiles): shrinking that is a redesign per kernel, refused here with that
reason and left to the llm backend.
"""

from __future__ import annotations

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "relax-launch-bounds"


def _bounds(src: Source) -> tuple[str, str, int, int, int] | str:
    """(max threads text, min blocks text, min blocks value, args start byte, args end byte), or why not."""
    kernel = src.kernel
    if isinstance(kernel, str):
        return kernel
    bounds = _cuda.launch_bounds(kernel)
    if bounds is None:
        return "no __launch_bounds__ caps the registers: the spills come from live state (the llm backend can shrink it)"
    args = [c for c in bounds.named_children if c.type != "comment"]
    if len(args) < 2:
        return f"__launch_bounds__ on line {_cuda.line_of(bounds)} sets no minimum blocks per SM: no cap to relax"
    env: dict[str, _cuda.Constant | int] = dict(src.constants)
    value = _cuda.evaluate(_cuda.text(args[1]), env)
    if value is None or value < 2:
        return f"the minimum blocks per SM on line {_cuda.line_of(bounds)} is {_cuda.text(args[1])}: nothing to relax"
    return _cuda.text(args[0]), _cuda.text(args[1]), value, args[0].start_byte, args[-1].end_byte


class _Relax(CudaRecipe[tuple[str, str, int, int, int]]):
    name = NAME
    transforms = ("reduce-register-pressure",)
    summary = "__launch_bounds__(T, minBlocks) capping registers -> minBlocks halved, then dropped"

    def match(self, src: Source) -> tuple[str, str, int, int, int] | str:
        return _bounds(src)

    def plan(self, src: Source, m: tuple[str, str, int, int, int]) -> list[Variant]:
        threads, old, value, start, end = m
        out = []
        for new in ([value // 2] if value // 2 > 1 else []) + [None]:
            text = threads if new is None else f"{threads}, {new}"
            what = "dropped" if new is None else f"{old} -> {new}"
            out.append(
                Variant(
                    edits=[Edit(start, end, text)],
                    description=f"__launch_bounds__ minimum blocks per SM {what}: a looser register cap, fewer spills",
                    parameters={"min_blocks": new},
                )
            )
        return out


RECIPE = register(_Relax())
applies, propose = RECIPE.applies, RECIPE.propose
