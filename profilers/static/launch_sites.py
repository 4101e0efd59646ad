"""Find kernel launch configurations in CUDA source with a real parse tree (tree-sitter-cuda).

Static analysis knows registers and shared memory per kernel from ptxas but not how the kernel is
launched; occupancy needs the block size. This module reads ``kernel<<<grid, block, smem>>>`` launch
sites and ``__launch_bounds__(N)`` and resolves their arguments when they are compile-time constants:
integer literals, ``dim3(x, y, z)`` and ``{x, y, z}``, ``sizeof`` of basic types, arithmetic, and names
bound to such values by ``#define NAME 256``, ``constexpr int NAME = 256`` or an integer/``dim3``
variable initialised once and never reassigned. Anything else is reported as unresolved, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Tree

Dim3 = tuple[int, int, int]
Value = int | Dim3

_SIZEOF = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4,
    "int32_t": 4, "uint32_t": 4, "__half2": 4, "half2": 4, "long": 8, "unsigned long": 8,
    "long long": 8, "unsigned long long": 8, "double": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8,
    "float2": 8, "int2": 8, "float4": 16, "int4": 16, "uint4": 16, "double2": 16,
}  # fmt: skip
_BINARY_OPS = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}


@dataclass(frozen=True)
class LaunchSite:
    """One ``kernel<<<...>>>`` launch found in the source."""

    kernel: str
    """Kernel name without namespace or template arguments."""
    line: int
    """1-based source line of the launch."""
    grid: Dim3 | None
    """Grid dimensions when constant."""
    block: Dim3 | None
    """Block dimensions when constant."""
    block_text: str
    """The block argument as written."""
    dynamic_shared_bytes: int | None
    """Third launch argument when constant (0 when absent); None when present but not constant."""
    shared_text: str | None
    """The third launch argument as written, when present."""


@dataclass(frozen=True)
class SourceLaunches:
    """Launch information of one translation unit."""

    launches: tuple[LaunchSite, ...]
    launch_bounds: dict[str, int]
    """Kernel name -> maxThreadsPerBlock of its ``__launch_bounds__`` (when constant)."""
    kernels: tuple[str, ...] = ()
    """Names of the ``__global__`` functions defined in the source, in source order."""

    def sites_for(self, kernel: str) -> list[LaunchSite]:
        """Launch sites of ``kernel`` (base name), in source order."""
        return [site for site in self.launches if site.kernel == kernel]


def analyze_launches(source: str) -> SourceLaunches:
    """Launch sites and launch bounds of every kernel in ``source``.

    Args:
        source: CUDA C++ source text.

    Returns:
        The launch sites in source order and the constant ``__launch_bounds__`` per kernel.
    """
    tree = _parser().parse(source.encode())
    constants = _Constants(tree)
    launches = tuple(_launch_site(node, constants) for node in _walk(tree.root_node) if _is_launch(node))
    bounds: dict[str, int] = {}
    kernels: list[str] = []
    for node in _walk(tree.root_node):
        if node.type == "launch_bounds" and node.parent is not None:
            name = _declared_name(node.parent)
            args = [c for c in node.named_children if c.type != "comment"]
            value = constants.evaluate(args[0]) if args else None
            if name and isinstance(value, int):
                bounds[name] = value
        elif node.type == "function_definition" and any(c.type == "__global__" for c in node.children):
            name = _declared_name(node)
            if name and name not in kernels:
                kernels.append(name)
    return SourceLaunches(launches=launches, launch_bounds=bounds, kernels=tuple(kernels))


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_cuda.language()))


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _is_launch(node: Node) -> bool:
    return node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children)


def _launch_site(call: Node, constants: _Constants) -> LaunchSite:
    config = next(c for c in call.children if c.type == "kernel_call_syntax")
    args = [c for c in config.named_children if c.type != "comment"]
    function = call.child_by_field_name("function")
    grid = constants.evaluate_dim(args[0]) if args else None
    block = constants.evaluate_dim(args[1]) if len(args) > 1 else None
    shared: int | None = 0
    if len(args) > 2:
        value = constants.evaluate(args[2])
        shared = value if isinstance(value, int) else None
    return LaunchSite(
        kernel=_base_identifier(function) if function is not None else "",
        line=call.start_point[0] + 1,
        grid=grid,
        block=block,
        block_text=_text(args[1]).strip() if len(args) > 1 else "",
        dynamic_shared_bytes=shared,
        shared_text=_text(args[2]).strip() if len(args) > 2 else None,
    )


def _base_identifier(node: Node) -> str:
    """'k' for k, ns::k, k<float>, ns::k<256>."""
    while node.type in ("qualified_identifier", "template_function"):
        inner = node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return _text(node)


def _declared_name(node: Node) -> str | None:
    """Name of the function a definition/declaration declares (for ``__launch_bounds__``)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    name = declarator.child_by_field_name("declarator")
    return _base_identifier(name) if name is not None else None


