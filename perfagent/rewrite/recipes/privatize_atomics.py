"""privatize-atomics: per-block shared-memory copies of a small global accumulator array.

A histogram or scatter-add kernel that does one global ``atomicAdd(&bins[b], v)`` per element makes
thousands of threads hit the same few words in L2, where the atomic units serialise them. The
textbook fix counts into a per-block copy in shared memory (atomics there contend only within the
block) and merges it with one global atomic per non-zero bin per block.

Precondition (proven on the tree-sitter parse tree of the kernel and the launch spec):
- every use of the accumulator ``P`` (a pointer parameter of an integer or float type) is the first
  argument of an ``atomicAdd`` statement, as ``&P[b]`` or ``P + b``, whose result is not used (``P`` is
  never read, written or passed elsewhere);
- its element count is a compile-time constant of the source: the launch spec shapes ``P`` as a
  ``#define``/``constexpr`` name or a literal, and the copy fits the 48 KiB of static shared memory;
- no ``return``, ``__syncthreads`` or shared memory in the kernel (every thread must reach the two
  barriers the rewrite adds), and no other atomic on ``P``.
The spec's shape bounds the bin index: a ``b`` outside ``[0, count)`` is already out of bounds in the
original. The rewrite zeroes the copy (block-stride loop over the flattened thread index, so any
block shape works), barrier, the body with ``P`` replaced by the copy, barrier, merge. Integer counts
are exact; float sums change order (the verifier's tolerance judges them).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _byte_pack, _cuda, _launch
from perfagent.rewrite.recipes._private_count import Count, count_of
from perfagent.rewrite.recipes._threads import BLOCK_THREADS, FLAT_THREAD, block_free_retune
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, at, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "privatize-atomics"
_COPY = "perfagent_private"
_B = "perfagent_b"
_WARP_COPY = "perfagent_copy"
_FITS = "perfagent_fits"
_TARGET = "perfagent_bins"
GRID_WAVES = 2
"""Blocks per SM of the per-warp variant of a grid-stride kernel (any grid computes the same there)."""
_TYPES = {
    "int": 4,
    "unsigned int": 4,
    "unsigned": 4,
    "unsigned long long": 8,
    "unsigned long long int": 8,
    "float": 4,
    "double": 8,
}


@dataclass
class _Plan:
    array: str
    element: str
    size: Count
    """The element count as the kernel can spell it, and the shared copy's capacity."""
    targets: list[Node]
    """The ``&P[b]`` / ``P + b`` argument nodes (replaced by the copy)."""
    body: Node
    kernel: Node
    exits: list[Node]
    """Top-level ``if (C) return;`` statements, turned into ``if (!(C)) {`` ... ``}``."""


def _target_of(arg: Node, array: str) -> bool:
    """``&array[b]``, ``array + b`` / ``b + array``, or ``array`` itself."""
    arg = _cuda.strip(arg)
    if arg.type == "identifier":
        return _cuda.text(arg) == array
    if arg.type == "pointer_expression" and _cuda.text(arg).startswith("&"):
        inner = _cuda.strip(arg.child_by_field_name("argument") or arg)
        base = inner.child_by_field_name("argument") if inner.type == "subscript_expression" else None
        return base is not None and _cuda.text(base) == array
    if arg.type == "binary_expression" and _cuda.text(arg.child_by_field_name("operator") or arg) == "+":
        sides = [_cuda.strip(arg.child_by_field_name(f) or arg) for f in ("left", "right")]
        return sum(1 for s in sides if s.type == "identifier" and _cuda.text(s) == array) == 1
    return False


def _aliases(body: Node, pointers: dict[str, str]) -> dict[str, tuple[str, Node]]:
    """Pointers into a parameter declared in the body (``float *slot = hist + (f * bins + b) * 2;``):
    alias -> (its parameter, the value, which the rewrite points at the copy instead)."""
    out: dict[str, tuple[str, Node]] = {}
    for node in _cuda.walk(body):
        decl, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if (
            node.type != "init_declarator"
            or decl is None
            or value is None
            or decl.type != "pointer_declarator"
        ):
            continue
        inner = decl.child_by_field_name("declarator")
        name = _cuda.text(inner) if inner is not None and inner.type == "identifier" else ""
        owner = [p for p in pointers if _target_of(value, p) and _cuda.strip(value).type != "identifier"]
        if name and len(owner) == 1:
            out[name] = (owner[0], value)
    return out


