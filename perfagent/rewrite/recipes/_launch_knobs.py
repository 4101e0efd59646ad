"""launch-config's knobs: where a compile-time block size is written (a launch's block, dim3, __launch_bounds__, a block-size constant) and the edits that change it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node, Tree

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import Constant, Edit
from perfagent.rewrite.recipes.framework import Source

THREAD_VALUES = (64, 128, 256, 512, 1024)
DIM_VALUES = (1, 2, 4, 8, 16, 32)
MAX_THREADS = 1024
BLOCK_NAME = re.compile(
    r"^(?:[A-Z0-9]+_)*(?:BLOCK(?:_?SIZE|_?DIM|_THREADS|_ROWS|_[XYZ])?|(?:N|NUM_)?THREADS(?:_PER_BLOCK)?)$"
    r"|^k?[Bb]lock_?[Ss]ize$|^k?[Tt]hreads(?:_?[Pp]er_?[Bb]lock)?$"
)
Env = dict[str, Constant | int]
KIND_LABEL = {"macro": "#define", "constexpr": "constexpr", "template": "template parameter"}


@dataclass
class _Knob:
    label: str
    """How the knob is described ('#define BLOCK_ROWS (line 9)')."""
    key: str
    """Parameter name in the candidate (the constant's name, or 'block@line')."""
    current: int
    edits: Callable[[int], list[Edit]]
    constant: Constant | None = None
    launches: list[Node] = field(default_factory=list)
    """Launch sites whose block argument depends on the knob."""
    users: list[Node] = field(default_factory=list)
    """Kernels that use the knob (for launch bounds and shared memory)."""
    priority: int = 2
    literal_launches: list[Node] = field(default_factory=list)
    """Launches whose literal block argument this knob also rewrites (merged with a template parameter)."""

    @property
    def role_values(self) -> tuple[int, ...]:
        return THREAD_VALUES if self.current >= 32 else DIM_VALUES


def _block_total(arg: Node, env: Env, scope: Node | None) -> int | None:
    """Threads per block of a launch's block argument (None when not constant)."""
    if (
        arg.type == "call_expression"
        and _cuda.text(arg.child_by_field_name("function") or arg).strip() == "dim3"
    ):
        dims = [_cuda.evaluate(_cuda.text(a), env) for a in _cuda.call_args(arg)]
        return None if any(d is None for d in dims) else math.prod(d or 0 for d in dims)
    if arg.type == "identifier" and scope is not None:
        init = _dim3_initializer(_cuda.text(arg), scope)
        if init is not None:
            dims = [_cuda.evaluate(_cuda.text(a), env) for a in init]
            return None if any(d is None for d in dims) else math.prod(d or 0 for d in dims)
    return _cuda.evaluate(_cuda.text(arg), env)


def _dim3_initializer(name: str, scope: Node) -> list[Node] | None:
    """Arguments of ``dim3 name(a, b)`` / ``dim3 name = dim3(a, b)`` / ``dim3 name{a, b}`` in ``scope``."""
    for node in _cuda.walk(scope):
        if node.type != "declaration" or "dim3" not in _cuda.element_type(node):
            continue
        for declarator in node.children_by_field_name("declarator"):
            if declarator.type == "init_declarator":
                ident = declarator.child_by_field_name("declarator")
                value = declarator.child_by_field_name("value")
                if ident is None or _cuda.text(ident) != name or value is None:
                    continue
                if value.type in ("argument_list", "initializer_list"):
                    return [c for c in value.named_children if c.type != "comment"]
                if value.type == "call_expression":
                    return _cuda.call_args(value)
                return [value]
            if declarator.type == "function_declarator":
                # ``dim3 block(THREADS)`` parses as a function declaration (C++'s most vexing parse).
                ident = declarator.child_by_field_name("declarator")
                params = declarator.child_by_field_name("parameters")
                if ident is None or _cuda.text(ident) != name or params is None:
                    continue
                args = [c for c in params.named_children if c.type != "comment"]
                if all(a.type == "parameter_declaration" and a.named_child_count == 1 for a in args):
                    return args
    return None


def _initializer_node(name: str, scope: Node) -> Node | None:
    for node in _cuda.walk(scope):
        if node.type == "init_declarator":
            ident = node.child_by_field_name("declarator")
            if ident is not None and _cuda.text(ident) == name:
                return node.child_by_field_name("value")
    return None


def _template_index(tree: Tree, kernel: str, param: str) -> int | None:
    for node in _cuda.walk(tree.root_node):
        if node.type != "template_declaration":
            continue
        fn = next((c for c in node.named_children if c.type == "function_definition"), None)
        if fn is None or _cuda.function_name(fn) != kernel:
            continue
        params = node.child_by_field_name("parameters")
        if params is None:
            return None
        names = []
        for p in params.named_children:
            ident = p.child_by_field_name("declarator") or p.child_by_field_name("name")
            names.append(_cuda.text(ident) if ident is not None else "")
        return names.index(param) if param in names else None
    return None


class _KnobFinder:
    """Collects the knobs of one parsed source, keyed by constant name or ``block@line``."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.consts = _cuda.constants(tree)
        self.env: Env = dict(self.consts)
        self.knobs: dict[str, _Knob] = {}
        self.all_kernels = _cuda.kernels(tree)

    def users_of(self, name: str) -> list[Node]:
        return [fn for fn in self.all_kernels if name in _cuda.identifiers_in(fn)]

    def add_constant(self, name: str, priority: int) -> None:
        """A knob for the named constant (when it holds a positive value); a lower ``priority`` wins."""
        const = self.consts.get(name)
        if const is None:
            return
        value = _cuda.evaluate(const.expr, self.env)
        if value is None or value <= 0:
            return
        if name in self.knobs:
            self.knobs[name].priority = min(self.knobs[name].priority, priority)
            return
        self.knobs[name] = _Knob(
            label=f"{KIND_LABEL[const.kind]} {name} (line {_cuda.line_of(const.value_node)})",
            key=name,
            current=value,
            edits=_const_edits(self.tree, const),
            constant=const,
            users=self.users_of(name),
            priority=priority,
        )

    def add_launch(self, call: Node) -> None:
        """Knobs of one launch: constants its block argument (or dim3 variable) names, and its literals."""
        config = _cuda.launch_config_args(call)
        if len(config) < 2:
            return
        grid, block = config[0], config[1]
        scope = _cuda.enclosing(call, "function_definition")
        dim_nodes = _block_dims(block, scope)
        grid_dims = _grid_dims(grid, scope)
        for index, node in enumerate(dim_nodes):
            for ident in sorted(_cuda.identifiers_in(node)):
                if ident in self.consts:
                    self.add_constant(ident, 0)
                    if ident in self.knobs:
                        self.knobs[ident].launches.append(call)
            if node.type == "number_literal":
                related = grid_dims[index : index + 1] if len(dim_nodes) > 1 else grid_dims
                self._add_literal(call, node, index if len(dim_nodes) > 1 else None, related)

    def _add_literal(self, call: Node, node: Node, axis_index: int | None, grid_dims: list[Node]) -> None:
        """A knob for a literal block dimension (``axis_index`` of a dim3, None for a plain block size)."""
        value = _cuda.evaluate(_cuda.text(node), {})
        if value is None:
            return
        axis = f".{'xyz'[axis_index]}" if axis_index is not None and axis_index < 3 else ""
        key = f"block{axis}@{_cuda.line_of(node)}"
        launched = _cuda.launched_name(call)
        kernel_fn = [fn for fn in self.all_kernels if _cuda.function_name(fn) == launched]
        if key in self.knobs:  # one dim3 variable used by several launches
            self.knobs[key].launches.append(call)
            self.knobs[key].users.extend(fn for fn in kernel_fn if fn not in self.knobs[key].users)
            return
        self.knobs[key] = _Knob(
            label=f"literal block size {value} of the {launched} launch (line {_cuda.line_of(node)})",
            key=key,
            current=value,
            edits=_literal_edits(node, value, grid_dims),
            launches=[call],
            users=kernel_fn,
            priority=0,
        )


def _block_dims(block: Node, scope: Node | None) -> list[Node]:
    """The expressions of a launch's block argument: dim3 call arguments, a dim3 variable's, or itself."""
    if block.type == "call_expression":
        return _cuda.call_args(block)
    if block.type == "identifier" and scope is not None:
        init = _dim3_initializer(_cuda.text(block), scope)
        if init is not None:
            return init
    return [block]


def _grid_dims(grid: Node, scope: Node | None) -> list[Node]:
    """The expressions of a launch's grid argument (a dim3 variable's initialiser, or its plain value)."""
    if grid.type == "call_expression":
        return _cuda.call_args(grid)
    if grid.type == "identifier" and scope is not None:
        init_value = _initializer_node(_cuda.text(grid), scope)
        return _dim3_initializer(_cuda.text(grid), scope) or (
            [init_value] if init_value is not None else [grid]
        )
    return [grid]


_NO_KNOB = (
    "no compile-time block size found: no <<<grid, block>>> launch with a constant block, no "
    "__launch_bounds__(NAME) and no constant named like a block size (BLOCK, BLOCK_SIZE, THREADS, *_BLOCK, BLOCK_ROWS)"
)


_Found = tuple[list[_Knob], Env]


def _scan(src: Source) -> _Found | str:
    request, tree = src.request, src.tree
    finder = _KnobFinder(tree)
    targets = _cuda.kernels(tree, request.kernel)
    if request.kernel is not None and not targets:
        return f"no __global__ function named {request.kernel} in the source"
    # 1. launches: the block argument (and dim3 variables) names constants or holds literals.
    for call in _cuda.launch_sites(tree):
        if request.kernel is None or _cuda.launched_name(call) == _cuda.bare_name(request.kernel):
            finder.add_launch(call)
    # 2. __launch_bounds__(NAME) and 3. block-size names.
    for fn in targets:
        bounds = _cuda.launch_bounds(fn)
        if bounds is not None:
            args = [c for c in bounds.named_children if c.type != "comment"]
            if args and args[0].type == "identifier":
                finder.add_constant(_cuda.text(args[0]), 1)
    for name in finder.consts:
        if BLOCK_NAME.match(name) and (
            request.kernel is None or any(name in _cuda.identifiers_in(fn) for fn in targets)
        ):
            finder.add_constant(name, 2)
    _merge_template_launches(tree, finder.knobs)
    if not finder.knobs:
        return _NO_KNOB
    return sorted(finder.knobs.values(), key=lambda k: (k.priority, k.key)), finder.env


def _merge_template_launches(tree: Tree, knobs: dict[str, _Knob]) -> None:
    """Couple a template block-size parameter with the launches that instantiate it explicitly.

    ``block_sum<256><<<g, 256>>>`` ties the template argument to the literal block size: both must
    change together, so the literal's knob is folded into the template parameter's knob.
    """
    for knob in list(knobs.values()):
        const = knob.constant
        if const is None or const.kind != "template":
            continue
        for call in _cuda.launch_sites(tree):
            fn = call.child_by_field_name("function") or call.children[0]
            targs = fn.child_by_field_name("arguments") if fn.type == "template_function" else None
            index = _template_index(tree, _cuda.launched_name(call), const.name)
            if targs is None or index is None:
                continue
            args = [c for c in targs.named_children if c.type != "comment"]
            if index >= len(args) or _cuda.evaluate(_cuda.text(args[index]), {}) != knob.current:
                continue
            knob.launches.append(call)
            for key, other in list(knobs.items()):
                if other.constant is None and call in other.launches and other.current == knob.current:
                    const_edits, literal_edits = knob.edits, other.edits
                    knob.edits = lambda v, a=const_edits, b=literal_edits: a(v) + b(v)  # type: ignore[misc]
                    knob.literal_launches.append(call)
                    knob.priority = 0
                    del knobs[key]


def _const_edits(tree: Tree, const: Constant) -> Callable[[int], list[Edit]]:
    """Edits that set ``const`` to a new value (and explicit template arguments at launches)."""

    def edits(value: int) -> list[Edit]:
        out = [Edit(const.value_start, const.value_end, str(value))]
        if const.kind == "template":
            for call in _cuda.launch_sites(tree):
                fn = call.child_by_field_name("function") or call.children[0]
                if fn.type != "template_function":
                    continue
                index = _template_index(tree, _cuda.launched_name(call), const.name)
                targs = fn.child_by_field_name("arguments")
                if index is None or targs is None:
                    continue
                args = [c for c in targs.named_children if c.type != "comment"]
                if index < len(args) and args[index].type in ("number_literal", "type_descriptor"):
                    literal = args[index]
                    if _cuda.evaluate(_cuda.text(literal), {}) is not None:
                        out.append(Edit(literal.start_byte, literal.end_byte, str(value)))
        return out

    return edits


def _literal_edits(node: Node, value: int, grid_nodes: list[Node]) -> Callable[[int], list[Edit]]:
    """Edits for a literal block size: the literal, and ``value`` / ``value - 1`` literals in the grid.

    ``grid_nodes`` are the grid expressions of the same dimension (the whole grid for 1-D blocks).
    """

    def edits(new: int) -> list[Edit]:
        out = [Edit(node.start_byte, node.end_byte, str(new))]
        for g in grid_nodes:
            for lit in _cuda.walk(g):
                if lit.type != "number_literal" or lit == node:
                    continue
                v = _cuda.evaluate(_cuda.text(lit), {})
                if v == value:
                    out.append(Edit(lit.start_byte, lit.end_byte, str(new)))
                elif v == value - 1 and value > 1:
                    out.append(Edit(lit.start_byte, lit.end_byte, str(new - 1)))
        return out

    return edits
