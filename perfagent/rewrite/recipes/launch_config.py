"""Recipe ``launch-config``: sweep a CUDA kernel's block size where the source fixes it at compile time.

Knobs found on the tree-sitter-cuda parse tree:

- a named integer constant (``#define BLOCK 256``, ``constexpr int BLOCK = 256``, a template parameter
  with a default ``template <int BLOCK = 256>``) that is the block argument of a ``<<<grid, block>>>``
  launch, appears in it (``dim3(TILE, BLOCK_ROWS)`` or a ``dim3`` variable initialised from it), is the
  first argument of ``__launch_bounds__``, or is named like a block size (``BLOCK``, ``BLOCK_SIZE``,
  ``THREADS``, ``NUM_THREADS``, ``*_BLOCK``, ``BLOCK_ROWS``, ``BLOCK_X`` ...);
- an integer literal block argument of a launch (``<<<g, 256>>>``, ``dim3(256)``, ``dim3 block(32, 8)``);
  literals ``256`` / ``255`` in that launch's grid expression change with it (``(n + 255) / 256``).

Values: 64, 128, 256, 512, 1024 for a knob holding the whole block (>= 32 threads) and 1, 2, 4, 8, 16, 32
for a block dimension below a warp (``BLOCK_ROWS 8``), closest to the current value first. A value is
kept only if the launch's total threads (when the launch is visible) stay a multiple of 32 within 1024,
within a literal ``__launch_bounds__`` of the kernels using the knob, and the static shared memory sized
by it stays within 48 KiB. Edited ``#ifndef``-guarded macros are also returned in
``Candidate.defines`` so that a launch spec's ``-D`` flags follow the edit.
"""

from __future__ import annotations

import math

from tree_sitter import Tree

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._launch_knobs import (
    MAX_THREADS,
    Env,
    _block_total,
    _Found,
    _Knob,
    _scan,
)
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register

NAME = "launch-config"


def _valid(knob: _Knob, value: int, tree: Tree, env: Env) -> str | None:
    """None when ``value`` is a legal setting of ``knob``, else why not."""
    trial: Env = dict(env)
    if knob.constant is not None:
        trial[knob.constant.name] = value
    for call in knob.launches:
        config = _cuda.launch_config_args(call)
        scope = _cuda.enclosing(call, "function_definition")
        block = config[1]
        total: int | None
        if call in knob.literal_launches:
            total = value
        elif knob.constant is None:
            total = (_block_total(block, {}, scope) or knob.current) // knob.current * value
        else:
            total = _block_total(block, trial, scope)
        if total is not None and (total > MAX_THREADS or total % 32 != 0):
            return f"{total} threads per block"
    if knob.constant is None and not knob.launches and value > MAX_THREADS:
        return "over 1024 threads"
    launched = {_cuda.launched_name(call) for call in knob.launches}
    users = [
        *knob.users,
        *(fn for fn in _cuda.kernels(tree) if _cuda.function_name(fn) in launched and fn not in knob.users),
    ]
    for fn in users:
        bounds = _cuda.launch_bounds(fn)
        if bounds is not None:
            args = [c for c in bounds.named_children if c.type != "comment"]
            if args and args[0].type == "number_literal":
                cap = _cuda.evaluate(_cuda.text(args[0]), {})
                if cap is not None and knob.current >= 32 and value > cap:
                    return f"__launch_bounds__({cap}) of {_cuda.function_name(fn)}"
        body = fn.child_by_field_name("body")
        if body is not None and knob.constant is not None:
            smem = _cuda.static_shared_bytes(body, trial)
            if smem is not None and smem > _cuda.STATIC_SHARED_LIMIT:
                return f"{smem} bytes of static shared memory"
    return None


def _ordered_values(knob: _Knob) -> list[int]:
    values = [v for v in knob.role_values if v != knob.current]
    return sorted(values, key=lambda v: (abs(math.log2(v / knob.current)), -v))


def _variant(knob: _Knob, value: int, source: str) -> Variant:
    defines = (
        {knob.constant.name: value} if knob.constant is not None and knob.constant.kind == "macro" else {}
    )
    notes = []
    if knob.constant is not None and knob.constant.guarded:
        notes.append(
            f"{knob.constant.name} is #ifndef-guarded: build with -D{knob.constant.name}={value} (Candidate.defines)"
        )
    if not knob.launches:
        notes.append("no launch of the kernel in this source: the launch (spec) must use the new value")
    return Variant(
        source=source,
        description=f"Set {knob.label} from {knob.current} to {value}.",
        parameters={knob.key: value, "previous": knob.current},
        defines=defines,
        notes=notes,
    )


class _LaunchConfig(CudaRecipe[_Found]):
    name = NAME
    transforms = ("launch-config",)
    summary = "sweep a compile-time block size (#define, constexpr, template default, literal in <<<>>>/dim3) over 64..1024"
    wrong_language = (
        "the launch-config recipe edits CUDA sources; Triton sources use the triton-config recipe"
    )

    def match(self, src: Source) -> _Found | str:
        return _scan(src)

    def plan(self, src: Source, m: _Found) -> list[Variant]:
        """One knob set at a time, closest values first, round-robin over knobs."""
        knobs, env = m
        most = src.request.max_candidates
        queues: list[list[tuple[_Knob, int]]] = [
            [(knob, v) for v in _ordered_values(knob) if _valid(knob, v, src.tree, env) is None]
            for knob in knobs
        ]
        out: list[Variant] = []
        seen: set[str] = set()
        while any(queues) and len(out) < most:
            for queue in queues:
                if not queue or len(out) >= most:
                    continue
                knob, value = queue.pop(0)
                try:  # a value whose edits do not parse is skipped, not a bug of the recipe
                    source = _cuda.apply_edits(src.text, knob.edits(value))
                except (_cuda.ParseError, ValueError):
                    continue
                if source not in seen:
                    seen.add(source)
                    out.append(_variant(knob, value, source))
        return out


RECIPE = register(_LaunchConfig())
applies, propose = RECIPE.applies, RECIPE.propose
