"""The cooperative-row recipe's vocabulary: its plan, and what its precondition asks of single tree nodes.

Pure functions of tree-sitter-cuda nodes (row index, loop counter and bound, associative updates,
subscripts and the names they read); ``_coop_row_analysis`` walks a whole kernel with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.base import LaunchContext
from perfagent.rewrite.recipes import _cuda

COMBINE = {"fmaxf": "fmaxf", "max": "max", "fminf": "fminf", "min": "min", "fmax": "fmax", "fmin": "fmin"}
"""Functions an accumulator may be combined with (besides ``+``) -> the combine its butterfly uses."""
WRAPPERS = ("parenthesized_expression", "cast_expression")


class Refused(Exception):
    """The kernel is outside the recipe's precondition (the message says where and why)."""


@dataclass(frozen=True)
class Level:
    """One loop of a distributed nest: ``for (T var = start; var < bound; ++var)`` (``<=``: inclusive)."""

    node: Node
    var: str
    start: Node
    bound: Node
    inclusive: bool
    ctype: str


@dataclass
class Loop:
    """One pass over the item: a loop, or a perfect rectangular nest of loops (``levels``, outermost
    first) whose iterations the sharers split; ``var`` is the innermost counter."""

    node: Node
    var: str
    start: Node
    levels: list[Level] = field(default_factory=list)
    privates: set[str] = field(default_factory=set)
    """Names private to one iteration that it may reassign (declared in the body, inner loops' counters)."""
    reductions: dict[str, str] = field(default_factory=dict)
    """Accumulator -> combine ('+' or a function name), in order of first update."""
    locals: dict[str, Node] = field(default_factory=dict)
    """Per-iteration scalars declared in the body -> their value."""
    resets: list[str] = field(default_factory=list)
    """Sum accumulators that lanes other than 0 must zero before the loop."""


@dataclass
class Plan:
    row_init: Node
    loops: list[Loop] = field(default_factory=list)
    scalar_stores: list[Node] = field(default_factory=list)
    source: str = ""
    """The text the nodes are of (the request's source, or it with loop macros written out)."""
    kernel: Node | None = None
    item_loop: Node | None = None
    """The grid-stride loop over items (``for (r = tid; r < n; r += blockDim.x * gridDim.x)``), if any."""
    launch: LaunchContext | None = None
    """The launch of a kernel rewritten one thread per row first (``_row_hoist``); None: the request's."""

    @property
    def reductions(self) -> list[tuple[str, str]]:
        return [(acc, combine) for lp in self.loops for acc, combine in lp.reductions.items()]


def unwrap(node: Node) -> Node:
    """``node`` without enclosing parentheses and casts."""
    while node.type in WRAPPERS:
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else None
        if inner is None:
            named = [c for c in node.named_children if c.type != "comment"]
            if not named:
                break
            inner = named[-1]
        node = inner
    return node


def row_index(kernel: Node, item: Node | None = None) -> tuple[str, Node] | str:
    """(row variable, its initialiser) or why there is none (``item``: a grid-stride loop over items, whose
    step may read blockDim.x and gridDim.x)."""
    found: list[tuple[str, Node]] = []
    for n, name, value in _cuda.initialisations(kernel):
        axes = {b for v in _cuda.walk(value) if (b := _cuda.builtin_axis(v))}
        if any(b == ("threadIdx", "x") for b in axes):
            if any(a[1] != "x" for a in axes):
                return f"the index on line {_cuda.line_of(n)} mixes x and y thread coordinates"
            found.append((name, value))
    if len(found) != 1:
        return (
            "no single row index derived from threadIdx.x"
            if not found
            else "several indices derive from threadIdx.x"
        )
    lo, hi = found[0][1].start_byte, found[0][1].end_byte
    step = item.child_by_field_name("update") if item is not None else None
    for n in _cuda.walk(kernel):
        if step is not None and step.start_byte <= n.start_byte < step.end_byte:
            continue
        if _cuda.builtin_axis(n) and not (lo <= n.start_byte and n.end_byte <= hi):
            return f"{_cuda.text(n)} on line {_cuda.line_of(n)} is used outside the row index"
    return found[0]


def loop_counter(loop: Node) -> tuple[str, Node] | str:
    """The loop's counter and its start value, when it counts up by one."""
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    if init is None or update is None:
        return f"the loop on line {_cuda.line_of(loop)} has no counter initialiser or update"
    decl = next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None)
    if decl is None:
        return f"the loop on line {_cuda.line_of(loop)} does not declare its counter"
    name_node, start = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
    if name_node is None or start is None:
        return f"the loop on line {_cuda.line_of(loop)} has no start value"
    name = _cuda.text(name_node)
    step = _cuda.text(update).replace(" ", "")
    if step not in (f"{name}++", f"++{name}", f"{name}+=1", f"{name}={name}+1"):
        return f"the loop on line {_cuda.line_of(loop)} does not step by one ({_cuda.text(update)})"
    return name, start