def _atomic_targets(body: Node, names: set[str]) -> dict[str, list[Node]] | str:
    """Per name, the first arguments of the atomicAdd statements that target it."""
    found: dict[str, list[Node]] = {}
    for call in _cuda.walk(body):
        if (
            call.type != "call_expression"
            or _cuda.text(call.child_by_field_name("function") or call) != "atomicAdd"
        ):
            continue
        args = call.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        for name in names:
            if first is not None and _target_of(first, name):
                if call.parent is None or call.parent.type != "expression_statement":
                    return f"line {_cuda.line_of(call)}: the result of atomicAdd on {name} is used"
                found.setdefault(name, []).append(first)
    return found


def _accumulator(kernel: Node, body: Node) -> tuple[str, str, list[Node]] | str:
    """(array, element type, the nodes whose ``array`` the copy replaces) of the one global accumulator,
    reached directly or through pointers declared into it, or why not."""
    pointers = {name: typ for name, typ, ptr in _cuda.kernel_params(kernel) if ptr}
    aliases = _aliases(body, pointers)
    found = _atomic_targets(body, set(pointers) | set(aliases))
    if isinstance(found, str):
        return found
    params = {aliases[n][0] if n in aliases else n for n in found}
    if not params:
        return "no atomicAdd into a pointer argument"
    if len(params) > 1:
        return f"atomics into several arrays ({', '.join(sorted(params))})"
    [array] = params
    targets = list(found.get(array, []))
    for name, (param, value) in aliases.items():
        if param != array:
            continue
        uses = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == name]
        if name not in found or len(uses) != len(found[name]) + 1:
            return f"{name}, a pointer into {array}, is used other than as the target of atomicAdd"
        targets.append(value)
    uses = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == array]
    if len(uses) != len(targets):
        return f"{array} is used other than as the target of atomicAdd"
    element = " ".join(pointers[array].replace("const", "").split())
    if element not in _TYPES:
        return f"{array} holds {element or 'an unknown type'}: not an integer or float accumulator"
    return array, element, targets


def _early_exits(body: Node) -> list[Node]:
    """Top-level ``if (C) return;`` statements (no else): the rewrite turns each into ``if (!(C)) {`` closed
    at the end of the body, so every thread still reaches the merge barrier."""
    out = []
    for stmt in body.named_children:
        cons = stmt.child_by_field_name("consequence") if stmt.type == "if_statement" else None
        if cons is None or stmt.child_by_field_name("alternative") is not None:
            continue
        inner = cons.named_children if cons.type == "compound_statement" else [cons]
        if len(inner) == 1 and inner[0].type == "return_statement" and not inner[0].named_children:
            out.append(stmt)
    return out


def _root(target: Node, array: str) -> Node:
    """The ``array`` of ``&array[b]`` / ``array + b`` (its index may read other arrays: only it is replaced)."""
    return next(n for n in _cuda.walk(target) if n.type == "identifier" and _cuda.text(n) == array)


