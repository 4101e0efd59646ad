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

BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
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
_FMA = frozenset({"fmaf", "fma", "__fmaf_rn", "__fma_rn", "__hfma"})
_MUL = frozenset({"__hmul", "__fmul_rn", "__dmul_rn"})
_FORBIDDEN = ("__shared__", "__syncthreads", "atomic", "__shfl", "__syncwarp", "asm")
_LOOPS = ("for_statement", "while_statement", "do_statement")


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


def strip(node: Node) -> Node:
    """``node`` without enclosing parentheses and casts."""
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = [c for c in node.named_children if c.type not in ("type_descriptor", "comment")]
        if not inner:
            break
        node = inner[-1]
    return node


def builtin_axis(node: Node) -> tuple[str, str] | None:
    """('threadIdx', 'x') for ``threadIdx.x``; None for anything else."""
    if node.type != "field_expression":
        return None
    obj, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if obj is None or fld is None or _cuda.text(obj) not in BUILTINS:
        return None
    return _cuda.text(obj), _cuda.text(fld)


def subscript_index(node: Node) -> Node | None:
    """The index expression of ``p[i]`` (one index only)."""
    idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
    if idx is None:
        idx = next((c for c in node.named_children if c.type == "subscript_argument_list"), None)
    if idx is not None and idx.type == "subscript_argument_list":
        inner = [c for c in idx.named_children if c.type != "comment"]
        return inner[0] if len(inner) == 1 else None
    return idx


def _op(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return _cuda.text(op) if op is not None else ""


def _sides(node: Node) -> tuple[Node, Node]:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    assert left is not None and right is not None
    return left, right


def terms(node: Node) -> list[Node]:
    """The additive terms of an index expression (casts and parentheses stripped)."""
    node = strip(node)
    if node.type == "binary_expression" and _op(node) == "+":
        left, right = _sides(node)
        return terms(left) + terms(right)
    return [node]


def factors(node: Node) -> list[Node]:
    """The multiplicative factors of a term (casts and parentheses stripped)."""
    node = strip(node)
    if node.type == "binary_expression" and _op(node) == "*":
        left, right = _sides(node)
        return factors(left) + factors(right)
    return [node]


def _ident(node: Node) -> str | None:
    node = strip(node)
    return _cuda.text(node) if node.type == "identifier" else None


def _statements(block: Node) -> list[Node]:
    """The statements of a compound statement, comments and ``#pragma`` lines left out."""
    return [c for c in block.named_children if c.type not in ("comment", "preproc_call")]


def _params(kernel: Node) -> list[tuple[str, str, bool]]:
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


def _assigned(kernel: Node) -> set[str]:
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


class _Scan:
    """Per-kernel facts the checks share."""

    def __init__(self, kernel: Node, constants: set[str]) -> None:
        self.kernel = kernel
        self.params = _params(kernel)
        self.scalars = {n for n, _, ptr in self.params if not ptr}
        self.pointers = {n: t for n, t, ptr in self.params if ptr}
        self.assigned = _assigned(kernel)
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


def _derivation(value: Node, launch_block: dict[str, int | None], constants: dict[str, int]) -> str | None:
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
    if node.type == "binary_expression" and _op(node) == "*":
        pair = list(_sides(node))
    elif node.type == "call_expression":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is not None and _cuda.text(fn) in _MUL and args is not None:
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
    op = _op(expr)
    right = strip(right)
    product: Node | None = None
    if op == "+=":
        product = right
    elif op == "=" and right.type == "binary_expression" and _op(right) == "+":
        a, b = _sides(right)
        if _ident(a) == acc:
            product = b
        elif _ident(b) == acc:
            product = a
    elif op == "=" and right.type == "call_expression":
        fn = right.child_by_field_name("function")
        args = right.child_by_field_name("arguments")
        parts = [c for c in args.named_children if c.type != "comment"] if args is not None else []
        if fn is not None and _cuda.text(fn) in _FMA and len(parts) == 3 and _ident(parts[2]) == acc:
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
    stmts = _statements(body) if body.type == "compound_statement" else [body]
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


def _counter(loop: Node, scan: _Scan) -> tuple[str, str, Node] | str:
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
    if cond is None or cond.type != "binary_expression" or _op(cond) != "<":
        return f"line {line}: the loop condition is not `counter < bound`"
    left, bound = _sides(cond)
    if _ident(left) != counter:
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
            and _op(update) == "+="
            and _cuda.text(strip(rhs)) == "1"
        )
    if not ok_update:
        return f"line {line}: the loop does not step its counter by one"
    return counter, ctype, bound


def _classify(ref: Ref, counter: str, row: str, col: str, scan: _Scan) -> str | None:
    """How a load is indexed (s uniform): 'a' ``P[row * s + k]``, 'b' ``P[k * s + col]``, and the
    transposed layouts 'at' ``P[k * s + row]`` (A stored K x M) and 'bt' ``P[col * s + k]`` (B stored N x K)."""
    t = terms(ref.index)
    if len(t) != 2:
        return None
    unit = [x for x in t if _ident(x) is not None]
    if not unit:
        return None
    for u_node in unit:
        strided = t[0] if t[1] == u_node else t[1]
        fs = factors(strided)
        if len(fs) != 2:
            continue
        u = _ident(u_node)
        for lead, stride in ((fs[0], fs[1]), (fs[1], fs[0])):
            if not scan.uniform(stride):
                continue
            kind = {
                (row, counter): "a",
                (counter, col): "b",
                (counter, row): "at",
                (col, counter): "bt",
            }.get((_ident(lead) or "", u or ""))
            if kind is not None:
                return kind
    return None


