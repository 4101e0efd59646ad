"""The loop of a naive matmul nest (``_matmul_nest``): the one ``for`` over the shared dimension, its
counter, its accumulate statement ``s += a * b`` (or ``s = s + a * b``, ``s = fmaf(a, b, s)``,
temporaries, conversions) and how its two operand loads are indexed (A, B, or their transposes)."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import strip
from perfagent.rewrite.recipes._matmul_syntax import (
    CONVERSIONS,
    ELEMENT_TYPES,
    FMA_CALLS,
    LOOPS,
    MUL_CALLS,
    KernelScan,
    Ref,
    element_type,
    factors,
    ident,
    operator_of,
    sides,
    statements,
    subscript_index,
    terms,
)

__all__ = ["LoopBody", "find_loop", "loop_operands"]


@dataclass
class LoopBody:
    """The loop body's accumulate statement and its two operand loads."""

    acc: str
    refs: list[Ref]


def _factor_ref(node: Node, temps: dict[str, Ref], pointers: dict[str, str]) -> Ref | str | None:
    """The load a product factor reads (through conversions and temporaries), else None."""
    node = strip(node)
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        name = _cuda.text(fn) if fn is not None else ""
        if fn is not None and fn.type == "template_function":
            inner = fn.child_by_field_name("name")
            name = _cuda.text(inner) if inner is not None else name
        args = node.child_by_field_name("arguments")
        inner_args = [c for c in args.named_children if c.type != "comment"] if args is not None else []
        if name not in CONVERSIONS or len(inner_args) != 1:
            return None
        node = strip(inner_args[0])
    if node.type == "identifier" and _cuda.text(node) in temps:
        return temps[_cuda.text(node)]
    if node.type == "subscript_expression":
        arr = node.child_by_field_name("argument")
        idx = subscript_index(node)
        if arr is None or idx is None or _cuda.text(arr) not in pointers:
            return None
        return Ref(node=node, pointer=_cuda.text(arr), index=idx)
    return None


def _product(node: Node, temps: dict[str, Ref], pointers: dict[str, str]) -> list[Ref] | None:
    """The two loads of ``a * b`` / ``__hmul(a, b)`` (each through conversions), else None."""
    node = strip(node)
    pair: list[Node] = []
    if node.type == "binary_expression" and operator_of(node) == "*":
        pair = list(sides(node))
    elif node.type == "call_expression":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is not None and _cuda.text(fn) in MUL_CALLS and args is not None:
            pair = [c for c in args.named_children if c.type != "comment"]
    if len(pair) != 2:
        return None
    refs = [_factor_ref(p, temps, pointers) for p in pair]
    if not all(isinstance(r, Ref) for r in refs):
        return None
    return [r for r in refs if isinstance(r, Ref)]


def _accumulate(stmt: Node, temps: dict[str, Ref], pointers: dict[str, str]) -> LoopBody | None:
    """``s += a*b``, ``s = s + a*b``, ``s = a*b + s``, ``s = fmaf(a, b, s)``, ``s += __hmul(a, b)``."""
    if stmt.type != "expression_statement" or not stmt.named_children:
        return None
    expr = stmt.named_children[0]
    if expr.type != "assignment_expression":
        return None
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier":
        return None
    acc = _cuda.text(left)
    op = operator_of(expr)
    right = strip(right)
    product: Node | None = None
    if op == "+=":
        product = right
    elif op == "=" and right.type == "binary_expression" and operator_of(right) == "+":
        a, b = sides(right)
        if ident(a) == acc:
            product = b
        elif ident(b) == acc:
            product = a
    elif op == "=" and right.type == "call_expression":
        fn = right.child_by_field_name("function")
        args = right.child_by_field_name("arguments")
        parts = [c for c in args.named_children if c.type != "comment"] if args is not None else []
        if fn is not None and _cuda.text(fn) in FMA_CALLS and len(parts) == 3 and ident(parts[2]) == acc:
            loads = [r for p in parts[:2] if isinstance(r := _factor_ref(p, temps, pointers), Ref)]
            return LoopBody(acc=acc, refs=loads) if len(loads) == 2 else None
    if product is None:
        return None
    refs = _product(product, temps, pointers)
    return None if refs is None else LoopBody(acc=acc, refs=refs)