class _PrivatizeAtomics(CudaRecipe[_Plan]):
    name = NAME
    transforms = ("privatize-atomics",)
    summary = "global atomicAdd into a small array (histograms): per-block shared-memory copy, merged once per block"

    def match(self, src: Source) -> _Plan | str:
        found = src.kernel_body
        if isinstance(found, str):
            return found
        kernel, body = found
        text = _cuda.text(body)
        if "__shared__" in text or "__syncthreads" in text:
            return "the kernel already uses shared memory or barriers"
        exits = _early_exits(body)
        inside_exits = {n.id for e in exits for n in _cuda.walk(e)}
        ret = next(
            (n for n in _cuda.walk(body) if n.type == "return_statement" and n.id not in inside_exits), None
        )
        if ret is not None:
            return at(ret, "a return inside the work (every thread must reach the merge barrier)")
        acc = _accumulator(kernel, body)
        if isinstance(acc, str):
            return acc
        array, element, targets = acc
        size = count_of(src, kernel, array)
        if isinstance(size, str):
            return size
        if size.capacity * _TYPES[element] > _cuda.STATIC_SHARED_LIMIT:
            return f"{size.capacity} x {element} does not fit the {_cuda.STATIC_SHARED_LIMIT // 1024} KiB of static shared memory"
        return _Plan(array, element, size, targets, body, kernel, exits)

    def plan(self, src: Source, m: _Plan) -> list[Variant]:
        packed = _byte_pack.find(m.kernel, m.body)
        pack = packed if isinstance(packed, _byte_pack.Packable) else None
        loads = f"; {pack.array} read {4 // pack.size} elements per 32-bit load" if pack else ""
        notes = [f"no packed loads: {packed}"] if isinstance(packed, str) else []
        retune = block_free_retune(m.kernel, src.launch, per="block")
        out = [
            Variant(
                edits=_edits(m, 1, pack),
                description=(
                    f"privatize atomics: {len(m.targets)} atomicAdd(s) into {m.array} go to a per-block shared copy "
                    f"of {m.size.spelled} {m.element}s, merged with one global atomic per non-zero entry per block{loads}"
                    + (
                        f" (static copy of {m.size.capacity}: the spec's largest size; a larger run-time size keeps "
                        "the global atomics)"
                        if m.size.runtime
                        else ""
                    )
                ),
                parameters={
                    "array": m.array,
                    "count": m.size.spelled,
                    "copies": "block",
                    "packed": pack is not None,
                },
                notes=notes,
                # a block now zeroes and merges the whole copy: its work grew by the bin count, so larger
                # blocks (fewer of them) amortise it, when the original's thread index allows any block
                retune=retune,
            )
        ]
        copies = _warp_copies(src, m)
        if copies >= 2:
            grid_stride = retune is not None and retune.grid_stride
            out.append(
                Variant(
                    edits=_edits(m, copies, pack),
                    description=(
                        f"privatize atomics per warp: {m.size.spelled}-entry sub-copies of {m.array} in shared memory, one per "
                        f"warp ({copies} per block; warps share them beyond that), summed and merged at block end"
                        f"{loads}{'; grid 2 x sm_count (a grid-stride loop: fewer blocks, fewer merges)' if grid_stride else ''}"
                    ),
                    parameters={
                        "array": m.array,
                        "count": m.size.spelled,
                        "copies": copies,
                        "packed": pack is not None,
                    },
                    notes=notes,
                    # each block zeroes and merges `copies` sub-copies: where any grid computes the same,
                    # a few blocks per SM amortise that best
                    launch=LaunchOverride(grid=[f"{GRID_WAVES} * sm_count"]) if grid_stride else None,
                    retune=retune,
                )
            )
        return out


