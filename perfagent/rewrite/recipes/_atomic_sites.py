"""Global atomics whose address is the same for every thread of a block, found on the tree-sitter tree.

``block-aggregate-atomics`` needs, for each ``atomicOp(address, value);`` statement of a kernel, a proof
that ``address`` is *block-invariant*: the same for every thread of a block and every time the statement
runs, so that one thread can recompute it after the block has combined its values. The proof is a taint
check over the kernel's assignments. An address may use

- literals, ``blockIdx`` / ``blockDim`` / ``gridDim``, the file's ``#define`` / ``constexpr`` constants;
- kernel parameters that the kernel never assigns;
- local variables declared exactly once, with an initialiser that is itself block-invariant, and never
  assigned, incremented or address-taken afterwards (so substituting the initialiser is the same value);
- casts, ``reinterpret_cast`` / ``static_cast``, ``sizeof``, ``min`` / ``max`` of those.

Anything else taints it, and the refusal names the line: ``threadIdx`` (directly or through a local), a
memory read (``p[i]``, ``*p``: another thread may have written it), another call, a loop counter or any
variable assigned twice (it changes between executions of the atomic).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._atomic_helpers import Helper

OPS: dict[str, tuple[str, frozenset[str]]] = {
    "atomicAdd": ("add", frozenset({"int", "unsigned int", "unsigned long long", "float", "double"})),
    "atomicSub": ("add", frozenset({"int", "unsigned int"})),
    "atomicMax": ("max", frozenset({"int", "unsigned int", "long long", "unsigned long long"})),
    "atomicMin": ("min", frozenset({"int", "unsigned int", "long long", "unsigned long long"})),
    "atomicAnd": ("and", frozenset({"int", "unsigned int", "unsigned long long"})),
    "atomicOr": ("or", frozenset({"int", "unsigned int", "unsigned long long"})),
    "atomicXor": ("xor", frozenset({"int", "unsigned int", "unsigned long long"})),
}
"""Atomic function -> (how a block combines its values, the element types CUDA defines it for).
``atomicSub`` values are summed and subtracted once."""
_TYPE_NAMES = {
    "int": "int",
    "int32_t": "int",
    "signed int": "int",
    "unsigned": "unsigned int",
    "unsigned int": "unsigned int",
    "uint32_t": "unsigned int",
    "unsigned long long": "unsigned long long",
    "unsigned long long int": "unsigned long long",
    "long long": "long long",
    "long long int": "long long",
    "float": "float",
    "double": "double",
}
_PURE_CALLS = frozenset({"min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax"})
_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


@dataclass(frozen=True)
class Site:
    """One ``atomicOp(address, value);`` statement with a block-invariant address."""

    statement: Node
    function: str
    """The atomic (or the file's CAS-loop helper) the block calls once at the end."""
    kind: str
    """How values combine: 'add', 'max', 'min', 'and', 'or', 'xor'; 'fmax', 'fmin', 'fadd' for helpers."""
    element: str
    """The accumulator's element type, normalised ('unsigned int')."""
    address: str
    """The address with every local replaced by its initialiser: valid anywhere in the kernel body."""
    value: Node
    param: str
    """The pointer parameter the address is rooted at."""


def normalised_type(text: str) -> str | None:
    """'unsigned int' for 'unsigned', None for a type the atomics do not take."""
    words = " ".join(text.replace("const", " ").replace("volatile", " ").split())
    return _TYPE_NAMES.get(words)


def _template_name(call: Node) -> str:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn
    return _cuda.text(fn) if fn is not None else ""


def _pointee_of_cast(node: Node) -> str | None:
    """The pointee type named by a cast to a single-level pointer (C-style or ``*_cast<T *>``), else None."""
    if node.type == "cast_expression":
        typ = node.child_by_field_name("type")
    elif node.type == "call_expression" and _template_name(node) in _CASTS:
        fn = node.child_by_field_name("function")
        args = fn.child_by_field_name("arguments") if fn is not None else None
        typ = next((c for c in args.named_children if c.type == "type_descriptor"), None) if args else None
    else:
        return None
    if typ is None or _cuda.text(typ).count("*") != 1:
        return None
    inner = typ.child_by_field_name("type")
    return normalised_type(_cuda.text(inner)) if inner is not None else None


def _cast_operand(node: Node) -> Node | None:
    if node.type == "cast_expression":
        return node.child_by_field_name("value")
    if node.type == "call_expression" and _template_name(node) in _CASTS:
        args = node.child_by_field_name("arguments")
        return args.named_children[0] if args is not None and len(args.named_children) == 1 else None
    return None


def root(address: Node, pointers: dict[str, str]) -> tuple[str, str | None] | None:
    """(pointer parameter, element type or None) of ``P``, ``&P[e]``, ``P + e`` and casts of those."""
    node, element = address, None
    while True:
        if node.type == "parenthesized_expression":
            node = node.named_children[-1]
            continue
        operand = _cast_operand(node)
        if operand is None:
            break
        element = element or _pointee_of_cast(node) or "?"
        node = operand
    if node.type == "pointer_expression" and _cuda.text(node).startswith("&"):
        inner = _cuda.strip(node.child_by_field_name("argument") or node)
        base = inner.child_by_field_name("argument") if inner.type == "subscript_expression" else inner
        node = _cuda.strip(base) if base is not None else address
    elif node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        sides = [_cuda.strip(node.child_by_field_name(f) or node) for f in ("left", "right")]
        named = [s for s in sides if s.type == "identifier" and _cuda.text(s) in pointers]
        node = named[0] if len(named) == 1 else node
    name = _cuda.text(node)
    if node.type != "identifier" or name not in pointers:
        return None
    if element == "?":
        return name, None
    return name, element or normalised_type(pointers[name])


class Invariance:
    """The block-invariance proof over one kernel (see the module docstring); results are memoised."""

    def __init__(self, kernel: Node, body: Node, constants: set[str]) -> None:
        self.body = body
        self.params = {name for name, _, _ in _cuda.kernel_params(kernel)}
        self.declared = {
            _declared_name(d)
            for d in _cuda.walk(body)
            if d.type in ("init_declarator", "identifier")
            and d.parent is not None
            and d.parent.type == "declaration"
        }
        # a local shadows a file constant of its name
        self.constants = constants - self.declared
        self._locals: dict[str, str | Node] = {}

    def why_not(self, expr: Node) -> str | None:
        """Why ``expr`` may differ between threads of a block or between executions, or None."""
        for node in _cuda.walk(expr):
            why = self._node(node)
            if why is not None:
                return why
        return None

    def _node(self, node: Node) -> str | None:
        builtin = _cuda.builtin_axis(node)
        if builtin is not None:
            return f"it depends on threadIdx.{builtin[1]}" if builtin[0] == "threadIdx" else None
        if node.type in ("subscript_expression", "pointer_expression") and not _address_only(node):
            return f"it reads memory ({_cuda.text(node)}), which other threads may change"
        if node.type in ("assignment_expression", "update_expression"):
            return f"it assigns ({_cuda.text(node)})"
        if node.type == "call_expression":
            name = _template_name(node)
            if name not in _PURE_CALLS and name not in _CASTS:
                return f"it calls {name}()"
        if node.type == "identifier" and not _is_callee(node) and _cuda.text(node) not in _cuda.BUILTINS:
            return self._name(_cuda.text(node))
        return None

    def _name(self, name: str) -> str | None:
        if name in self.params:
            changed = _assignment(self.body, name)
            return (
                None
                if changed is None
                else f"the parameter {name} is assigned on line {_cuda.line_of(changed)}"
            )
        if name in self.constants:
            return None
        found = self.local(name)
        return found if isinstance(found, str) else None

    def local(self, name: str) -> str | Node:
        """The initialiser of the block-invariant local ``name``, or why it is not one."""
        if name not in self._locals:
            self._locals[name] = f"{name} is being analysed (it refers to itself)"
            self._locals[name] = self._local(name)
        return self._locals[name]

    def _local(self, name: str) -> str | Node:
        decls = [
            d
            for d in _cuda.walk(self.body)
            if d.type in ("init_declarator", "identifier")
            and d.parent is not None
            and d.parent.type == "declaration"
            and _declared_name(d) == name
        ]
        if not decls:
            return f"{name} is not a parameter, a constant or a local of the kernel"
        if len(decls) > 1:
            return f"{name} is declared {len(decls)} times (lines {', '.join(str(_cuda.line_of(d)) for d in decls)})"
        [decl] = decls
        value = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
        if value is None:
            return f"{name} is declared without a value on line {_cuda.line_of(decl)}"
        changed = _assignment(self.body, name)
        if changed is not None:
            return f"{name} changes on line {_cuda.line_of(changed)}"
        why = self.why_not(value)
        return value if why is None else f"{name} (line {_cuda.line_of(decl)}): {why}"

    def substituted(self, expr: Node) -> str:
        """``expr``'s text with every local replaced by its (substituted) initialiser, in parentheses."""
        data, out, at = expr.text or b"", [], expr.start_byte
        for node in _cuda.walk(expr):
            if node.type != "identifier" or _is_callee(node) or node.start_byte < at:
                continue
            name = _cuda.text(node)
            if name in self.params or name in self.constants or name in _cuda.BUILTINS:
                continue
            value = self.local(name)
            if isinstance(value, str):
                continue
            out.append(data[at - expr.start_byte : node.start_byte - expr.start_byte].decode("utf-8"))
            out.append(f"({self.substituted(value)})")
            at = node.end_byte
        out.append(data[at - expr.start_byte :].decode("utf-8"))
        return "".join(out)


def _address_only(node: Node) -> bool:
    """``&x`` or the ``x[i]`` of ``&x[i]``: an address computed, no memory read."""
    if node.type == "pointer_expression":
        return _cuda.text(node).startswith("&")
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "pointer_expression" and _cuda.text(parent).startswith("&")


def _is_callee(node: Node) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "template_function":
        return True
    return (
        parent is not None
        and parent.type == "call_expression"
        and parent.child_by_field_name("function") == node
    )


def _declared_name(decl: Node) -> str:
    node = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
    while node is not None and node.type not in ("identifier",):
        node = node.child_by_field_name("declarator")
    return _cuda.text(node) if node is not None else ""


def _assignment(body: Node, name: str) -> Node | None:
    """The first assignment, increment or address-taking (``&name``) of the variable ``name`` in ``body``."""
    for sub in _cuda.walk(body):
        target = None
        if sub.type == "assignment_expression":
            target = sub.child_by_field_name("left")
        elif sub.type == "update_expression":
            target = sub.child_by_field_name("argument")
        elif sub.type == "pointer_expression" and _cuda.text(sub).startswith("&"):
            target = sub.child_by_field_name("argument")
        if target is not None and _cuda.text(_cuda.strip(target)) == name:
            return sub
    return None


def sites(
    kernel: Node, body: Node, constants: set[str], helpers: dict[str, Helper | str]
) -> tuple[list[Site], list[str]]:
    """The block-invariant atomic statements of the kernel (``helpers``: the file's CAS-loop helpers),
    and why each other atomic is not one."""
    pointers = {name: typ for name, typ, ptr in _cuda.kernel_params(kernel) if ptr}
    proof = Invariance(kernel, body, constants)
    found: list[Site] = []
    reasons: list[str] = []
    for call in _cuda.walk(body):
        if call.type != "call_expression":
            continue
        name, line = _template_name(call), _cuda.line_of(call)
        helper = helpers.get(name)
        if name in OPS:
            site = _site(call, pointers, proof, *OPS[name])
        elif isinstance(helper, tuple):
            site = _site(call, pointers, proof, helper[0], frozenset({helper[1]}))
        elif helper is not None:
            site = f"line {line}: {name}() uses atomics, but not as a CAS-loop max, min or sum: {helper}"
        elif name.startswith("atomic"):
            site = f"line {line}: {name} is not an atomic this recipe combines ({', '.join(OPS)})"
        else:
            continue
        (found if isinstance(site, Site) else reasons).append(site)  # type: ignore[arg-type]
    kept, dropped = _whole_parameters(body, found)
    return kept, reasons + dropped


def _site(
    call: Node, pointers: dict[str, str], proof: Invariance, kind: str, types: frozenset[str]
) -> Site | str:
    function = _template_name(call)
    args = _cuda.call_args(call)
    where = f"line {_cuda.line_of(call)}: {function}"
    if len(args) != 2:
        return f"{where} does not take (address, value)"
    found = root(args[0], pointers)
    if found is None:
        return f"{where} targets {_cuda.text(args[0])}, not global memory reached from a pointer parameter"
    param, element = found
    if call.parent is None or call.parent.type != "expression_statement":
        return f"{where}: its result (the old value) is used"
    if element is None or element not in types:
        return f"{where} on {element or 'an unknown element type'}: not one of {', '.join(sorted(types))}"
    why = proof.why_not(args[0])
    if why is not None:
        return f"{where}: the address {_cuda.text(args[0])} depends on the thread: {why}"
    return Site(call.parent, function, kind, element, proof.substituted(args[0]), args[1], param)


def _whole_parameters(body: Node, found: list[Site]) -> tuple[list[Site], list[str]]:
    """The sites whose parameter is used only as their targets, with one atomic function; why not the others."""
    kept: list[Site] = []
    reasons: list[str] = []
    for param in sorted({s.param for s in found}):
        mine = [s for s in found if s.param == param]
        functions = sorted({s.function for s in mine})
        if len(functions) > 1:
            reasons.append(f"{param} takes {' and '.join(functions)}: their order matters, so they stay")
            continue
        inside = [(s.statement.start_byte, s.statement.end_byte) for s in mine]
        other = next(
            (
                n
                for n in _cuda.walk(body)
                if n.type == "identifier"
                and _cuda.text(n) == param
                and not any(lo <= n.start_byte < hi for lo, hi in inside)
            ),
            None,
        )
        if other is None:
            other = next((n for s in mine for n in _cuda.walk(s.value) if _cuda.text(n) == param), None)
        if other is not None:
            reasons.append(f"line {_cuda.line_of(other)}: {param} is used other than as the atomics' target")
            continue
        kept.extend(mine)
    return kept, reasons
