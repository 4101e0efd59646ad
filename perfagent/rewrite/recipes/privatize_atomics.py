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
from perfagent.rewrite.recipes._threads import BLOCK_THREADS, FLAT_THREAD, block_free_retune
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, at, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "privatize-atomics"
_COPY = "perfagent_private"
_B = "perfagent_b"
_WARP_COPY = "perfagent_copy"
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
    count: str
    """The element count as the source can spell it (a constant's name or a literal)."""
    targets: list[Node]
    """The ``&P[b]`` / ``P + b`` argument nodes (replaced by the copy)."""
    body: Node
    kernel: Node


def _target_of(arg: Node, array: str) -> bool:
    """``&array[b]`` or ``array + b`` / ``b + array``."""
    arg = _cuda.strip(arg)
    if arg.type == "pointer_expression" and _cuda.text(arg).startswith("&"):
        inner = _cuda.strip(arg.child_by_field_name("argument") or arg)
        base = inner.child_by_field_name("argument") if inner.type == "subscript_expression" else None
        return base is not None and _cuda.text(base) == array
    if arg.type == "binary_expression" and _cuda.text(arg.child_by_field_name("operator") or arg) == "+":
        sides = [_cuda.strip(arg.child_by_field_name(f) or arg) for f in ("left", "right")]
        return sum(1 for s in sides if s.type == "identifier" and _cuda.text(s) == array) == 1
    return False


def _accumulator(kernel: Node, body: Node) -> tuple[str, str, list[Node]] | str:
    """(array, element type, its atomicAdd targets) of the one global accumulator, or why not."""
    pointers = {name: typ for name, typ, ptr in _cuda.kernel_params(kernel) if ptr}
    calls = [
        n
        for n in _cuda.walk(body)
        if n.type == "call_expression" and _cuda.text(n.child_by_field_name("function") or n) == "atomicAdd"
    ]
    found: dict[str, list[Node]] = {}
    for call in calls:
        args = call.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        for name in pointers:
            if first is not None and _target_of(first, name):
                if call.parent is None or call.parent.type != "expression_statement":
                    return f"line {_cuda.line_of(call)}: the result of atomicAdd on {name} is used"
                found.setdefault(name, []).append(first)
    if not found:
        return "no atomicAdd into a pointer argument"
    if len(found) > 1:
        return f"atomics into several arrays ({', '.join(sorted(found))})"
    [(array, targets)] = found.items()
    uses = [n for n in _cuda.walk(body) if n.type == "identifier" and _cuda.text(n) == array]
    if len(uses) != len(targets):
        return f"{array} is used other than as the target of atomicAdd"
    element = pointers[array].replace("const", "").strip()
    element = " ".join(element.split())
    if element not in _TYPES:
        return f"{array} holds {element or 'an unknown type'}: not an integer or float accumulator"
    return array, element, targets