def bound_ok(loop: Node, var: str) -> str | None:
    """Why the loop's condition is not ``var < bound`` / ``var <= bound`` (lanes may step past it)."""
    cond = loop.child_by_field_name("condition")
    cond = unwrap(cond) if cond is not None else None
    if cond is not None and cond.type == "binary_expression":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op is not None and left is not None and right is not None:
            o = _cuda.text(op)
            counter, bound = (left, right) if o in ("<", "<=") else (right, left)
            if o in ("<", "<=", ">", ">=") and _cuda.text(unwrap(counter)) == var:
                if var not in _cuda.identifiers_in(bound):
                    return None
    shown = _cuda.text(cond) if cond is not None else "nothing"
    return (
        f"the loop on line {_cuda.line_of(loop)} runs while {shown}: only {var} < bound or {var} <= bound "
        "is split among lanes"
    )


def reduction(expr: Node) -> tuple[str, str, list[Node]] | None:
    """(accumulator, combine, the nodes naming it) when ``expr`` is one associative update."""
    if expr.type == "update_expression":
        arg, op = expr.child_by_field_name("argument"), expr.child_by_field_name("operator")
        if arg is not None and op is not None and arg.type == "identifier" and _cuda.text(op) == "++":
            return _cuda.text(arg), "+", [arg]
        return None
    if expr.type != "assignment_expression":
        return None
    left, right, op = (
        expr.child_by_field_name("left"),
        expr.child_by_field_name("right"),
        expr.child_by_field_name("operator"),
    )
    if left is None or right is None or op is None or left.type != "identifier":
        return None
    acc, o = _cuda.text(left), _cuda.text(op)
    if o == "+=":
        return (acc, "+", [left]) if acc not in _cuda.identifiers_in(right) else None
    if o != "=":
        return None
    right = unwrap(right)
    pair: tuple[Node | None, Node | None] = (None, None)
    combine = None
    if (
        right.type == "binary_expression"
        and _cuda.text(right.child_by_field_name("operator") or right) == "+"
    ):
        pair, combine = (right.child_by_field_name("left"), right.child_by_field_name("right")), "+"
    elif right.type == "call_expression":
        fn, args = right.child_by_field_name("function"), right.child_by_field_name("arguments")
        names = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if fn is not None and _cuda.text(fn) in COMBINE and len(names) == 2:
            pair, combine = (names[0], names[1]), COMBINE[_cuda.text(fn)]
    a, b = pair
    if combine is None or a is None or b is None:
        return None
    for mine, other in ((a, b), (b, a)):
        if mine.type == "identifier" and _cuda.text(mine) == acc and acc not in _cuda.identifiers_in(other):
            return acc, combine, [left, mine]
    return None


def is_zero(node: Node) -> bool:
    node = unwrap(node)
    if node.type != "number_literal":
        return False
    digits = _cuda.text(node).lower().rstrip("ful")
    try:
        return float(digits) == 0.0
    except ValueError:
        return False


def inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def ancestors(node: Node) -> list[Node]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def statements(body: Node) -> list[Node]:
    return (
        [c for c in body.named_children if c.type != "comment"]
        if body.type == "compound_statement"
        else [body]
    )


def subscript_index(sub: Node) -> Node | None:
    args = next((c for c in sub.children if c.type == "subscript_argument_list"), None)
    if args is None:
        idx = sub.child_by_field_name("index")
        return idx
    named = [c for c in args.named_children if c.type != "comment"]
    return named[0] if len(named) == 1 else None


def is_written(sub: Node) -> bool:
    """Whether the subscript is stored to (assigned, compound-assigned, incremented)."""
    node, parent = sub, sub.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "assignment_expression":
        return parent.child_by_field_name("left") == node
    return parent.type == "update_expression"


def store_statement(sub: Node) -> Node | None:
    """The expression statement storing to ``sub`` (or reading it while storing the same buffer)."""
    stmt = _cuda.enclosing(sub, "expression_statement")
    if stmt is None or not stmt.named_children:
        return None
    expr = stmt.named_children[0]
    target = expr.child_by_field_name("left") if expr.type == "assignment_expression" else None
    if expr.type == "update_expression":
        target = expr.child_by_field_name("argument")
    if target is None or unwrap(target).type != "subscript_expression":
        return None
    return stmt


def normal_form(node: Node, loop: Loop | None) -> str:
    """Tokens of ``node``, the loop's counter as ``@`` and its per-iteration values spelled out."""
    if node.child_count == 0:
        word = _cuda.text(node)
        if loop is not None and node.type == "identifier":
            if word == loop.var:
                return "@"
            outer = [lv.var for lv in loop.levels[:-1]]
            if word in outer:
                return f"@{outer.index(word)}"
            if word in loop.locals:
                return f"( {normal_form(loop.locals[word], loop)} )"
        return word
    return " ".join(normal_form(c, loop) for c in node.children if c.type != "comment")


