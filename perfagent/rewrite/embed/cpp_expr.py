"""C++ launch expressions of a wrapper function <-> launch-spec expressions.

A KernelBench wrapper computes its launch in C++ (``int blocks = (n + threads - 1) / threads;
kernel<<<blocks, threads>>>``). Recipes reason in the launch-spec expression language
(``perfagent.workloads.expr``: ``+ - * // %``, ``ceil_div``, ``min``, ``max``, names), so
``Translator`` turns the launch's C++ into that language: locals assigned once are inlined (their
initialisers translated in turn), file-scope integer constants (``#define``, ``constexpr``) stay as
names with their values, and anything only the running wrapper knows (``x.numel()``, ``x.size(0)``, a
parameter ``int n``, a float expression) becomes a *leaf*: a name standing for a C++ expression that
is valid at the launch site. Integer ``/`` becomes ``//``; an expression holding a float is a leaf as a
whole, so its C++ meaning is never changed. ``to_cpp`` is the way back: a recipe's new launch
expression becomes C++ over the same leaves, constants and device attributes.
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.workloads.launch_spec import DEFAULT_DEVICE_ATTRS, Expr
from perfagent.workloads.python_ast import parse_expression

NOMINAL_NUMEL = 1 << 24
"""Value given to an element count only the running wrapper knows (``x.numel()``): recipes compare
launch options with it; the C++ they write back computes the real value."""
NOMINAL_DIM = 4096
"""Value given to one tensor dimension (``x.size(0)``)."""
NOMINAL_SCALAR = 1 << 20
"""Value given to any other run-time integer (a wrapper parameter ``int n``)."""
DEVICE_ATTRIBUTES = {
    "sm_count": "cudaDevAttrMultiProcessorCount",
    "max_threads_per_sm": "cudaDevAttrMaxThreadsPerMultiProcessor",
    "max_threads_per_block": "cudaDevAttrMaxThreadsPerBlock",
    "warp_size": "cudaDevAttrWarpSize",
    "l2_bytes": "cudaDevAttrL2CacheSize",
    "max_shared_per_block": "cudaDevAttrMaxSharedMemoryPerBlockOptin",
}
"""The launch-spec device names and the CUDA runtime attribute each is read from in the wrapper."""
_RESERVED = {*DEFAULT_DEVICE_ATTRS, "min", "max", "ceil_div", "cdiv", "int", "abs"}
_ARITH = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%"}
_FLOAT_WORDS = re.compile(
    r"\b(float|double|half|__half|ceil|floor|sqrt|pow|exp|log)\b|\d\.\d*|\d[eE][+-]?\d|\.\d"
)
_SIDE_EFFECTS = {
    "assignment_expression",
    "update_expression",
    "comma_expression",
    "new_expression",
    "lambda_expression",
}


class EmbedError(ValueError):
    """The launch cannot be read or written in the wrapper's terms (the message says where and why)."""


class _Opaque(Exception):
    """This sub-expression is not arithmetic the expression language has: make it a leaf."""


class _NotInteger(Exception):
    """A float value: the whole launch expression must stay C++ (one leaf), never become integer arithmetic."""


@dataclass(frozen=True)
class Leaf:
    """A run-time value of the wrapper, named for the launch-spec expressions."""

    name: str
    cpp: str
    """C++ expression computing it, valid at the launch site."""
    nominal: int
    """Stand-in value for the recipes' comparisons (NOMINAL_*)."""


@dataclass(frozen=True)
class Local:
    """A local of the wrapper declared before the launch: its type and initialiser."""

    type: str
    value: Node | None
    """A scalar initialiser (None for a dim3 declared with constructor arguments)."""
    args: tuple[Node, ...] = ()
    """dim3 constructor arguments (``dim3 grid(a, b)``, ``dim3(a, b)``, ``{a, b}``)."""
    inlinable: bool = True
    """Declared once, never assigned afterwards, in a block enclosing the launch."""