def _loop_body(loop: Node, pointers: dict[str, str]) -> LoopBody | str:
    body = loop.child_by_field_name("body")
    if body is None:
        return "the loop has no body"
    stmts = statements(body) if body.type == "compound_statement" else [body]
    temps: dict[str, Ref] = {}
    found: LoopBody | None = None
    for stmt in stmts:
        if stmt.type == "declaration" and found is None:
            decls = stmt.children_by_field_name("declarator")
            if len(decls) == 1 and decls[0].type == "init_declarator":
                name = decls[0].child_by_field_name("declarator")
                value = decls[0].child_by_field_name("value")
                ref = _factor_ref(value, {}, pointers) if value is not None else None
                if name is not None and name.type == "identifier" and isinstance(ref, Ref):
                    temps[_cuda.text(name)] = ref
                    continue
            return f"line {_cuda.line_of(stmt)}: a loop-body declaration that is not one operand load"
        one = _accumulate(stmt, temps, pointers) if found is None else None
        if one is None:
            return (
                f"line {_cuda.line_of(stmt)}: the loop body is not one accumulation `s += a * b` "
                "(or s = s + a * b, s = fmaf(a, b, s)) whose a and b load pointer parameters P[index]"
            )
        found = one
    if found is None:
        return "the loop body accumulates nothing"
    used = [t for t in temps if sum(1 for r in found.refs if r is temps[t]) != 1]
    if used:
        return f"the loop-body temporary {used[0]} is not used exactly once in the accumulation"
    return found


