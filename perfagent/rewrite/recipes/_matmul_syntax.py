"""The small parse-tree vocabulary of the matmul-nest analysis (``_matmul_nest``): operand loads, bounds,
sums and products, kernel parameters, what a kernel assigns, and the thread map's axes."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import builtin_axis, strip

ELEMENT_TYPES = {
    "float": "0.0f",
    "double": "0.0",
    "__half": "__float2half(0.0f)",
    "half": "__float2half(0.0f)",
    "__nv_bfloat16": "__float2bfloat16(0.0f)",
    "nv_bfloat16": "__float2bfloat16(0.0f)",
}
"""Element types a tile may hold, with the zero an out-of-range load writes."""
CONVERSIONS = frozenset({"__half2float", "__bfloat162float", "float", "double", "static_cast"})
"""Calls a factor may pass through on its way to the product (each maps 0 to 0)."""
FMA_CALLS = frozenset({"fmaf", "fma", "__fmaf_rn", "__fma_rn", "__hfma"})
MUL_CALLS = frozenset({"__hmul", "__fmul_rn", "__dmul_rn"})
FORBIDDEN = ("__shared__", "__syncthreads", "atomic", "__shfl", "__syncwarp", "asm")
LOOPS = ("for_statement", "while_statement", "do_statement")


@dataclass
class Ref:
    """One operand load ``P[index]`` in the loop body."""

    node: Node
    """The subscript expression."""
    pointer: str
    index: Node


@dataclass
class Bound:
    """``var < bound`` as the guard writes it (``text`` is a condition true when in range)."""

    var: str
    text: str
    """The in-range condition in the source's own operands (``x < (unsigned int)M``)."""
    bound: Node | None
    """The bound expression (None when it comes from the launch, not the source)."""


def subscript_index(node: Node) -> Node | None:
    """The index expression of ``p[i]`` (one index only)."""
    idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
    if idx is None:
        idx = next((c for c in node.named_children if c.type == "subscript_argument_list"), None)
    if idx is not None and idx.type == "subscript_argument_list":
        inner = [c for c in idx.named_children if c.type != "comment"]
        return inner[0] if len(inner) == 1 else None
    return idx


def operator_of(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return _cuda.text(op) if op is not None else ""


def sides(node: Node) -> tuple[Node, Node]:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert left is not None and right is not None
    return left, right


def terms(node: Node) -> list[Node]:
    """The additive terms of an index expression (casts and parentheses stripped)."""
    node = strip(node)
    if node.type == "binary_expression" and operator_of(node) == "+":
        left, right = sides(node)
        return terms(left) + terms(right)
    return [node]


def factors(node: Node) -> list[Node]:
    """The multiplicative factors of a term (casts and parentheses stripped)."""
    node = strip(node)
    if node.type == "binary_expression" and operator_of(node) == "*":
        left, right = sides(node)
        return factors(left) + factors(right)
    return [node]


def ident(node: Node) -> str | None:
    node = strip(node)
    return _cuda.text(node) if node.type == "identifier" else None


def statements(block: Node) -> list[Node]:
    """The statements of a compound statement, comments and ``#pragma`` lines left out."""
    return [c for c in block.named_children if c.type not in ("comment", "preproc_call")]


def kernel_params(kernel: Node) -> list[tuple[str, str, bool]]:
    decl = _cuda.function_declarator(kernel)
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    out: list[tuple[str, str, bool]] = []
    for p in plist.named_children if plist is not None else []:
        if p.type != "parameter_declaration":
            continue
        typ = p.child_by_field_name("type")
        base = " ".join(_cuda.text(typ).split()) if typ is not None else ""
        node = p.child_by_field_name("declarator")
        pointer = False
        while node is not None and node.type in ("pointer_declarator", "reference_declarator"):
            pointer = pointer or node.type == "pointer_declarator"
            node = node.child_by_field_name("declarator") or next(
                (c for c in node.named_children if c.type == "identifier"), None
            )
        if node is not None and node.type == "identifier":
            out.append((_cuda.text(node), base, pointer))
    return out


def assigned_names(kernel: Node) -> set[str]:
    """Names assigned, incremented or declared more than once anywhere in the kernel."""
    names: set[str] = set()
    declared: list[str] = []
    for n in _cuda.walk(kernel):
        if n.type == "assignment_expression":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                names.add(_cuda.text(left))
        elif n.type == "update_expression":
            arg = n.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier":
                names.add(_cuda.text(arg))
        elif n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                d = d.child_by_field_name("declarator") or d if d.type == "init_declarator" else d
                if d.type == "identifier":
                    declared.append(_cuda.text(d))
    names |= {d for d in declared if declared.count(d) > 1}
    return names


class KernelScan:
    """Per-kernel facts the checks share."""

    def __init__(self, kernel: Node, constants: set[str]) -> None:
        self.kernel = kernel
        self.params = kernel_params(kernel)
        self.scalars = {n for n, _, ptr in self.params if not ptr}
        self.pointers = {n: t for n, t, ptr in self.params if ptr}
        self.assigned = assigned_names(kernel)
        self.constants = constants

    def uniform(self, node: Node) -> bool:
        """Whether ``node`` has the same value in every thread: literals, unassigned scalar parameters, constants."""
        for n in _cuda.walk(node):
            if n.type in ("call_expression", "subscript_expression", "pointer_expression"):
                return False
            if n.type == "field_expression":
                op = n.child_by_field_name("operator")
                if op is None or _cuda.text(op) != "." or builtin_axis(n) is not None:
                    return False  # p->f reads memory; threadIdx.x differs per thread
            if n.type == "identifier":
                name = _cuda.text(n)
                if name in self.assigned or (name not in self.scalars and name not in self.constants):
                    return False
        return True


def thread_axis(value: Node, launch_block: dict[str, int | None], constants: dict[str, int]) -> str | None:
    """The axis of ``blockIdx.a * E + threadIdx.a`` (E: blockDim.a, or a constant equal to the launch's block)."""
    t = terms(value)
    if len(t) != 2:
        return None
    thread = [x for x in t if (ax := builtin_axis(strip(x))) and ax[0] == "threadIdx"]
    if len(thread) != 1:
        return None
    axis_t = builtin_axis(strip(thread[0]))
    assert axis_t is not None
    axis = axis_t[1]
    other = t[0] if t[1] == thread[0] else t[1]
    fs = factors(other)
    if len(fs) != 2:
        return None
    kinds = {builtin_axis(f) for f in fs}
    if ("blockIdx", axis) not in kinds:
        return None
    width = next(f for f in fs if builtin_axis(f) != ("blockIdx", axis))
    if builtin_axis(width) == ("blockDim", axis):
        return axis
    size = _cuda.evaluate(_cuda.text(width), constants)
    expected = launch_block.get(axis)
    return axis if size is not None and expected is not None and size == expected else None


def element_type(type_text: str) -> str:
    words = [w for w in type_text.replace("const", " ").split() if w not in ("__restrict__", "volatile")]
    return " ".join(words)


def is_return(node: Node | None) -> bool:
    if node is None:
        return False
    if node.type == "return_statement":
        return True
    if node.type == "compound_statement":
        stmts = statements(node)
        return len(stmts) == 1 and stmts[0].type == "return_statement"
    return False