class _Constants:
    """Names with one compile-time value in the translation unit, and an evaluator over them."""

    def __init__(self, tree: Tree) -> None:
        # name -> expression nodes that define it; a name with several definitions that disagree,
        # or that is ever reassigned or declared without a constant initialiser, is unresolved.
        self._definitions: dict[str, list[Node]] = {}
        self._dim_args: dict[str, list[Node]] = {}
        self._unresolvable: set[str] = set()
        self._macro_trees: list[Tree] = []  # keep macro snippet trees alive while nodes are used
        self._cache: dict[str, Value | None] = {}
        self._resolving: set[str] = set()
        for node in _walk(tree.root_node):
            self._collect(node)

    def _collect(self, node: Node) -> None:
        if node.type == "preproc_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                self._add_macro(_text(name), _text(value))
        elif node.type == "init_declarator":
            name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if name is not None and name.type == "identifier" and value is not None:
                self._definitions.setdefault(_text(name), []).append(value)
        elif node.type == "function_declarator" and _is_dim3_declaration(node.parent):
            # `dim3 block(BX, BY);` parses as a function declaration when the arguments are names.
            name, params = node.child_by_field_name("declarator"), node.child_by_field_name("parameters")
            if name is not None and params is not None:
                self._dim_args.setdefault(_text(name), []).extend(params.named_children)
        elif node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if target is not None and target.type == "identifier":
                self._unresolvable.add(_text(target))
        elif node.type in ("parameter_declaration", "declaration"):
            self._mark_uninitialised(node)

    def _mark_uninitialised(self, node: Node) -> None:
        for declarator in node.children_by_field_name("declarator"):
            if declarator.type == "identifier":  # `int n;` or a parameter `int n`
                self._unresolvable.add(_text(declarator))

    def _add_macro(self, name: str, value_text: str) -> None:
        # The value on lines of its own: a trailing `// comment` in the macro must not eat the `);`.
        body = value_text.replace("\\\n", " ")
        snippet = _parser().parse(f"auto __perfagent_macro = (\n{body}\n);".encode())
        self._macro_trees.append(snippet)
        value = next((n for n in _walk(snippet.root_node) if n.type == "parenthesized_expression"), None)
        if value is None or snippet.root_node.has_error:
            self._unresolvable.add(name)
        else:
            self._definitions.setdefault(name, []).append(value)

    def lookup(self, name: str) -> Value | None:
        """The single compile-time value bound to ``name``, else None."""
        if name in self._unresolvable or name in self._resolving:
            return None
        if name not in self._cache:
            self._resolving.add(name)
            try:
                self._cache[name] = self._resolve(name)
            finally:
                self._resolving.discard(name)
        return self._cache[name]

    def _resolve(self, name: str) -> Value | None:
        values: set[Value | None] = {self.evaluate(node) for node in self._definitions.get(name, [])}
        if name in self._dim_args:
            values.add(self._dim_from(self._dim_args[name]))
        if len(values) != 1:
            return None
        return values.pop()

    def evaluate_dim(self, node: Node) -> Dim3 | None:
        """A launch dimension: an int becomes (n, 1, 1)."""
        value = self.evaluate(node)
        return (value, 1, 1) if isinstance(value, int) else value

    def evaluate(self, node: Node) -> Value | None:
        """The compile-time value of an expression node, else None."""
        kind = node.type
        if kind == "number_literal":
            return _parse_int(_text(node))
        if kind == "identifier":
            return self.lookup(_text(node))
        if kind == "parenthesized_expression":
            inner = next((c for c in node.named_children if c.type != "comment"), None)
            return self.evaluate(inner) if inner is not None else None
        if kind == "cast_expression":
            inner = node.child_by_field_name("value")
            return self.evaluate(inner) if inner is not None else None
        if kind == "binary_expression":
            return self._binary(node)
        if kind == "unary_expression":
            operand = node.child_by_field_name("argument")
            value = self.evaluate(operand) if operand is not None else None
            operator = node.child_by_field_name("operator")
            if isinstance(value, int) and operator is not None and _text(operator) in ("-", "+"):
                return -value if _text(operator) == "-" else value
            return None
        if kind == "sizeof_expression":
            type_node = node.child_by_field_name("type")
            return _SIZEOF.get(" ".join(_text(type_node).split())) if type_node is not None else None
        if kind == "call_expression":
            return self._call(node)
        if kind == "initializer_list":
            return self._dim_from(node.named_children)
        if kind == "argument_list":  # constructor syntax: `dim3 grid(4)`, `dim3 block(16, 16)`
            args = [n for n in node.named_children if n.type != "comment"]
            return self.evaluate(args[0]) if len(args) == 1 else self._dim_from(args)
        if kind == "compound_literal_expression":
            literal = node.child_by_field_name("value")
            return self.evaluate(literal) if literal is not None else None
        return None

    def _binary(self, node: Node) -> int | None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left is None or right is None or operator is None or _text(operator) not in _BINARY_OPS:
            return None
        a, b = self.evaluate(left), self.evaluate(right)
        if not isinstance(a, int) or not isinstance(b, int):
            return None
        return _apply(_text(operator), a, b)

    def _call(self, node: Node) -> Value | None:
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if function is None or arguments is None:
            return None
        name = _base_identifier(function)
        if name == "dim3":
            return self._dim_from(arguments.named_children)
        if name == "static_cast" and len(arguments.named_children) == 1:
            return self.evaluate(arguments.named_children[0])
        return None

    def _dim_from(self, nodes: list[Node]) -> Dim3 | None:
        parts = [self._evaluate_part(n) for n in nodes if n.type != "comment"]
        if not 1 <= len(parts) <= 3 or not all(isinstance(p, int) for p in parts):
            return None
        ints = [p for p in parts if isinstance(p, int)] + [1, 1]
        return (ints[0], ints[1], ints[2])

    def _evaluate_part(self, node: Node) -> Value | None:
        # Arguments of `dim3 b(BX, BY)` parsed as a declaration are parameter declarations of a type.
        if node.type == "parameter_declaration":
            return self.lookup(_text(node).strip())
        return self.evaluate(node)


def _is_dim3_declaration(node: Node | None) -> bool:
    if node is None or node.type != "declaration":
        return False
    type_node = node.child_by_field_name("type")
    return type_node is not None and _text(type_node) == "dim3"


def _parse_int(text: str) -> int | None:
    digits = text.replace("'", "").rstrip("uUlL")
    try:
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            return int(digits, 8)
        return int(digits, 0)
    except ValueError:
        return None  # floating-point literal


def _apply(operator: str, a: int, b: int) -> int | None:
    if operator in ("/", "%") and b == 0:
        return None
    if operator in ("<<", ">>") and not 0 <= b < 64:
        return None
    match operator:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            quotient = abs(a) // abs(b)  # C truncates toward zero
            return quotient if (a >= 0) == (b >= 0) else -quotient
        case "%":
            quotient = abs(a) // abs(b)
            return a - b * (quotient if (a >= 0) == (b >= 0) else -quotient)
        case "<<":
            return a << b
        case ">>":
            return a >> b
        case "&":
            return a & b
        case "|":
            return a | b
        case "^":
            return a ^ b
    return None
