"""Find a naive matmul loop nest on the parse tree, or say why a kernel is not one.

The form (any names, any order of commutative operands, casts anywhere):

    row = blockIdx.a * blockDim.a + threadIdx.a;     // a, b: x and y, in either role
    col = blockIdx.b * blockDim.b + threadIdx.b;     //   (or a constant equal to the launch's block)
    if (row < M && col < N) {                        // or `if (row >= M || col >= N) return;`, or none
        float s = 0;                                 // pre: declarations that read no memory
        for (int k = 0; k < K; ++k)                  // k from 0 by 1 to a uniform bound
            s += A[row * lda + k] * B[k * ldb + col]; // (or s = s + ..., s = fmaf(a, b, s), temporaries)
        C[row * ldc + col] = alpha * s + beta * C[row * ldc + col];   // post: stores at (row, col) only
    }

``analyse`` proves each part on the tree and returns a ``MatmulNest`` with the nodes the rewrite
needs, or the first reason it does not hold (with its line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._cuda import builtin_axis, strip
from perfagent.rewrite.recipes._matmul_guard import place
from perfagent.rewrite.recipes._matmul_syntax import (
    CONVERSIONS,
    ELEMENT_TYPES,
    FMA_CALLS,
    FORBIDDEN,
    LOOPS,
    MUL_CALLS,
    Bound,
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
    thread_axis,
)

__all__ = ["ELEMENT_TYPES", "MatmulNest", "analyse"]
"""What the recipes use (smem-tiling, register-tiling)."""


@dataclass
class MatmulNest:
    """What the rewrite needs of a naive matmul kernel."""

    kernel: Node
    body: Node
    """The kernel's compound statement."""
    row: str
    col: str
    row_decl: Node
    """The initialiser of ``row`` (replaced by the tile's row map)."""
    col_decl: Node
    row_axis: str
    """'x' or 'y': the thread axis the original row came from."""
    loop: Node
    counter: str
    counter_type: str
    k_bound: Node
    a: Ref
    b: Ref
    a_kind: str
    """'a' (A[row * lda + k]) or 'at' (A[k * lda + row])."""
    b_kind: str
    """'b' (B[k * ldb + col]) or 'bt' (B[col * ldb + k])."""
    a_type: str
    b_type: str
    guard: str
    """'if' (the nest sits in ``if (cond) {...}``), 'return' (``if (...) return;`` before it) or 'none'."""
    guard_stmt: Node | None
    pre: list[Node]
    """Statements between the guard and the loop (hoisted out of the guard)."""
    post: list[Node]
    """Statements after the loop (kept under the guard)."""
    row_bound: Bound | None = None
    col_bound: Bound | None = None
    params: list[tuple[str, str, bool]] = field(default_factory=list)
    """Kernel parameters in order: (name, base type, is a pointer)."""


@dataclass
class _Body:
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


def _accumulate(stmt: Node, temps: dict[str, Ref], pointers: dict[str, str]) -> _Body | None:
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
            return _Body(acc=acc, refs=loads) if len(loads) == 2 else None
    if product is None:
        return None
    refs = _product(product, temps, pointers)
    return None if refs is None else _Body(acc=acc, refs=refs)


def _loop_body(loop: Node, pointers: dict[str, str]) -> _Body | str:
    body = loop.child_by_field_name("body")
    if body is None:
        return "the loop has no body"
    stmts = statements(body) if body.type == "compound_statement" else [body]
    temps: dict[str, Ref] = {}
    found: _Body | None = None
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


def _store_map(stores: list[Node], names: set[str], scan: KernelScan) -> tuple[str, str] | str:
    """(row, col) of the stores ``C[row * ldc + col]`` (all at the same element), else why not."""
    if not stores:
        return "the kernel stores nothing through a subscript: no C[row * ldc + col] to compute"
    found: set[tuple[str, str]] = set()
    for target in stores:
        idx = subscript_index(target) if target.type == "subscript_expression" else None
        pair: tuple[str, str] | None = None
        if idx is not None and len(terms(idx)) == 2:
            for unit, strided in (terms(idx), reversed(terms(idx))):
                fs = factors(strided)
                lead = [f for f in fs if ident(f) in names]
                if ident(unit) in names and len(fs) == 2 and len(lead) == 1:
                    other = fs[0] if fs[1] == lead[0] else fs[1]
                    if scan.uniform(other) and ident(lead[0]) != ident(unit):
                        pair = (ident(lead[0]) or "", ident(unit) or "")
        if pair is None:
            return f"line {_cuda.line_of(target)}: the store {_cuda.text(target)} is not `C[row * ldc + col]` with the thread's row and column"
        found.add(pair)
    if len(found) != 1:
        return "the kernel stores at more than one (row, col) element"
    return found.pop()


def _stores(nodes: list[Node], pointers: dict[str, str]) -> list[Node]:
    out = []
    for stmt in nodes:
        for n in _cuda.walk(stmt):
            if n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is not None:
                    target = strip(target)
                    if target.type == "subscript_expression" or target.type == "pointer_expression":
                        out.append(target)
    return out


def _safe(stmt: Node, scan: KernelScan) -> bool:
    """A declaration that reads no memory and calls nothing but conversions (safe for any thread)."""
    if (
        stmt.type != "declaration"
        or _cuda.has_storage(stmt, "__shared__")
        or _cuda.has_storage(stmt, "static")
    ):
        return False
    for n in _cuda.walk(stmt):
        if n.type in ("subscript_expression", "pointer_expression", "assignment_expression"):
            return False
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is None or _cuda.text(fn) not in CONVERSIONS:
                return False
    return True