def declared_names(node: Node) -> list[str]:
    """Names an ``init_declarator`` declares, or the bare ones (``float s;``) of a ``declaration``."""
    if node.type == "init_declarator":
        decl = node.child_by_field_name("declarator")
        idents = [n for n in _cuda.walk(decl) if n.type == "identifier"] if decl is not None else []
        return [_cuda.text(idents[0])] if idents else []
    out: list[str] = []
    for child in node.children_by_field_name("declarator"):
        if child.type != "init_declarator":
            idents = [n for n in _cuda.walk(child) if n.type == "identifier"]
            out.extend(_cuda.text(i) for i in idents[:1])
    return out


def names_read(node: Node, loop: Loop | None) -> set[str]:
    """Identifiers ``node`` reads, a loop's per-iteration values spelled out, its counter left out."""
    out: set[str] = set()
    for n in _cuda.walk(node):
        if n.type != "identifier":
            continue
        word = _cuda.text(n)
        if loop is not None and word in loop.locals:
            out |= names_read(loop.locals[word], loop)
        elif loop is None or word not in {lv.var for lv in loop.levels} | {loop.var}:
            out.add(word)
    return out


def mentions(node: Node, loop: Loop) -> bool:
    return "@" in normal_form(node, loop).split()


def unit_stride(index: Node, loop: Loop) -> bool:
    """``index`` is ``offset + var`` (any order, casts and parentheses allowed), offset free of ``var``."""
    node = unwrap(index)
    if node.type == "identifier" and _cuda.text(node) in loop.locals:
        return unit_stride(loop.locals[_cuda.text(node)], loop)
    if node.type == "identifier":
        return _cuda.text(node) == loop.var
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        sides = [
            s for s in (node.child_by_field_name("left"), node.child_by_field_name("right")) if s is not None
        ]
        with_var = [s for s in sides if mentions(s, loop)]
        return len(sides) == 2 and len(with_var) == 1 and unit_stride(with_var[0], loop)
    return False


def sum_resets(body: Node, loops: list[Loop]) -> None:
    """Sum accumulators whose incoming value is not a literal zero: lanes other than 0 zero them."""
    for lp in loops:
        for acc, combine in lp.reductions.items():
            if combine == "+" and not _zero_before(body, acc, lp.node):
                lp.resets.append(acc)


def _zero_before(body: Node, acc: str, loop: Node) -> bool:
    decls = _cuda.init_declarators(body, acc)
    if len(decls) != 1 or decls[0].end_byte > loop.start_byte:
        return False
    value = decls[0].child_by_field_name("value")
    if value is None or not is_zero(value):
        return False
    return not any(
        n.type == "identifier"
        and _cuda.text(n) == acc
        and decls[0].end_byte <= n.start_byte < loop.start_byte
        for n in _cuda.walk(body)
    )


_SELECT = {">": "max", ">=": "max", "<": "min", "<=": "min"}
"""``if (v OP acc) acc = v;`` keeps the max or the min of the values it sees (with acc on the left, flipped)."""
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
_TYPED = {"float": "f{}f", "double": "f{}"}
"""The combine call per accumulator type (fmaxf, fmax); integers use max/min."""


def select_update(stmt: Node, kernel: Node) -> tuple[str, str, list[Node]] | None:
    """(accumulator, combine, the nodes naming it) of ``if (v > acc) acc = v;`` (max; ``<``: min; either
    operand order, braces allowed, no else): the running max of a row written as a compare-and-assign.
    Like ``fmaxf`` it skips a NaN ``v``, so the lanes' partials combine with ``fmaxf`` / ``fminf``."""
    cond, then = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
    if cond is None or then is None or stmt.child_by_field_name("alternative") is not None:
        return None
    test = unwrap(cond.named_children[-1] if cond.type == "condition_clause" else cond)
    body = (
        [c for c in then.named_children if c.type != "comment"]
        if then.type == "compound_statement"
        else [then]
    )
    expr = body[0].named_children[0] if len(body) == 1 and body[0].type == "expression_statement" else None
    if test.type != "binary_expression" or expr is None or expr.type != "assignment_expression":
        return None
    op = _cuda.text(test.child_by_field_name("operator") or test)
    left, right = test.child_by_field_name("left"), test.child_by_field_name("right")
    target, value = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    assigned = expr.child_by_field_name("operator")
    if left is None or right is None or target is None or value is None or assigned is None:
        return None
    if op not in _SELECT or _cuda.text(assigned) != "=":
        return None
    acc = _cuda.text(target)
    if target.type != "identifier" or acc in _cuda.identifiers_in(value):
        return None
    if _cuda.text(unwrap(left)) == acc:
        left, right, op = right, left, _FLIP[op]
    same = _cuda.text(unwrap(left)).replace(" ", "") == _cuda.text(unwrap(value)).replace(" ", "")
    if not same or _cuda.text(unwrap(right)) != acc:
        return None
    types = {
        _cuda.element_type(d)
        for d in _cuda.walk(kernel)
        if d.type == "declaration"
        and acc in {_cuda.text(c.child_by_field_name("declarator") or c) for c in d.named_children}
    }
    if len(types) != 1:
        return None
    kind = _SELECT[op]
    (typ,) = types
    combine = _TYPED[typ].format(kind) if typ in _TYPED else kind
    return (acc, combine, [unwrap(right), target]) if combine in COMBINE else None
