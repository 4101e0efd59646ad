"""Recipe ``grid-swizzle-cuda``: grouped block rasterisation of a 2-D tiled CUDA kernel, for L2 reuse.

Precondition (tree-sitter-cuda tree of the kernel):

- it uses both ``blockIdx.x`` and ``blockIdx.y`` (a 2-D grid of output tiles), and a loop of the
  kernel reads a pointer parameter at an index that depends (through the locals it is computed from)
  on only one of the two: the operand walk of a matmul (A's rows follow blockIdx.y, B's columns
  blockIdx.x), where blocks of one grid row share a tile; a transpose or a map reads each element once
  and is refused;
- ``gridDim.x`` / ``gridDim.y`` are not used yet (no remap or grid-stride walk to preserve) and no
  ``__device__`` function of the file reads ``blockIdx`` (it would see the old order);
- the launch spec, when given, has a 2-D grid.

Rewrite: the kernel body starts with the Triton tutorial's grouped ordering over the linear block id
(the hardware's launch order) and every ``blockIdx.x`` / ``blockIdx.y`` becomes the remapped pair::

    bid = blockIdx.y * gridDim.x + blockIdx.x;  per_group = G * gridDim.x;
    first_y = bid / per_group * G;  rows = min(gridDim.y - first_y, G);
    by = first_y + bid % per_group % rows;  bx = bid % per_group / rows;

G = 8, 4, 16 (one candidate each). ``rows`` shrinks the last group, so the map is a bijection over the
grid; the launch does not change.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda, _thread_index
from perfagent.rewrite.recipes.framework import CudaRecipe, Edit, Source, Variant, register

NAME = "grid-swizzle-cuda"
GROUPS = (8, 4, 16)
_LOOPS = ("for_statement", "while_statement", "do_statement")


def _pointer_params(kernel: Node) -> set[str]:
    return {name for name, _typ, pointer in _cuda.kernel_params(kernel) if pointer}


def _block_axes(body: Node) -> dict[str, set[str]]:
    """Local name -> the blockIdx axes its value depends on (declarations and assignments, to a fixpoint)."""
    defs: list[tuple[str, Node]] = []
    for node in _cuda.walk(body):
        if node.type == "init_declarator":
            target, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        elif node.type == "assignment_expression":
            target, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        else:
            continue
        if target is not None and value is not None and target.type == "identifier":
            defs.append((_cuda.text(target), value))
    axes: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for name, value in defs:
            found = _axes_of(value, axes) | axes.get(name, set())
            if found != axes.get(name, set()):
                axes[name], changed = found, True
    return axes


def _axes_of(node: Node, axes: dict[str, set[str]]) -> set[str]:
    out: set[str] = set()
    for sub in _cuda.walk(node):
        found = _cuda.builtin_axis(sub)
        if found is not None and found[0] == "blockIdx":
            out.add(found[1])
        elif sub.type == "identifier":
            out |= axes.get(_cuda.text(sub), set())
    return out


def _shared_read(body: Node, pointers: set[str]) -> Node | None:
    """A read, inside a loop, of a pointer parameter whose index depends on one of blockIdx.x / .y only:
    the blocks of one grid row (or column) read the same operand tile, which a grouped order keeps in L2."""
    axes = _block_axes(body)
    for loop in (n for n in _cuda.walk(body) if n.type in _LOOPS):
        for node in _cuda.walk(loop):
            base = node.child_by_field_name("argument") if node.type == "subscript_expression" else None
            if base is None or _cuda.text(base) not in pointers:
                continue
            index = node.child_by_field_name("indices")
            if index is not None and len(_axes_of(index, axes) & {"x", "y"}) == 1:
                return node
    return None


def _check(src: Source) -> Node | str:
    """The kernel to remap, or why not."""
    found = src.kernel_body
    if isinstance(found, str):
        return found
    kernel, body = found
    for fn in _cuda.walk(src.tree.root_node):
        if fn.type == "function_definition" and not _cuda.is_kernel(fn):
            uses = [n for n in _cuda.walk(fn) if (b := _cuda.builtin_axis(n)) and b[0] == "blockIdx"]
            if uses:
                return f"device function {_cuda.function_name(fn)} reads blockIdx on line {_cuda.line_of(uses[0])}"
    for axis in ("x", "y"):
        if not _thread_index.builtin_uses(body, "blockIdx", axis):
            return f"blockIdx.{axis} is not used: not a 2-D grid of tiles"
        grid = _thread_index.builtin_uses(body, "gridDim", axis)
        if grid:
            return f"gridDim.{axis} on line {_cuda.line_of(grid[0])}: the block order is already remapped or walked"
    if src.launch is not None and len(src.launch.grid) < 2:
        return "the launch spec's grid is 1-D"
    if _shared_read(body, _pointer_params(kernel)) is None:
        return (
            "no loop reads a pointer parameter at an index that depends on only one of blockIdx.x / blockIdx.y: "
            "blocks share no operand tile in L2 (a transpose or an element-wise map reads each element once)"
        )
    return kernel


def _prologue(group: int, indent: str) -> str:
    lines = [
        f"// grid swizzle: {group} rows of blocks run together, so the tiles they read stay in L2",
        "const unsigned perfagent_bid = blockIdx.y * gridDim.x + blockIdx.x;",
        f"const unsigned perfagent_per_group = {group}u * gridDim.x;",
        f"const unsigned perfagent_first_y = perfagent_bid / perfagent_per_group * {group}u;",
        f"const unsigned perfagent_rows = gridDim.y - perfagent_first_y < {group}u ? gridDim.y - perfagent_first_y : {group}u;",
        "const unsigned perfagent_by = perfagent_first_y + perfagent_bid % perfagent_per_group % perfagent_rows;",
        "const unsigned perfagent_bx = perfagent_bid % perfagent_per_group / perfagent_rows;",
    ]
    return "".join(f"\n{indent}{line}" for line in lines)


def _edits(kernel: Node, text: str, group: int) -> list[Edit]:
    body = kernel.child_by_field_name("body")
    assert body is not None
    first = next((c for c in body.named_children), None)
    data = text.encode("utf-8")
    indent = "    "
    if first is not None:
        indent = data[_cuda.line_start(data, first.start_byte) : first.start_byte].decode() or indent
    edits = [Edit(body.start_byte + 1, body.start_byte + 1, _prologue(group, indent))]
    for axis in ("x", "y"):
        edits += [
            Edit(n.start_byte, n.end_byte, f"perfagent_b{axis}")
            for n in _thread_index.builtin_uses(body, "blockIdx", axis)
        ]
    return edits


class _GridSwizzle(CudaRecipe[Node]):
    name = NAME
    transforms = ("grid-swizzle",)
    summary = (
        "2-D tiled CUDA kernel: remap (blockIdx.x, blockIdx.y) to grouped order (GROUP_M rows) for L2 reuse"
    )

    def match(self, src: Source) -> Node | str:
        return _check(src)

    def plan(self, src: Source, m: Node) -> list[Variant]:
        return [
            Variant(
                edits=_edits(m, src.text, group),
                description=(
                    f"grouped block order: groups of {group} block rows, column-major inside a group "
                    "(blocks running together share their operand tiles in L2)"
                ),
                parameters={"GROUP": group},
            )
            for group in GROUPS
        ]


RECIPE = register(_GridSwizzle())
applies, propose = RECIPE.applies, RECIPE.propose