def analyse(kernel: Node, block: dict[str, int | None], constants: dict[str, int]) -> MatmulNest | str:
    """The kernel's matmul nest, or the first precondition that fails (with its line).

    Args:
        kernel: the ``__global__`` function definition.
        block: the launch's block size per axis ('x', 'y'), None where not a constant.
        constants: the file's integer constants by name.
    """
    text = _cuda.text(kernel)
    for word in FORBIDDEN:
        if word in text:
            return f"the kernel already uses {word}: not a naive loop nest"
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    scan = KernelScan(kernel, set(constants))
    found = _loop(body, scan)
    if isinstance(found, str):
        return found
    loop, (counter, ctype, k_bound), acc_body = found
    derived = _thread_map(kernel, body, block, constants, scan)
    if isinstance(derived, str):
        return derived
    names = {derived["x"][0], derived["y"][0]}
    mapped = _store_map(_stores([body], scan.pointers), names, scan)
    if isinstance(mapped, str):
        return mapped
    row, col = mapped
    operands = _operands(acc_body, loop, counter, row, col, scan)
    if isinstance(operands, str):
        return operands
    a, b, a_kind, b_kind = operands
    if acc_body.acc in (row, col, counter) or acc_body.acc in scan.pointers:
        return f"the accumulator {acc_body.acc} is not a local scalar"
    nest = place(loop, body, row, col, scan)
    if isinstance(nest, str):
        return nest
    guard, guard_stmt, pre, post, bounds = nest
    why = _stores_and_pre_checked(body, loop, pre, post, (a.pointer, b.pointer), scan)
    if why is not None:
        return why
    row_axis = "x" if derived["x"][0] == row else "y"
    col_axis = "y" if row_axis == "x" else "x"
    return MatmulNest(
        kernel=kernel,
        body=body,
        row=row,
        col=col,
        row_decl=derived[row_axis][1],
        col_decl=derived[col_axis][1],
        row_axis=row_axis,
        loop=loop,
        counter=counter,
        counter_type=ctype,
        k_bound=k_bound,
        a=a,
        b=b,
        a_kind=a_kind,
        b_kind=b_kind,
        a_type=element_type(scan.pointers[a.pointer]),
        b_type=element_type(scan.pointers[b.pointer]),
        guard=guard,
        guard_stmt=guard_stmt,
        pre=pre,
        post=post,
        row_bound=bounds.get(row) if bounds else None,
        col_bound=bounds.get(col) if bounds else None,
        params=scan.params,
    )


def _loop(body: Node, scan: KernelScan) -> tuple[Node, tuple[str, str, Node], _Body] | str:
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


def _thread_map(
    kernel: Node, body: Node, block: dict[str, int | None], constants: dict[str, int], scan: KernelScan
) -> dict[str, tuple[str, Node]] | str:
    """axis -> (variable, its initialiser): two variables, each blockIdx.a * blockDim.a + threadIdx.a on
    its own axis, never reassigned, and no other use of the thread built-ins."""
    derived: dict[str, tuple[str, Node]] = {}
    spans: list[tuple[int, int]] = []
    for n in _cuda.walk(body):
        if n.type != "init_declarator":
            continue
        name, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            continue
        axis = thread_axis(value, block, constants)
        if axis is not None:
            if axis in derived:
                return f"line {_cuda.line_of(n)}: two variables derive from the {axis} thread coordinates"
            derived[axis] = (_cuda.text(name), value)
            spans.append((value.start_byte, value.end_byte))
    if set(derived) != {"x", "y"}:
        return "the kernel does not derive its row and column as blockIdx * blockDim + threadIdx on x and y"
    for n in _cuda.walk(kernel):
        if builtin_axis(n) and not any(lo <= n.start_byte and n.end_byte <= hi for lo, hi in spans):
            return f"{_cuda.text(n)} on line {_cuda.line_of(n)} is used outside the row/column derivations"
    names = {derived["x"][0], derived["y"][0]}
    if names & scan.assigned:
        return f"the row/column index {sorted(names & scan.assigned)[0]} is reassigned"
    return derived


def _operands(
    acc_body: _Body, loop: Node, counter: str, row: str, col: str, scan: KernelScan
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


def _stores_and_pre_checked(
    body: Node, loop: Node, pre: list[Node], post: list[Node], operands: tuple[str, str], scan: KernelScan
) -> str | None:
    """Why the statements around the loop rule the tiling out (None: they do not): what precedes the loop
    must be safe for out-of-range threads, the result is stored after it, never into an operand."""
    for stmt in pre:
        if not _safe(stmt, scan):
            return (
                f"line {_cuda.line_of(stmt)}: a statement between the guard and the loop is not a declaration "
                "free of memory reads: it cannot run for the tile's out-of-range threads"
            )
    if not _stores(post, scan.pointers):
        return "no store after the loop: the result is not written to a (row, col) element"
    for target in _stores([body], scan.pointers):
        arr = target.child_by_field_name("argument")
        if arr is not None and _cuda.text(arr) in operands:
            return f"line {_cuda.line_of(target)}: the kernel stores into the operand {_cuda.text(arr)}"
    for stmt in [*pre, loop]:
        if _stores([stmt], scan.pointers):
            return f"line {_cuda.line_of(stmt)}: a store before the end of the loop"
    return None