def _warp_copies(src: Source, m: _Plan) -> int:
    """Sub-copies per block: one per warp of the spec's block, as many as fit the static shared memory."""
    launch = src.launch
    if launch is None or m.size.runtime:
        return 0  # a run-time size: one copy per block (each sub-copy would need the fit test)
    threads = 1
    for axis in range(len(launch.block)):
        size = _launch.block_size(launch, axis)
        if size is None:
            return 0
        threads *= size
    per_copy = m.size.capacity * _TYPES[m.element]
    return min(-(-threads // 32), _cuda.STATIC_SHARED_LIMIT // max(per_copy, 1))


def _edits(m: _Plan, copies: int, pack: _byte_pack.Packable | None) -> list[_cuda.Edit]:
    """Targets retargeted to the copy (``copies`` > 1: this warp's sub-copy), zeroing before, the merge
    after; the grid-stride loop packed when ``pack``."""
    copy = _TARGET if m.size.runtime else (_COPY if copies == 1 else f"{_COPY}[{_WARP_COPY}]")
    targets = [_cuda.Edit(i.start_byte, i.end_byte, copy) for t in m.targets if (i := _root(t, m.array))]
    if pack is not None:
        loop = pack.loop
        inside = [e for e in targets if loop.start_byte <= e.start and e.end <= loop.end_byte]
        targets = [e for e in targets if e not in inside] + [_byte_pack.rewrite(pack, inside)]
    body = m.body
    guards = []
    for stmt in m.exits:
        cond = stmt.child_by_field_name("condition")
        text = _cuda.text(cond) if cond is not None else "(false)"
        guards.append(_cuda.Edit(stmt.start_byte, stmt.end_byte, f"if (!{text}) {{  // was: return"))
    close = "    }\n" * len(m.exits)
    return [
        *targets,
        *guards,
        _cuda.Edit(body.start_byte + 1, body.start_byte + 1, _head(m, copies)),
        _cuda.Edit(body.end_byte - 1, body.end_byte - 1, close + _tail(m, copies)),
    ]


def _head(m: _Plan, copies: int) -> str:
    count = m.size.spelled
    if m.size.runtime:
        return (
            f"\n    // {NAME}: count into a per-block copy of {m.array} in shared memory when its run-time size\n"
            f"    // fits the copy (sized for the launch spec's largest), else straight into {m.array} as before.\n"
            f"    __shared__ {m.element} {_COPY}[{m.size.capacity}];\n"
            f"    const bool {_FITS} = {count} <= {m.size.capacity};\n"
            f"    {m.element} *const {_TARGET} = {_FITS} ? {_COPY} : {m.array};\n"
            f"    if ({_FITS})\n"
            f"        for (int {_B} = {FLAT_THREAD}; {_B} < {count}; {_B} += {BLOCK_THREADS})\n"
            f"            {_COPY}[{_B}] = 0;\n"
            "    __syncthreads();\n"
        )
    if copies == 1:
        return (
            f"\n    // {NAME}: count into a per-block copy of {m.array} in shared memory, then merge it.\n"
            f"    __shared__ {m.element} {_COPY}[{count}];\n"
            f"    for (int {_B} = {FLAT_THREAD}; {_B} < ({count}); {_B} += {BLOCK_THREADS})\n"
            f"        {_COPY}[{_B}] = 0;\n"
            "    __syncthreads();\n"
        )
    return (
        f"\n    // {NAME}: count into this warp's copy of {m.array} in shared memory, then merge the block's copies.\n"
        f"    __shared__ {m.element} {_COPY}[{copies}][{count}];\n"
        f"    const int {_WARP_COPY} = ({FLAT_THREAD} / 32) % {copies};\n"
        f"    for (int {_B} = {FLAT_THREAD}; {_B} < {copies} * ({count}); {_B} += {BLOCK_THREADS})\n"
        f"        {_COPY}[{_B} / ({count})][{_B} % ({count})] = 0;\n"
        "    __syncthreads();\n"
    )


def _tail(m: _Plan, copies: int) -> str:
    total = (
        f"{_COPY}[{_B}]"
        if copies == 1
        else f"{_COPY}[0][{_B}];\n        for (int w_ = 1; w_ < {copies}; ++w_) perfagent_count += {_COPY}[w_][{_B}]"
    )
    guard = f"    if ({_FITS})\n" if m.size.runtime else ""
    return (
        "    __syncthreads();\n"
        f"{guard}"
        f"    for (int {_B} = {FLAT_THREAD}; {_B} < ({m.size.spelled}); {_B} += {BLOCK_THREADS}) {{\n"
        f"        {m.element} perfagent_count = {total};\n"
        "        if (perfagent_count != 0)\n"
        f"            atomicAdd(&{m.array}[{_B}], perfagent_count);\n"
        "    }\n"
    )


RECIPE = register(_PrivatizeAtomics())
applies, propose = RECIPE.applies, RECIPE.propose