def _store_map(stores: list[Node], names: set[str], scan: _Scan) -> tuple[str, str] | str:
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
                lead = [f for f in fs if _ident(f) in names]
                if _ident(unit) in names and len(fs) == 2 and len(lead) == 1:
                    other = fs[0] if fs[1] == lead[0] else fs[1]
                    if scan.uniform(other) and _ident(lead[0]) != _ident(unit):
                        pair = (_ident(lead[0]) or "", _ident(unit) or "")
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


def _bounds(cond: Node, negated: bool, row: str, col: str, scan: _Scan) -> dict[str, Bound] | str:
    """{row: ..., col: ...} from ``row < M && col < N`` (negated: ``row >= M || col >= N``)."""
    joiner = "||" if negated else "&&"
    parts: list[Node] = []

    def split(n: Node) -> None:
        n = strip(n)
        if n.type == "binary_expression" and _op(n) == joiner:
            left, right = _sides(n)
            split(left)
            split(right)
        else:
            parts.append(n)

    split(cond)
    found: dict[str, Bound] = {}
    flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
    for p in parts:
        if p.type != "binary_expression" or _op(p) not in flip:
            return f"line {_cuda.line_of(p)}: the guard term {_cuda.text(p)} is not a bound on the row or the column"
        left, right = _sides(p)
        op = _op(p)
        var, bound, lt = (
            (_ident(left), right, op) if _ident(left) in (row, col) else (_ident(right), left, flip[op])
        )
        wanted = ">=" if negated else "<"
        if var not in (row, col) or lt != wanted or var in found:
            return (
                f"line {_cuda.line_of(p)}: the guard term {_cuda.text(p)} is not `{row}/{col} {wanted} bound`"
            )
        if not scan.uniform(bound):
            return f"line {_cuda.line_of(p)}: the bound {_cuda.text(bound)} is not the same in every thread"
        var_text = _cuda.text(left) if _ident(left) == var else _cuda.text(right)
        text = (
            f"{var_text} < {_cuda.text(bound)}"
            if (_ident(left) == var)
            else f"{_cuda.text(bound)} > {var_text}"
        )
        found[var] = Bound(var=var, text=text, bound=bound)
    if set(found) != {row, col}:
        return f"the guard does not bound both {row} and {col}"
    return found


def _safe(stmt: Node, scan: _Scan) -> bool:
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
    for word in _FORBIDDEN:
        if word in text:
            return f"the kernel already uses {word}: not a naive loop nest"
    body = kernel.child_by_field_name("body")
    if body is None:
        return "the kernel has no body"
    scan = _Scan(kernel, set(constants))
    loops = [n for n in _cuda.walk(body) if n.type in _LOOPS]
    if len(loops) != 1 or loops[0].type != "for_statement":
        return f"the kernel has {len(loops)} loops: a naive matmul has one `for` over the shared dimension"
    loop = loops[0]
    got = _counter(loop, scan)
    if isinstance(got, str):
        return got
    counter, ctype, k_bound = got
    acc_body = _loop_body(loop, scan.pointers)
    if isinstance(acc_body, str):
        return acc_body
    if len(acc_body.refs) != 2 or acc_body.refs[0].pointer == acc_body.refs[1].pointer:
        return f"line {_cuda.line_of(loop)}: the product does not read two different pointer parameters"
    # the thread map: two variables, each blockIdx.a * blockDim.a + threadIdx.a on its own axis
    derived: dict[str, tuple[str, Node]] = {}
    spans: list[tuple[int, int]] = []
    for n in _cuda.walk(body):
        if n.type != "init_declarator":
            continue
        name, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            continue
        axis = _derivation(value, block, constants)
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
    mapped = _store_map(_stores([body], scan.pointers), names, scan)
    if isinstance(mapped, str):
        return mapped
    row, col = mapped
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
    a_type, b_type = _element(scan.pointers[a.pointer]), _element(scan.pointers[b.pointer])
    for pointer, typ in ((a.pointer, a_type), (b.pointer, b_type)):
        if typ not in ELEMENT_TYPES:
            return f"{pointer} holds {typ or 'an unknown type'}: tiles are built for {', '.join(sorted(ELEMENT_TYPES))}"
    counter_uses = [n for n in _cuda.walk(loop) if n.type == "identifier" and _cuda.text(n) == counter]
    inside = [
        n for n in counter_uses if any(r.index.start_byte <= n.start_byte < r.index.end_byte for r in (a, b))
    ]
    loop_header = [
        n
        for n in counter_uses
        if not any(r.index.start_byte <= n.start_byte < r.index.end_byte for r in (a, b))
    ]
    body_node = loop.child_by_field_name("body")
    assert body_node is not None
    if (
        any(body_node.start_byte <= n.start_byte < body_node.end_byte for n in loop_header)
        or len(inside) != 2
    ):
        return f"line {_cuda.line_of(loop)}: the counter {counter} is used outside the two operand indices"
    acc = acc_body.acc
    if acc in (row, col, counter) or acc in scan.pointers:
        return f"the accumulator {acc} is not a local scalar"
    # where the nest sits: guard, pre, post
    nest = _place(loop, body, row, col, scan)
    if isinstance(nest, str):
        return nest
    guard, guard_stmt, pre, post, bounds = nest
    for stmt in pre:
        if not _safe(stmt, scan):
            return (
                f"line {_cuda.line_of(stmt)}: a statement between the guard and the loop is not a declaration "
                "free of memory reads: it cannot run for the tile's out-of-range threads"
            )
    stores = _stores(post, scan.pointers)
    if not stores:
        return "no store after the loop: the result is not written to a (row, col) element"
    for target in _stores([body], scan.pointers):
        arr = target.child_by_field_name("argument")
        if arr is not None and _cuda.text(arr) in (a.pointer, b.pointer):
            return f"line {_cuda.line_of(target)}: the kernel stores into the operand {_cuda.text(arr)}"
    for stmt in [*pre, loop]:
        if _stores([stmt], scan.pointers):
            return f"line {_cuda.line_of(stmt)}: a store before the end of the loop"
    row_decl = derived["x"][1] if derived["x"][0] == row else derived["y"][1]
    col_decl = derived["x"][1] if derived["x"][0] == col else derived["y"][1]
    return MatmulNest(
        kernel=kernel,
        body=body,
        row=row,
        col=col,
        row_decl=row_decl,
        col_decl=col_decl,
        row_axis="x" if derived["x"][0] == row else "y",
        loop=loop,
        counter=counter,
        counter_type=ctype,
        k_bound=k_bound,
        a=a,
        b=b,
        a_kind=a_kind,
        b_kind=b_kind,
        a_type=a_type,
        b_type=b_type,
        guard=guard,
        guard_stmt=guard_stmt,
        pre=pre,
        post=post,
        row_bound=bounds.get(row) if bounds else None,
        col_bound=bounds.get(col) if bounds else None,
        params=scan.params,
    )