@dataclass
class Translator:
    """C++ -> launch-spec expressions in one wrapper, collecting the leaves and constants used."""

    locals: dict[str, Local]
    constants: dict[str, int]
    """File-scope integer constants (macros, constexpr) by name."""
    param_types: dict[str, str] = field(default_factory=dict)
    """The wrapper's parameters and their declared types."""
    leaves: dict[str, Leaf] = field(default_factory=dict)
    defines: dict[str, int] = field(default_factory=dict)
    """The constants the translated expressions use."""
    _depth: int = 0

    def expr(self, node: Node) -> str:
        """``node`` as a launch-spec expression (leaves for what only C++ can compute).

        Raises:
            EmbedError: the expression has side effects (assignment, increment, comma, new, lambda).
        """
        if any(n.type in _SIDE_EFFECTS for n in _cuda.walk(node)):
            raise EmbedError(f"the launch expression {_cuda.text(node)!r} has side effects")
        try:
            return self._sub(node)
        except _NotInteger:
            return self.leaf(_cuda.text(node))  # C++ computes it whole: its float arithmetic stays C++'s

    def _sub(self, node: Node) -> str:
        """A sub-expression: a leaf when the language lacks it, ``_NotInteger`` up to the top when it is not integer."""
        try:
            return self._translate(node)
        except _Opaque:
            return self.leaf(_cuda.text(node))

    def dims(self, node: Node) -> list[str]:
        """A grid or block argument as 1 to 3 expressions (trailing 1s dropped)."""
        args = self._dim3_args(node)
        out = [self.expr(a) for a in args] if args is not None else [self.expr(node)]
        while len(out) > 1 and out[-1] == "1":
            out.pop()
        return out

    def leaf(self, cpp: str) -> str:
        """The leaf name for the C++ expression ``cpp`` (the same text gives the same leaf)."""
        cpp = " ".join(cpp.split())
        for existing in self.leaves.values():
            if existing.cpp == cpp:
                return existing.name
        base = re.sub(r"\W+", "_", cpp).strip("_") or "value"
        if base[0].isdigit():
            base = "v_" + base
        name, k = base, 2
        while name in self.leaves or name in _RESERVED or name in self.constants or keyword.iskeyword(name):
            name, k = f"{base}_{k}", k + 1
        nominal = NOMINAL_NUMEL if "numel" in cpp else NOMINAL_DIM if "size" in cpp else NOMINAL_SCALAR
        self.leaves[name] = Leaf(name, cpp, nominal)
        return name

    # ------------------------------------------------------------------ translation

    def _translate(self, node: Node) -> str:
        kind = node.type
        if kind == "number_literal":
            value = _cuda.evaluate(_cuda.text(node), {})
            if value is None:
                raise _NotInteger if _FLOAT_WORDS.search(_cuda.text(node)) else _Opaque
            return str(value)
        if kind == "parenthesized_expression":
            inner = self._sub(node.named_children[0])
            return inner if _atom(inner) else f"({inner})"
        if kind == "identifier":
            return self._name(_cuda.text(node))
        if kind == "binary_expression":
            return self._binary(node)
        if kind == "unary_expression":
            op = _cuda.text(node.child_by_field_name("operator") or node)
            arg = node.child_by_field_name("argument")
            if arg is None or op not in ("-", "+"):
                raise _Opaque
            inner = self._sub(arg)
            return inner if op == "+" else f"-{inner if _atom(inner) else f'({inner})'}"
        if kind == "cast_expression":
            typ, operand = node.child_by_field_name("type"), node.child_by_field_name("value")
            if typ is None or operand is None or not _integral(_cuda.text(typ)):
                raise _Opaque
            return self._sub(operand)
        if kind == "sizeof_expression":
            typ = node.child_by_field_name("type")
            size = _cuda.ELEMENT_BYTES.get(" ".join(_cuda.text(typ).split())) if typ is not None else None
            if size is None:
                raise _Opaque
            return str(size)
        if kind == "call_expression":
            return self._call(node)
        if kind == "field_expression":
            return self._component(node)
        raise _Opaque

    def _binary(self, node: Node) -> str:
        op = _cuda.text(node.child_by_field_name("operator") or node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if _FLOAT_WORDS.search(_cuda.text(node)):
            raise _NotInteger  # a float anywhere: C++ semantics the expression language would change
        if op not in _ARITH or left is None or right is None:
            raise _Opaque
        # the tree keeps C++'s own parentheses, and + - * / % bind alike in both languages
        return f"{self._sub(left)} {_ARITH[op]} {self._sub(right)}"

    def _call(self, node: Node) -> str:
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or args is None:
            raise _Opaque
        name = _cuda.text(fn).replace(" ", "")
        values = [a for a in args.named_children if a.type != "comment"]
        if name in ("min", "max", "std::min", "std::max", "::min", "::max") and len(values) == 2:
            return f"{name.split(':')[-1]}({self._sub(values[0])}, {self._sub(values[1])})"
        cast = re.fullmatch(r"static_cast<(.+)>", name)
        if cast and _integral(cast.group(1)) and len(values) == 1:
            return self._sub(values[0])
        raise _Opaque

    def _component(self, node: Node) -> str:
        """``grid.x`` of a dim3 local declared with constructor arguments."""
        arg, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if arg is None or fld is None or arg.type != "identifier":
            raise _Opaque
        local = self.locals.get(_cuda.text(arg))
        index = {"x": 0, "y": 1, "z": 2}.get(_cuda.text(fld))
        if local is None or index is None or not local.inlinable or local.value is not None:
            raise _Opaque
        return self._sub(local.args[index]) if index < len(local.args) else "1"

    def _name(self, name: str) -> str:
        local = self.locals.get(name)
        declared = local.type if local is not None else self.param_types.get(name)
        if declared is not None and not _integral(declared):
            raise _NotInteger
        if local is not None and local.inlinable and local.value is not None:
            self._depth += 1
            try:
                if self._depth > 16:
                    raise _Opaque
                inner = self._sub(local.value)
            finally:
                self._depth -= 1
            return inner if _atom(inner) else f"({inner})"
        if local is None and name in self.constants:
            self.defines[name] = self.constants[name]
            return name
        return self.leaf(name)

    def _dim3_args(self, node: Node) -> list[Node] | None:
        if node.type == "identifier":
            local = self.locals.get(_cuda.text(node))
            if local is not None and local.value is None:
                if not local.inlinable:
                    raise EmbedError(f"the dim3 {_cuda.text(node)} is changed after its declaration")
                return list(local.args)
            return None
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and args is not None and _cuda.text(fn) == "dim3":
                return [a for a in args.named_children if a.type != "comment"]
        return None


def _atom(text: str) -> bool:
    """A name or a number: safe to splice into a larger expression without parentheses."""
    return re.fullmatch(r"\w+", text) is not None


def _integral(type_text: str) -> bool:
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", type_text))
    ints = {"int", "long", "short", "unsigned", "signed", "size_t", "int32_t", "int64_t", "uint32_t"}
    ints |= {"uint64_t", "auto", "const", "constexpr", "std", "ssize_t", "ptrdiff_t"}
    return bool(words) and words <= ints


# ---------------------------------------------------------------------------------------------- the way back


@dataclass
class CppWriter:
    """Launch-spec expressions -> C++ over the wrapper's leaves, constants and device attributes."""

    leaves: dict[str, Leaf]
    defines: dict[str, int]
    local_names: dict[str, str] = field(default_factory=dict)
    """Leaf or device-attribute name -> the C++ local that holds it (filled as they are used)."""
    taken: set[str] = field(default_factory=set)
    """Identifiers already used in the wrapper (new locals avoid them)."""

    def write(self, expr: Expr) -> str:
        """C++ for ``expr``.

        Raises:
            EmbedError: a true division, a float, a power of non-constants or an unknown name.
        """
        if isinstance(expr, bool) or (isinstance(expr, float) and not expr.is_integer()):
            raise EmbedError(f"{expr!r} is not an integer launch value")
        if isinstance(expr, int | float):
            return str(int(expr))
        try:
            tree = parse_expression(expr.strip())
        except SyntaxError as exc:
            raise EmbedError(f"cannot read the launch expression {expr!r}") from exc
        return self._node(tree.body, expr)

    def _node(self, node: ast.expr, whole: str) -> str:
        return self._prec(node, whole)[0]

    def _prec(self, node: ast.expr, whole: str) -> tuple[str, int]:
        """(C++ text, precedence: 3 atom, 2 multiplicative, 1 additive) of ``node``."""
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            return str(node.value), 3
        if isinstance(node, ast.Name):
            return self._name(node.id, whole), 3
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self._node(node.operand, whole)
            return (f"(-{inner})", 3) if isinstance(node.op, ast.USub) else (inner, 3)
        if isinstance(node, ast.BinOp):
            return self._binop(node, whole)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self._call(node, whole), 3
        raise EmbedError(f"{whole!r} uses {ast.unparse(node)!r}, which has no C++ form here")

    def _binop(self, node: ast.BinOp, whole: str) -> tuple[str, int]:
        ops = {
            ast.Add: ("+", 1),
            ast.Sub: ("-", 1),
            ast.Mult: ("*", 2),
            ast.FloorDiv: ("/", 2),
            ast.Mod: ("%", 2),
        }
        found = ops.get(type(node.op))
        if found is None:
            raise EmbedError(f"{whole!r}: only + - * // % have an integer meaning in C++")
        op, prec = found
        left, lp = self._prec(node.left, whole)
        right, rp = self._prec(node.right, whole)
        if lp < prec:
            left = f"({left})"
        if rp < prec or (rp == prec and op in ("-", "/", "%", "*")):
            right = f"({right})"  # a - (b + c), a / (b * c): C++ groups left to right, like Python
        return f"{left} {op} {right}", prec

    def _call(self, node: ast.Call, whole: str) -> str:
        args = [self._node(a, whole) for a in node.args]
        fn = node.func.id if isinstance(node.func, ast.Name) else ""
        wrapped = [a if re.fullmatch(r"\w+", a) else f"({a})" for a in args]
        if fn in ("ceil_div", "cdiv") and len(args) == 2:
            return f"(({wrapped[0]} + {wrapped[1]} - 1) / {wrapped[1]})"
        if fn in ("min", "max") and len(args) >= 2:
            out = wrapped[0]
            for other in wrapped[1:]:
                out = f"({out} {'<' if fn == 'min' else '>'} {other} ? {out} : {other})"
            return out
        if fn == "int" and len(args) == 1:
            return f"((long long){wrapped[0]})"
        if fn == "abs" and len(args) == 1:
            return f"({wrapped[0]} < 0 ? -{wrapped[0]} : {wrapped[0]})"
        raise EmbedError(f"{whole!r} uses {ast.unparse(node)!r}, which has no C++ form here")

    def _name(self, name: str, whole: str) -> str:
        if name in self.defines:
            return name
        if name not in self.leaves and name not in DEVICE_ATTRIBUTES:
            raise EmbedError(f"{whole!r} names {name!r}, which the wrapper does not compute")
        if name not in self.local_names:
            base = f"pa_{name}"
            local, k = base, 2
            while local in self.taken:
                local, k = f"{base}_{k}", k + 1
            self.taken.add(local)
            self.local_names[name] = local
        return self.local_names[name]

    def declarations(self, indent: str) -> str:
        """The C++ declarations of the locals ``write`` used (device attributes read at run time)."""
        lines: list[str] = []
        device: str | None = None
        for name, local in self.local_names.items():
            if name in self.leaves:
                lines.append(f"const long long {local} = (long long)({self.leaves[name].cpp});")
                continue
            if device is None:
                device = "pa_device"
                while device in self.taken:
                    device += "_"
                self.taken.add(device)
                lines.append(f"int {device} = 0; cudaGetDevice(&{device});")
            lines.append(
                f"int {local} = 0; cudaDeviceGetAttribute(&{local}, {DEVICE_ATTRIBUTES[name]}, {device});"
            )
        return "".join(f"{indent}{line}\n" for line in lines)