def _counter(loop: Node, scan: KernelScan) -> tuple[str, str, Node] | str:
    """(counter, its type, bound) of ``for (T k = 0; k < K; ++k)``, else why not."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    line = _cuda.line_of(loop)
    if init is None or init.type != "declaration":
        return f"line {line}: the loop does not declare its counter"
    decls = init.children_by_field_name("declarator")
    if len(decls) != 1 or decls[0].type != "init_declarator":
        return f"line {line}: the loop does not declare exactly one counter"
    name_node, value = decls[0].child_by_field_name("declarator"), decls[0].child_by_field_name("value")
    if name_node is None or value is None or _cuda.text(strip(value)) not in ("0", "0u", "0U", "0l", "0L"):
        return f"line {line}: the loop counter does not start at 0"
    counter = _cuda.text(name_node)
    ctype = _cuda.element_type(init)
    if cond is None or cond.type != "binary_expression" or operator_of(cond) != "<":
        return f"line {line}: the loop condition is not `counter < bound`"
    left, bound = sides(cond)
    if ident(left) != counter:
        return f"line {line}: the loop condition is not `{counter} < bound`"
    if not scan.uniform(bound):
        return f"line {line}: the loop bound {_cuda.text(bound)} is not the same in every thread (a parameter or a constant)"
    ok_update = False
    if update is not None and update.type == "update_expression":
        arg = update.child_by_field_name("argument")
        ok_update = arg is not None and _cuda.text(arg) == counter and "++" in _cuda.text(update)
    elif update is not None and update.type == "assignment_expression":
        lhs, rhs = update.child_by_field_name("left"), update.child_by_field_name("right")
        ok_update = (
            lhs is not None
            and rhs is not None
            and _cuda.text(lhs) == counter
            and operator_of(update) == "+="
            and _cuda.text(strip(rhs)) == "1"
        )
    if not ok_update:
        return f"line {line}: the loop does not step its counter by one"
    return counter, ctype, bound


def _classify(ref: Ref, counter: str, row: str, col: str, scan: KernelScan) -> str | None:
    """How a load is indexed (s uniform): 'a' ``P[row * s + k]``, 'b' ``P[k * s + col]``, and the
    transposed layouts 'at' ``P[k * s + row]`` (A stored K x M) and 'bt' ``P[col * s + k]`` (B stored N x K)."""
    t = terms(ref.index)
    if len(t) != 2:
        return None
    unit = [x for x in t if ident(x) is not None]
    if not unit:
        return None
    for u_node in unit:
        strided = t[0] if t[1] == u_node else t[1]
        fs = factors(strided)
        if len(fs) != 2:
            continue
        u = ident(u_node)
        for lead, stride in ((fs[0], fs[1]), (fs[1], fs[0])):
            if not scan.uniform(stride):
                continue
            kind = {
                (row, counter): "a",
                (counter, col): "b",
                (counter, row): "at",
                (col, counter): "bt",
            }.get((ident(lead) or "", u or ""))
            if kind is not None:
                return kind
    return None


def find_loop(body: Node, scan: KernelScan) -> tuple[Node, tuple[str, str, Node], LoopBody] | str:
    """The one ``for`` over the shared dimension: the loop, (counter, its type, its bound) and the
    accumulate statement with its two operand loads."""
    loops = [n for n in _cuda.walk(body) if n.type in LOOPS]
    if len(loops) != 1 or loops[0].type != "for_statement":
        return f"the kernel has {len(loops)} loops: a naive matmul has one `for` over the shared dimension"
    loop = loops[0]
    got = _counter(loop, scan)
    if isinstance(got, str):
        return got
    acc_body = _loop_body(loop, scan.pointers)
    if isinstance(acc_body, str):
        return acc_body
    if len(acc_body.refs) != 2 or acc_body.refs[0].pointer == acc_body.refs[1].pointer:
        return f"line {_cuda.line_of(loop)}: the product does not read two different pointer parameters"
    return loop, got, acc_body


def loop_operands(
    acc_body: LoopBody, loop: Node, counter: str, row: str, col: str, scan: KernelScan
) -> tuple[Ref, Ref, str, str] | str:
    """(A, B, A's form, B's form): A[row * lda + k] or A[k * lda + row], B[k * ldb + col] or
    B[col * ldb + k], pointer parameters of a tileable element type, the counter in nothing else."""
    first, second = acc_body.refs
    kinds = [_classify(r, counter, row, col, scan) for r in (first, second)]
    pairs = {("a", "b"), ("a", "bt"), ("at", "b"), ("at", "bt")}
    if (kinds[0], kinds[1]) in pairs:
        a, b, a_kind, b_kind = first, second, kinds[0], kinds[1]
    elif (kinds[1], kinds[0]) in pairs:
        a, b, a_kind, b_kind = second, first, kinds[1], kinds[0]
    else:
        return (
            f"line {_cuda.line_of(loop)}: the operands are not A[{row} * lda + {counter}] (or A[{counter} * lda + {row}]) "
            f"and B[{counter} * ldb + {col}] (or B[{col} * ldb + {counter}]) for the stored element C[{row} * ldc + {col}]"
        )
    assert a_kind is not None and b_kind is not None
    for ref in (a, b):
        if ref.pointer not in scan.pointers:
            return f"{ref.pointer} is not a pointer parameter"
        typ = element_type(scan.pointers[ref.pointer])
        if typ not in ELEMENT_TYPES:
            return f"{ref.pointer} holds {typ or 'an unknown type'}: tiles are built for {', '.join(sorted(ELEMENT_TYPES))}"
    if not _counter_only_in_indices(loop, counter, (a, b)):
        return f"line {_cuda.line_of(loop)}: the counter {counter} is used outside the two operand indices"
    return a, b, a_kind, b_kind


def _counter_only_in_indices(loop: Node, counter: str, refs: tuple[Ref, Ref]) -> bool:
    """The loop body uses the counter exactly twice, once in each operand's index."""
    uses = [n for n in _cuda.walk(loop) if n.type == "identifier" and _cuda.text(n) == counter]

    def in_index(n: Node) -> bool:
        return any(r.index.start_byte <= n.start_byte < r.index.end_byte for r in refs)

    body = loop.child_by_field_name("body")
    assert body is not None
    elsewhere = [n for n in uses if not in_index(n) and body.start_byte <= n.start_byte < body.end_byte]
    return not elsewhere and sum(1 for n in uses if in_index(n)) == 2