def _element(type_text: str) -> str:
    words = [w for w in type_text.replace("const", " ").split() if w not in ("__restrict__", "volatile")]
    return " ".join(words)


def _place(
    loop: Node, body: Node, row: str, col: str, scan: _Scan
) -> tuple[str, Node | None, list[Node], list[Node], dict[str, Bound]] | str:
    """(guard kind, guard statement, pre, post, bounds) of where the loop sits in the kernel body."""
    top = _statements(body)
    holder = loop.parent
    if holder == body:
        idx = top.index(loop)
        returns = [
            i
            for i, s in enumerate(top[:idx])
            if s.type == "if_statement" and _is_return(s.child_by_field_name("consequence"))
        ]
        post = top[idx + 1 :]
        if not returns:
            return "none", None, [], post, {}  # what precedes the loop already runs in every thread
        if len(returns) > 1:
            return f"line {_cuda.line_of(top[returns[1]])}: more than one early return before the loop"
        stmt = top[returns[0]]
        if stmt.child_by_field_name("alternative") is not None:
            return f"line {_cuda.line_of(stmt)}: the early-return guard has an else branch"
        cond = stmt.child_by_field_name("condition")
        value = cond.child_by_field_name("value") if cond is not None else None
        if value is None:
            return f"line {_cuda.line_of(stmt)}: the guard has no condition"
        bounds = _bounds(value, True, row, col, scan)
        if isinstance(bounds, str):
            return bounds
        return "return", stmt, top[returns[0] + 1 : idx], post, bounds
    if holder is None or holder.type != "compound_statement":
        return f"line {_cuda.line_of(loop)}: the loop is not a statement of a block"
    guard = holder.parent
    if guard is None or guard.type != "if_statement" or guard.parent != body:
        return f"line {_cuda.line_of(loop)}: the loop is nested in something other than one bounds-check `if`"
    if guard.child_by_field_name("alternative") is not None:
        return f"line {_cuda.line_of(guard)}: the bounds check has an else branch"
    if top.index(guard) != len(top) - 1:
        return f"line {_cuda.line_of(guard)}: statements follow the bounds-checked block"
    cond = guard.child_by_field_name("condition")
    value = cond.child_by_field_name("value") if cond is not None else None
    if value is None:
        return f"line {_cuda.line_of(guard)}: the guard has no condition"
    bounds = _bounds(value, False, row, col, scan)
    if isinstance(bounds, str):
        return bounds
    inner = _statements(holder)
    idx = inner.index(loop)
    return "if", guard, inner[:idx], inner[idx + 1 :], bounds


def _is_return(node: Node | None) -> bool:
    if node is None:
        return False
    if node.type == "return_statement":
        return True
    if node.type == "compound_statement":
        stmts = _statements(node)
        return len(stmts) == 1 and stmts[0].type == "return_statement"
    return False
