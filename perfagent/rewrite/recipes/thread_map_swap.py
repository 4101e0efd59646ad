"""coalesce-access by thread-map swap: make threadIdx.x feed the unit-stride index of a 2-D kernel.

A 2-D kernel usually derives two indices, one from the x thread coordinates and one from the y ones
(``row = blockIdx.x * blockDim.x + threadIdx.x; col = blockIdx.y * blockDim.y + threadIdx.y``). A warp's
32 lanes differ in threadIdx.x, so whichever index the x coordinates feed is the one that varies across
the warp. When that index multiplies a row stride in the global accesses (``a[row * cols + col]``) and
the other one is the unit-stride term, every warp access touches 32 sectors; swapping the two
derivations' x/y roles makes the lanes walk along rows instead.

Precondition, proven on the parse tree of the kernel:
- exactly one variable is derived from the x coordinates and one from the y coordinates, and no other
  code reads threadIdx/blockIdx/blockDim/gridDim (else the swap could change more than the mapping);
- in the global accesses (index expressions expanded through the kernel's local variables), the
  y-derived index is a unit-stride term at least once and the x-derived one never is;
- both indices are bounds-checked (``if (r < rows && c < cols)`` or an early return), because the new
  grid covers the two extents with whole blocks of the other shape;
- no shared memory (a tile indexed by thread coordinates would be remapped too), a 2-D launch spec.

The rewrite swaps ``.x``/``.y`` in the two derivations only; the launch keeps its block shape (so a
warp still spans 32 consecutive x threads) and re-grids: the new grid's x covers what the old y
covered and vice versa. A second candidate also swaps the block dimensions when they differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda, _launch
from perfagent.rewrite.recipes.framework import CudaRecipe, Source, Variant, register
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "thread-map-swap"
_SWAP = {"x": "y", "y": "x"}


@dataclass
class _Map:
    """What the kernel's index derivations and global accesses look like."""

    x_var: str
    y_var: str
    derivations: list[Node]
    """The two initialiser expressions (their .x/.y are swapped)."""
    unit_x: list[int] = field(default_factory=list)
    """Lines of accesses where the x-derived index is a unit-stride term."""
    unit_y: list[int] = field(default_factory=list)
    strided_x: list[int] = field(default_factory=list)


def _axis_of(expr: Node) -> str | None:
    """'x' or 'y' when every builtin in ``expr`` is of that axis and threadIdx is among them."""
    axes = {a[1] for n in _cuda.walk(expr) if (a := _cuda.builtin_axis(n))}
    has_thread = any((a := _cuda.builtin_axis(n)) and a[0] == "threadIdx" for n in _cuda.walk(expr))
    return axes.pop() if len(axes) == 1 and has_thread else None


def _locals(kernel: Node) -> dict[str, Node]:
    """name → initialiser of every local declared once with an initialiser."""
    seen: dict[str, Node] = {}
    twice: set[str] = set()
    for _n, name, value in _cuda.initialisations(kernel):
        if name in seen:
            twice.add(name)
        seen[name] = value
    return {k: v for k, v in seen.items() if k not in twice}