def _count(src: Source, kernel: Node, array: str) -> tuple[str, int] | str:
    """(the element count as source text, its value) from the launch spec's shape of ``array``."""
    launch = src.launch
    if launch is None:
        return "no launch spec: the accumulator's size is unknown"
    names = [name for name, _, _ in _cuda.kernel_params(kernel)]
    index = names.index(array)
    if index >= len(launch.args) or len(launch.args[index].shape) != 1:
        return f"the launch spec does not give {array} a 1-D shape"
    shape = str(launch.args[index].shape[0]).strip()
    consts = src.constants
    if shape.isdigit():
        return shape, int(shape)
    if shape not in consts:
        return f"{array} has {shape} elements: not a compile-time constant of the source"
    env: dict[str, _cuda.Constant | int] = dict(consts)
    env |= {k: int(v) for k, v in launch.defines.items() if str(v).lstrip("-").isdigit()}
    value = _cuda.evaluate(shape, env)
    if value is None or value <= 0:
        return f"the size of {array} ({shape}) does not evaluate to a positive integer"
    return shape, value


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
        ret = next((n for n in _cuda.walk(body) if n.type == "return_statement"), None)
        if ret is not None:
            return at(ret, "a return before the end (every thread must reach the merge barrier)")
        acc = _accumulator(kernel, body)
        if isinstance(acc, str):
            return acc
        array, element, targets = acc
        count = _count(src, kernel, array)
        if isinstance(count, str):
            return count
        spelled, value = count
        if value * _TYPES[element] > _cuda.STATIC_SHARED_LIMIT:
            return f"{value} x {element} does not fit the {_cuda.STATIC_SHARED_LIMIT // 1024} KiB of static shared memory"
        return _Plan(array, element, spelled, targets, body, kernel)

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
                    f"of {m.count} {m.element}s, merged with one global atomic per non-zero entry per block{loads}"
                ),
                parameters={
                    "array": m.array,
                    "count": m.count,
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
                        f"privatize atomics per warp: {m.count}-entry sub-copies of {m.array} in shared memory, one per "
                        f"warp ({copies} per block; warps share them beyond that), summed and merged at block end"
                        f"{loads}{'; grid 2 x sm_count (a grid-stride loop: fewer blocks, fewer merges)' if grid_stride else ''}"
                    ),
                    parameters={
                        "array": m.array,
                        "count": m.count,
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
    if launch is None:
        return 0
    threads = 1
    for axis in range(len(launch.block)):
        size = _launch.block_size(launch, axis)
        if size is None:
            return 0
        threads *= size
    per_copy = _count_value(src, m) * _TYPES[m.element]
    return min(-(-threads // 32), _cuda.STATIC_SHARED_LIMIT // max(per_copy, 1))


def _count_value(src: Source, m: _Plan) -> int:
    found = _count(src, m.kernel, m.array)
    return found[1] if not isinstance(found, str) else _cuda.STATIC_SHARED_LIMIT


def _edits(m: _Plan, copies: int, pack: _byte_pack.Packable | None) -> list[_cuda.Edit]:
    """Targets retargeted to the copy (``copies`` > 1: this warp's sub-copy), zeroing before, the merge
    after; the grid-stride loop packed when ``pack``."""
    copy = _COPY if copies == 1 else f"{_COPY}[{_WARP_COPY}]"
    targets = [_cuda.Edit(i.start_byte, i.end_byte, copy) for t in m.targets if (i := _root(t, m.array))]
    if pack is not None:
        loop = pack.loop
        inside = [e for e in targets if loop.start_byte <= e.start and e.end <= loop.end_byte]
        targets = [e for e in targets if e not in inside] + [_byte_pack.rewrite(pack, inside)]
    body = m.body
    return [
        *targets,
        _cuda.Edit(body.start_byte + 1, body.start_byte + 1, _head(m, copies)),
        _cuda.Edit(body.end_byte - 1, body.end_byte - 1, _tail(m, copies)),
    ]


def _head(m: _Plan, copies: int) -> str:
    if copies == 1:
        return (
            f"\n    // {NAME}: count into a per-block copy of {m.array} in shared memory, then merge it.\n"
            f"    __shared__ {m.element} {_COPY}[{m.count}];\n"
            f"    for (int {_B} = {FLAT_THREAD}; {_B} < ({m.count}); {_B} += {BLOCK_THREADS})\n"
            f"        {_COPY}[{_B}] = 0;\n"
            "    __syncthreads();\n"
        )
    return (
        f"\n    // {NAME}: count into this warp's copy of {m.array} in shared memory, then merge the block's copies.\n"
        f"    __shared__ {m.element} {_COPY}[{copies}][{m.count}];\n"
        f"    const int {_WARP_COPY} = ({FLAT_THREAD} / 32) % {copies};\n"
        f"    for (int {_B} = {FLAT_THREAD}; {_B} < {copies} * ({m.count}); {_B} += {BLOCK_THREADS})\n"
        f"        {_COPY}[{_B} / ({m.count})][{_B} % ({m.count})] = 0;\n"
        "    __syncthreads();\n"
    )


def _tail(m: _Plan, copies: int) -> str:
    total = (
        f"{_COPY}[{_B}]"
        if copies == 1
        else f"{_COPY}[0][{_B}];\n        for (int w_ = 1; w_ < {copies}; ++w_) perfagent_count += {_COPY}[w_][{_B}]"
    )
    return (
        "    __syncthreads();\n"
        f"    for (int {_B} = {FLAT_THREAD}; {_B} < ({m.count}); {_B} += {BLOCK_THREADS}) {{\n"
        f"        {m.element} perfagent_count = {total};\n"
        "        if (perfagent_count != 0)\n"
        f"            atomicAdd(&{m.array}[{_B}], perfagent_count);\n"
        "    }\n"
    )


RECIPE = register(_PrivatizeAtomics())
applies, propose = RECIPE.applies, RECIPE.propose