def _terms(node: Node, env: dict[str, Node], depth: int = 0) -> list[Node]:
    """The additive terms of an index expression, locals expanded (up to 4 levels)."""
    node = _cuda.strip(node)
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and _cuda.text(op) in ("+", "-"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            assert left is not None and right is not None
            return _terms(left, env, depth) + _terms(right, env, depth)
    if node.type == "identifier" and depth < 4 and _cuda.text(node) in env:
        return _terms(env[_cuda.text(node)], env, depth + 1)
    return [node]


def _classify(index: Node, env: dict[str, Node], m: _Map, line: int) -> None:
    """Record whether the x/y index is a unit-stride or a strided term of this access."""
    for term in _terms(index, env):
        if term.type == "identifier":
            name = _cuda.text(term)
            if name == m.x_var:
                m.unit_x.append(line)
            elif name == m.y_var:
                m.unit_y.append(line)
            continue
        names = _cuda.identifiers_in(term)
        expanded = set(names)
        for name in names:
            if name in env and name not in (m.x_var, m.y_var):
                expanded |= _cuda.identifiers_in(env[name])
        if m.x_var in expanded:
            m.strided_x.append(line)


def _pointer_params(kernel: Node) -> set[str]:
    decl = _cuda.function_declarator(kernel)
    params = decl.child_by_field_name("parameters") if decl is not None else None
    names: set[str] = set()
    for p in params.named_children if params is not None else []:
        ptr = next((n for n in _cuda.walk(p) if n.type == "pointer_declarator"), None)
        ident = (
            next((n for n in _cuda.walk(ptr) if n.type == "identifier"), None) if ptr is not None else None
        )
        if ident is not None:
            names.add(_cuda.text(ident))
    return names


def _derivations(kernel: Node) -> tuple[dict[str, tuple[str, Node]], str | None]:
    """axis → (variable, initialiser) of the x- and y-derived indices, or why not."""
    found: dict[str, tuple[str, Node]] = {}
    for n, name, value in _cuda.initialisations(kernel):
        axis = _axis_of(value)
        if axis is None:
            continue
        if axis in found:
            return {}, f"two variables derive from the {axis} thread coordinates (line {_cuda.line_of(n)})"
        found[axis] = (name, value)
    if set(found) != {"x", "y"}:
        return {}, "the kernel does not derive one index from the x and one from the y thread coordinates"
    spans = [(d.start_byte, d.end_byte) for _, d in found.values()]
    for n in _cuda.walk(kernel):
        if _cuda.builtin_axis(n) and not any(lo <= n.start_byte and n.end_byte <= hi for lo, hi in spans):
            return {}, f"{_cuda.text(n)} on line {_cuda.line_of(n)} is used outside the two index derivations"
    return found, None


def _guarded(kernel: Node, names: tuple[str, str]) -> bool:
    """Both indices appear in an if condition (a bounds check or an early return)."""
    seen: set[str] = set()
    for n in _cuda.walk(kernel):
        if n.type == "if_statement":
            cond = n.child_by_field_name("condition")
            if cond is not None:
                seen |= _cuda.identifiers_in(cond)
    return set(names) <= seen


def analyse(kernel: Node) -> _Map | str:
    """The kernel's index map, or why the swap does not apply."""
    if any(n.type == "identifier" and _cuda.text(n) == "__shared__" for n in _cuda.walk(kernel)) or (
        "__shared__" in _cuda.text(kernel)
    ):
        return "the kernel uses shared memory: a tile indexed by thread coordinates would be remapped too"
    found, why = _derivations(kernel)
    if why is not None:
        return why
    m = _Map(x_var=found["x"][0], y_var=found["y"][0], derivations=[found["x"][1], found["y"][1]])
    if not _guarded(kernel, (m.x_var, m.y_var)):
        return f"{m.x_var} and {m.y_var} are not both bounds-checked: the re-gridded launch may overshoot"
    env = {k: v for k, v in _locals(kernel).items() if k not in (m.x_var, m.y_var)}
    pointers = _pointer_params(kernel)
    for n in _cuda.walk(kernel):
        if n.type != "subscript_expression":
            continue
        arr = n.child_by_field_name("argument")
        idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
        if idx is None:
            idx = next((c for c in n.named_children if c.type == "subscript_argument_list"), None)
        if arr is None or idx is None or _cuda.text(arr) not in pointers:
            continue
        for expr in idx.named_children if idx.type == "subscript_argument_list" else [idx]:
            _classify(expr, env, m, _cuda.line_of(n))
    if m.unit_x:
        return f"{m.x_var} (from threadIdx.x) is already the unit-stride index on line {m.unit_x[0]}: swapping would uncoalesce it"
    if not m.unit_y:
        return f"{m.y_var} (from the y coordinates) is never the unit-stride term of a global access: nothing to coalesce"
    return m


def regrid(launch: LaunchContext) -> LaunchOverride:
    """Same block; the new grid's x covers the old y extent and vice versa (whole blocks)."""
    (g0, g1), (b0, b1) = launch.grid, launch.block
    if str(b0) == str(b1):
        return LaunchOverride(grid=[g1, g0])
    return LaunchOverride(
        grid=[
            _launch.ceil_div(_launch.threads_x(g1, b1), _launch.paren(b0)),
            _launch.ceil_div(_launch.threads_x(g0, b0), _launch.paren(b1)),
        ]
    )


class _ThreadMapSwap(CudaRecipe[_Map]):
    name = NAME
    transforms = ("coalesce-access",)
    summary = "2-D kernels whose x-derived index is strided in every global access: swap the x/y thread map and re-grid"
    needs_launch = True
    launch_dims = 2

    def match(self, src: Source) -> _Map | str:
        kernel = src.kernel
        return kernel if isinstance(kernel, str) else analyse(kernel)

    def plan(self, src: Source, m: _Map) -> list[Variant]:
        assert src.launch is not None
        edits = [
            _cuda.Edit(fld.start_byte, fld.end_byte, _SWAP[_cuda.text(fld)])
            for d in m.derivations
            for n in _cuda.walk(d)
            if _cuda.builtin_axis(n) and (fld := n.child_by_field_name("field")) is not None
        ]
        what = (
            f"{m.x_var} now from the y thread coordinates and {m.y_var} from the x ones: lanes of a warp walk the "
            f"unit-stride index (lines {', '.join(map(str, sorted(set(m.unit_y))[:4]))})"
        )
        (g0, g1), (b0, b1) = src.launch.grid, src.launch.block
        out = [
            Variant(
                edits=edits,
                description=f"thread-map swap: {what}; block kept, grid re-covered",
                parameters={"swapped": f"{m.x_var}<->{m.y_var}", "block": "kept"},
                launch=regrid(src.launch),
            )
        ]
        if str(b0) != str(b1):
            out.append(
                Variant(
                    edits=edits,
                    description=f"thread-map swap: {what}; block and grid dimensions swapped",
                    parameters={"swapped": f"{m.x_var}<->{m.y_var}", "block": "swapped"},
                    launch=LaunchOverride(grid=[g1, g0], block=[b1, b0]),
                )
            )
        return out


RECIPE = register(_ThreadMapSwap())
applies, propose = RECIPE.applies, RECIPE.propose
