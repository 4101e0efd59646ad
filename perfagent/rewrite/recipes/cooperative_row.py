"""cooperative-row: give a row that one thread walks alone to a whole warp.

Row-per-thread kernels (GEMV, row sums and maxima, softmax, L2/layer norm) derive a row index from the
x thread coordinates and loop over the row: the 32 lanes of a warp read 32 addresses a row apart, and
for short grids there are few threads at all. The textbook fix lets the 32 lanes of a warp share the
row: lane-strided loops (coalesced), a butterfly of ``__shfl_xor_sync`` after each reduction loop (so
every lane holds the row's result, which later passes need), lane 0 alone for scalar stores, and a grid
32 times larger.

Precondition, proven on the parse tree of the kernel:
- a 1-D launch whose block is a multiple of 32, one index derived from the x thread coordinates (the
  row, never reassigned), no other use of threadIdx/blockIdx/blockDim, no shared memory, barriers or
  atomics; so every warp holds one row and all code outside the loops is the same in its 32 lanes;
- every loop counts up by one from a start while ``i < bound`` (``<=``), is not nested, and its body
  is made of: declarations of per-iteration scalars with a value (``float e = expf(x[i] - m);``),
  element stores ``p[... + i] = e`` / ``p[... + i] /= s`` / ``p[... + i]++``, associative updates of
  accumulators — ``acc += e``, ``acc = acc + e`` (or ``e + acc``), ``acc++``, ``acc = fmaxf(acc, e)``
  (``max``, ``fmax``, ``fminf``, ``min``, ``fmin``, either argument order) — and ``if``/``else`` over
  those; no accumulator of a loop is read in that loop except by its own update (a running value,
  such as a prefix sum, is a loop-carried dependency and is refused), so one loop may fuse an
  element-wise pass with any number of reductions (softmax's ``e = expf(..); out[i] = e; sum += e;``);
- no assignment inside another expression, no address taken, no pointer dereferenced or moved, no
  call made as a statement (nothing is written that the analysis does not see);
- memory is reached by subscripts of pointer parameters or of row pointers into them declared once
  outside the loops (``const float* in_row = input + row * dim;``, ``&out[row * n]``); a buffer the
  kernel stores to in its loops is read and written through one subscript ``p[E + i]`` in all its
  loops (unit stride in the counter, ``E`` free of it and of any name assigned or declared twice),
  and those loops share their start, so every element of it stays with one lane from pass to pass
  (``out[i] = e`` then ``out[i] /= sum``); a buffer stored outside the loops (``out[row] = acc``) is
  read only in those stores, which lane 0 makes.

The rewrite: row = old row / 32, ``coop_lane = threadIdx.x % 32``; each loop starts at its start plus
the lane and steps by 32; after a loop, a butterfly per accumulator. A max/min accumulator may enter the
loop with any value every lane shares (an element, ``-INFINITY``, the result of an earlier loop): the
combine is idempotent, so the butterfly still gives the row's value (``max_val = in_row[0]`` then a
loop from 1 stays as it is, each lane starting from element 0). A sum must count its incoming value
once: unless the accumulator is declared with a literal zero and untouched until the loop, lanes other
than 0 set it to zero first (``float s = v[0]; for (c = 1; ...) s += v[c]``, or a sum continued by a
second loop). The arithmetic per element is unchanged; only the summation order of reductions changes
(the verifier judges that with its tolerance). Distinct pointer parameters are taken not to overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes.registry import Recipe
from perfagent.workloads.expr import ExpressionError, evaluate_int
from perfagent.workloads.launch_spec import LaunchOverride

NAME = "cooperative-row"
LANE = "coop_lane"
BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
_COMBINE = {"fmaxf": "fmaxf", "max": "max", "fminf": "fminf", "min": "min", "fmax": "fmax", "fmin": "fmin"}
_FORBIDDEN = ("__shared__", "__syncthreads", "atomic", "__shfl", "__syncwarp")
_LOOPS = ("for_statement", "while_statement", "do_statement")
_WRAPPERS = ("parenthesized_expression", "cast_expression")


class _Refused(Exception):
    """The kernel is outside the recipe's precondition (the message says where and why)."""


@dataclass
class _Loop:
    node: Node
    var: str
    start: Node
    reductions: dict[str, str] = field(default_factory=dict)
    """Accumulator -> combine ('+' or a function name), in order of first update."""
    locals: dict[str, Node] = field(default_factory=dict)
    """Per-iteration scalars declared in the body -> their value."""
    resets: list[str] = field(default_factory=list)
    """Sum accumulators that lanes other than 0 must zero before the loop."""


@dataclass
class _Plan:
    row_init: Node
    loops: list[_Loop] = field(default_factory=list)
    scalar_stores: list[Node] = field(default_factory=list)

    @property
    def reductions(self) -> list[tuple[str, str]]:
        return [(acc, combine) for lp in self.loops for acc, combine in lp.reductions.items()]


def _builtin(node: Node) -> tuple[str, str] | None:
    if node.type != "field_expression":
        return None
    obj, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if obj is None or fld is None or _cuda.text(obj) not in BUILTINS:
        return None
    return _cuda.text(obj), _cuda.text(fld)


def _strip(node: Node) -> Node:
    """``node`` without enclosing parentheses and casts."""
    while node.type in _WRAPPERS:
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else None
        if inner is None:
            named = [c for c in node.named_children if c.type != "comment"]
            if not named:
                break
            inner = named[-1]
        node = inner
    return node


def _line(node: Node) -> int:
    return _cuda.line_of(node)


def _row(kernel: Node) -> tuple[str, Node] | str:
    """(row variable, its initialiser) or why there is none."""
    found: list[tuple[str, Node]] = []
    for n in _cuda.walk(kernel):
        if n.type != "init_declarator":
            continue
        decl, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if decl is None or value is None or decl.type != "identifier":
            continue
        axes = {b for v in _cuda.walk(value) if (b := _builtin(v))}
        if any(b == ("threadIdx", "x") for b in axes):
            if any(a[1] != "x" for a in axes):
                return f"the index on line {_line(n)} mixes x and y thread coordinates"
            found.append((_cuda.text(decl), value))
    if len(found) != 1:
        return (
            "no single row index derived from threadIdx.x"
            if not found
            else "several indices derive from threadIdx.x"
        )
    lo, hi = found[0][1].start_byte, found[0][1].end_byte
    for n in _cuda.walk(kernel):
        if _builtin(n) and not (lo <= n.start_byte and n.end_byte <= hi):
            return f"{_cuda.text(n)} on line {_line(n)} is used outside the row index"
    return found[0]


def _loop_var(loop: Node) -> tuple[str, Node] | str:
    """The loop's counter and its start value, when it counts up by one."""
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    if init is None or update is None:
        return f"the loop on line {_line(loop)} has no counter initialiser or update"
    decl = next((n for n in _cuda.walk(init) if n.type == "init_declarator"), None)
    if decl is None:
        return f"the loop on line {_line(loop)} does not declare its counter"
    name_node, start = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
    if name_node is None or start is None:
        return f"the loop on line {_line(loop)} has no start value"
    name = _cuda.text(name_node)
    step = _cuda.text(update).replace(" ", "")
    if step not in (f"{name}++", f"++{name}", f"{name}+=1", f"{name}={name}+1"):
        return f"the loop on line {_line(loop)} does not step by one ({_cuda.text(update)})"
    return name, start


def _bound_ok(loop: Node, var: str) -> str | None:
    """Why the loop's condition is not ``var < bound`` / ``var <= bound`` (lanes may step past it)."""
    cond = loop.child_by_field_name("condition")
    cond = _strip(cond) if cond is not None else None
    if cond is not None and cond.type == "binary_expression":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op is not None and left is not None and right is not None:
            o = _cuda.text(op)
            counter, bound = (left, right) if o in ("<", "<=") else (right, left)
            if o in ("<", "<=", ">", ">=") and _cuda.text(_strip(counter)) == var:
                if var not in _cuda.identifiers_in(bound):
                    return None
    shown = _cuda.text(cond) if cond is not None else "nothing"
    return (
        f"the loop on line {_line(loop)} runs while {shown}: only {var} < bound or {var} <= bound "
        "is split among lanes"
    )


def _reduction(expr: Node) -> tuple[str, str, list[Node]] | None:
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
    right = _strip(right)
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
        if fn is not None and _cuda.text(fn) in _COMBINE and len(names) == 2:
            pair, combine = (names[0], names[1]), _COMBINE[_cuda.text(fn)]
    a, b = pair
    if combine is None or a is None or b is None:
        return None
    for mine, other in ((a, b), (b, a)):
        if mine.type == "identifier" and _cuda.text(mine) == acc and acc not in _cuda.identifiers_in(other):
            return acc, combine, [left, mine]
    return None


def _is_zero(node: Node) -> bool:
    node = _strip(node)
    if node.type != "number_literal":
        return False
    digits = _cuda.text(node).lower().rstrip("ful")
    try:
        return float(digits) == 0.0
    except ValueError:
        return False


class _Analysis:
    """One pass over the kernel: pointers, loops, memory accesses; ``_Refused`` on the first failure."""

    def __init__(self, kernel: Node, row_var: str, row_init: Node) -> None:
        self.kernel = kernel
        self.body = kernel.child_by_field_name("body") or kernel
        self.row_var = row_var
        self.plan = _Plan(row_init=row_init)
        self.pointers: dict[str, str] = {}
        """Pointer parameters (-> themselves) and row pointers into them (-> their parameter)."""
        self.alias_values: list[tuple[int, int]] = []
        self.outer_names: set[str] = set()
        self.assigned: set[str] = set()
        """Names assigned or updated anywhere in the kernel (loop counters' own steps aside)."""
        self.declared: dict[str, int] = {}
        """How many times each name is declared in the kernel and its parameters."""

    # ---------------------------------------------------------------------------------------- setup

    def params(self) -> None:
        decl = _cuda.function_declarator(self.kernel)
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        for p in plist.named_children if plist is not None else []:
            idents = [n for n in _cuda.walk(p) if n.type == "identifier"]
            if not idents:
                continue
            name = _cuda.text(idents[-1])
            self.outer_names.add(name)
            self.declared[name] = self.declared.get(name, 0) + 1
            if any(n.type in ("pointer_declarator", "array_declarator") for n in _cuda.walk(p)):
                self.pointers[name] = name

    def aliases(self, loops: list[Node]) -> None:
        """Row pointers: ``T* p = base + e`` / ``= &base[e]`` / ``= base`` declared outside the loops."""
        for node in _cuda.walk(self.body):
            if node.type != "init_declarator" or any(_inside(node, lp) for lp in loops):
                continue
            decl, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if decl is None or value is None:
                continue
            idents = [n for n in _cuda.walk(decl) if n.type == "identifier"]
            name = _cuda.text(idents[-1]) if idents else ""
            if decl.type == "identifier":
                self.outer_names.add(name)
                continue
            if decl.type != "pointer_declarator":
                continue
            base = self._alias_base(value)
            if base is None:
                raise _Refused(
                    f"the pointer {name} on line {_line(node)} is not a parameter plus an offset "
                    "(base + e, &base[e]): its buffer is unknown"
                )
            self.pointers[name] = self.pointers[base]
            self.outer_names.add(name)
            self.alias_values.append((value.start_byte, value.end_byte))

    def _alias_base(self, value: Node) -> str | None:
        value = _strip(value)
        if value.type == "identifier" and _cuda.text(value) in self.pointers:
            return _cuda.text(value)
        if (
            value.type == "binary_expression"
            and _cuda.text(value.child_by_field_name("operator") or value) == "+"
        ):
            sides = [
                _strip(s)
                for s in (value.child_by_field_name("left"), value.child_by_field_name("right"))
                if s is not None
            ]
            found = [(s, b) for s in sides if (b := self._alias_base(s)) is not None]
            others = [s for s in sides if all(s.id != f.id for f, _ in found)]
            if len(found) == 1 and not any(self.pointers.keys() & _cuda.identifiers_in(o) for o in others):
                return found[0][1]  # p + e, e + p, (p + e) + f
        if (
            value.type == "pointer_expression"
            and _cuda.text(value.child_by_field_name("operator") or value) == "&"
        ):
            arg = value.child_by_field_name("argument")
            arg = _strip(arg) if arg is not None else None
            if arg is not None and arg.type == "subscript_expression":
                base = arg.child_by_field_name("argument")
                if base is not None and base.type == "identifier" and _cuda.text(base) in self.pointers:
                    return _cuda.text(base)
        return None

    # ---------------------------------------------------------------------------------------- loops

    def loop(self, node: Node) -> _Loop:
        var = _loop_var(node)
        if isinstance(var, str):
            raise _Refused(var)
        name, start = var
        if name == self.row_var:
            raise _Refused(f"the loop on line {_line(node)} counts the row index itself")
        why = _bound_ok(node, name)
        if why is not None:
            raise _Refused(why)
        loop = _Loop(node=node, var=name, start=start)
        updates: dict[str, Node] = {}
        allowed: set[int] = set()
        body = node.child_by_field_name("body")
        for stmt in _statements(body) if body is not None else []:
            self._statement(loop, stmt, updates, allowed)
        for n in _cuda.walk(node):
            if n.type == "identifier" and _cuda.text(n) in loop.reductions and n.id not in allowed:
                acc = _cuda.text(n)
                raise _Refused(
                    f"the loop on line {_line(node)} reads {acc} (line {_line(n)}) while it accumulates it "
                    f"(line {_line(updates[acc])}): a running value such as a prefix sum is a loop-carried "
                    "dependency, not an associative reduction the lanes can split"
                )
        return loop

    def _statement(self, loop: _Loop, stmt: Node, updates: dict[str, Node], allowed: set[int]) -> None:
        where = f"the loop on line {_line(loop.node)}"
        if stmt.type in ("compound_statement", "if_statement", "else_clause"):
            for child in stmt.named_children:  # an if's condition is an expression, checked by the reads
                if child.type not in ("comment", "condition_clause"):
                    self._statement(loop, child, updates, allowed)
            return
        if stmt.type == "comment" or (stmt.type == "expression_statement" and not stmt.named_children):
            return
        if stmt.type == "declaration":
            self._local(loop, stmt)
            return
        if stmt.type != "expression_statement":
            raise _Refused(
                f"{where} holds a {stmt.type.replace('_', ' ')} (line {_line(stmt)}): only scalar "
                "declarations, element stores, reductions and if/else are split among lanes"
            )
        expr = stmt.named_children[0]
        target = expr.child_by_field_name("left") if expr.type == "assignment_expression" else None
        if expr.type == "update_expression":
            target = expr.child_by_field_name("argument")
        if target is None:
            raise _Refused(
                f"{where} has a statement that is neither an assignment nor an update (line {_line(stmt)}): "
                f"{_cuda.text(stmt)}"
            )
        target = _strip(target)
        if target.type == "subscript_expression":
            return  # an element store: the memory pass checks its subscript
        if target.type != "identifier":
            raise _Refused(
                f"{where} stores through {_cuda.text(target)} (line {_line(stmt)}): only subscripts are followed"
            )
        name = _cuda.text(target)
        if name == loop.var:
            raise _Refused(f"{where} assigns its counter {name} in its body (line {_line(stmt)})")
        if name in loop.locals:
            raise _Refused(f"{where} reassigns its per-iteration value {name} (line {_line(stmt)})")
        if name in self.pointers or name == self.row_var:
            raise _Refused(f"{where} moves {name} (line {_line(stmt)})")
        red = _reduction(expr)
        if red is None:
            raise _Refused(
                f"{where} updates {name}: not an associative reduction or an element-wise pass "
                f"(line {_line(stmt)}: {_cuda.text(stmt)})"
            )
        acc, combine, nodes = red
        if loop.reductions.setdefault(acc, combine) != combine:
            raise _Refused(f"{where} combines {acc} with both {loop.reductions[acc]} and {combine}")
        updates.setdefault(acc, stmt)
        allowed.update(n.id for n in nodes)

    def _local(self, loop: _Loop, decl: Node) -> None:
        where = f"the loop on line {_line(loop.node)}"
        for child in decl.named_children:
            if child.type != "init_declarator":
                if child.type in ("identifier", "array_declarator", "pointer_declarator"):
                    raise _Refused(
                        f"{where} declares {_cuda.text(child)} without a value (line {_line(decl)})"
                    )
                continue
            ident, value = child.child_by_field_name("declarator"), child.child_by_field_name("value")
            if ident is None or value is None or ident.type != "identifier":
                raise _Refused(
                    f"{where} declares {_cuda.text(child)} (line {_line(decl)}): only scalars with a value"
                )
            name = _cuda.text(ident)
            if name in _cuda.identifiers_in(value):
                raise _Refused(f"{where} declares {name} from itself (line {_line(decl)})")
            if name in self.outer_names or name in loop.locals or name == loop.var:
                raise _Refused(f"{where} declares {name} again (line {_line(decl)}), shadowing another name")
            loop.locals[name] = value

    # --------------------------------------------------------------------------------------- memory

    def memory(self, loops: list[_Loop]) -> None:
        """Every subscript: whose buffer, written or read, in which loop, at which index."""
        by_node = {lp.node.id: lp for lp in loops}
        accesses: dict[str, list[tuple[Node, _Loop | None, bool, str]]] = {}
        for n in _cuda.walk(self.body):
            if n.type == "identifier" and _cuda.text(n) in self.pointers:
                self._bare_pointer(n)
            op = n.child_by_field_name("operator") if n.type == "pointer_expression" else None
            if (
                op is not None
                and _cuda.text(op) == "&"
                and not any(s <= n.start_byte < e for s, e in self.alias_values)
            ):
                raise _Refused(
                    f"{_cuda.text(n)} on line {_line(n)} takes an address: what is written through it is unknown"
                )
            if op is not None and _cuda.text(op) == "*":
                raise _Refused(
                    f"{_cuda.text(n)} on line {_line(n)} dereferences a pointer: only subscripts are followed"
                )
            if n.type != "subscript_expression":
                continue
            base = n.child_by_field_name("argument")
            if base is None or base.type != "identifier" or _cuda.text(base) not in self.pointers:
                raise _Refused(
                    f"{_cuda.text(n)} on line {_line(n)}: {_cuda.text(base) if base is not None else '?'} is "
                    "neither a pointer parameter nor a row pointer into one"
                )
            if any(s <= n.start_byte < e for s, e in self.alias_values):
                continue  # &p[row * n] in a row pointer's value: an address, not an access
            loop = next((by_node[a.id] for a in _ancestors(n) if a.id in by_node), None)
            index = _index(n)
            if index is None:
                raise _Refused(f"{_cuda.text(n)} on line {_line(n)} has no single index")
            pattern = f"{_cuda.text(base)}[{_normal(index, loop)}]"
            accesses.setdefault(self.pointers[_cuda.text(base)], []).append((n, loop, _written(n), pattern))
        for buffer, uses in accesses.items():
            if not any(w for _, _, w, _ in uses):
                continue
            if any(lp is None for _, lp, _, _ in uses):
                self._scalar_buffer(buffer, uses)
                continue
            first, first_loop, _, pattern = uses[0]
            assert first_loop is not None
            for n, lp, _, other in uses:
                assert lp is not None
                for part, scope, what in (
                    (n, lp, "the subscript"),
                    (lp.start, None, "the start of its loop"),
                ):
                    for name in _names(part, scope):
                        if name in self.assigned or self.declared.get(name, 0) > 1:
                            raise _Refused(
                                f"{buffer} is stored in a loop and {what} {_cuda.text(part)} (line {_line(part)}) "
                                f"uses {name}, which is assigned or declared more than once: the same text "
                                "may name other elements in another pass"
                            )
                if other != pattern:
                    raise _Refused(
                        f"{buffer} is stored in a loop and reached as {_cuda.text(first)} (line {_line(first)}) "
                        f"and {_cuda.text(n)} (line {_line(n)}): lanes would share its elements"
                    )
                if _normal(lp.start, None) != _normal(first_loop.start, None):
                    raise _Refused(
                        f"{buffer} is stored in the loops on lines {_line(first_loop.node)} and "
                        f"{_line(lp.node)}, which start at {_cuda.text(first_loop.start)} and "
                        f"{_cuda.text(lp.start)}: its elements would change lanes between the passes"
                    )
                index = _index(n)
                assert index is not None
                if not _unit_stride(index, lp):
                    raise _Refused(
                        f"{_cuda.text(n)} on line {_line(n)} is stored in a loop but its index is not "
                        f"offset + {lp.var}: lanes could store the same element"
                    )

    def _scalar_buffer(self, buffer: str, uses: list[tuple[Node, _Loop | None, bool, str]]) -> None:
        for n, lp, _, _ in uses:
            if lp is not None:
                raise _Refused(
                    f"{buffer} is stored outside the loops and reached in the loop on line {_line(lp.node)}: "
                    "lane 0 alone stores it"
                )
            stmt = _store_statement(n)
            if stmt is None:
                raise _Refused(
                    f"{buffer} is stored outside the loops and read on line {_line(n)} outside that store: "
                    "lane 0 alone stores it"
                )
            if all(s.id != stmt.id for s in self.plan.scalar_stores):
                self.plan.scalar_stores.append(stmt)

    def _bare_pointer(self, ident: Node) -> None:
        parent = ident.parent
        if (
            parent is not None
            and parent.type == "subscript_expression"
            and parent.child_by_field_name("argument") == ident
        ):
            return
        if any(s <= ident.start_byte < e for s, e in self.alias_values):
            return
        if parent is not None and parent.type in ("pointer_declarator", "init_declarator"):
            if parent.child_by_field_name("declarator") == ident:
                return
        raise _Refused(
            f"the pointer {_cuda.text(ident)} is used on line {_line(ident)} other than by subscript "
            f"({_cuda.text(parent) if parent is not None else ''})"
        )

    # ---------------------------------------------------------------------------------------- resets

    def resets(self, loops: list[_Loop]) -> None:
        """Sum accumulators whose incoming value is not a literal zero: lanes other than 0 zero them."""
        for lp in loops:
            for acc, combine in lp.reductions.items():
                if combine == "+" and not self._zero_before(acc, lp.node):
                    lp.resets.append(acc)

    def _zero_before(self, acc: str, loop: Node) -> bool:
        decls = [
            n
            for n in _cuda.walk(self.body)
            if n.type == "init_declarator"
            and (d := n.child_by_field_name("declarator")) is not None
            and d.type == "identifier"
            and _cuda.text(d) == acc
        ]
        if len(decls) != 1 or decls[0].end_byte > loop.start_byte:
            return False
        value = decls[0].child_by_field_name("value")
        if value is None or not _is_zero(value):
            return False
        return not any(
            n.type == "identifier"
            and _cuda.text(n) == acc
            and decls[0].end_byte <= n.start_byte < loop.start_byte
            for n in _cuda.walk(self.body)
        )

    def others(self, loops: list[Node]) -> None:
        """Names declared and assigned; the row and the pointers never reassigned, no assignment inside
        another expression, no call made for its side effects."""
        updates = {u.id for lp in loops if (u := lp.child_by_field_name("update")) is not None}
        for n in _cuda.walk(self.body):
            if n.type == "init_declarator" or (n.type == "declaration" and n.parent is not None):
                for ident in _declared_names(n):
                    self.declared[ident] = self.declared.get(ident, 0) + 1
            if n.type in ("assignment_expression", "update_expression"):
                parent = n.parent
                if n.id not in updates and (parent is None or parent.type != "expression_statement"):
                    raise _Refused(
                        f"the assignment {_cuda.text(n)} on line {_line(n)} is inside another expression "
                        "(a hidden update of its own)"
                    )
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                target = _strip(target) if target is not None else None
                if target is not None and target.type == "identifier":
                    name = _cuda.text(target)
                    if n.id not in updates:
                        self.assigned.add(name)
                    if name == self.row_var:
                        raise _Refused(f"the row index {name} is changed on line {_line(n)}")
                    if name in self.pointers:
                        raise _Refused(f"the pointer {name} is moved on line {_line(n)}")
            if (
                n.type == "expression_statement"
                and n.named_children
                and n.named_children[0].type == "call_expression"
            ):
                raise _Refused(
                    f"the call {_cuda.text(n.named_children[0])} on line {_line(n)} is made for its side effects"
                )


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _ancestors(node: Node) -> list[Node]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _statements(body: Node) -> list[Node]:
    return (
        [c for c in body.named_children if c.type != "comment"]
        if body.type == "compound_statement"
        else [body]
    )


def _index(sub: Node) -> Node | None:
    args = next((c for c in sub.children if c.type == "subscript_argument_list"), None)
    if args is None:
        idx = sub.child_by_field_name("index")
        return idx
    named = [c for c in args.named_children if c.type != "comment"]
    return named[0] if len(named) == 1 else None


def _written(sub: Node) -> bool:
    """Whether the subscript is stored to (assigned, compound-assigned, incremented)."""
    node, parent = sub, sub.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "assignment_expression":
        return parent.child_by_field_name("left") == node
    return parent.type == "update_expression"


def _store_statement(sub: Node) -> Node | None:
    """The expression statement storing to ``sub`` (or reading it while storing the same buffer)."""
    stmt = _cuda.enclosing(sub, "expression_statement")
    if stmt is None or not stmt.named_children:
        return None
    expr = stmt.named_children[0]
    target = expr.child_by_field_name("left") if expr.type == "assignment_expression" else None
    if expr.type == "update_expression":
        target = expr.child_by_field_name("argument")
    if target is None or _strip(target).type != "subscript_expression":
        return None
    return stmt


def _normal(node: Node, loop: _Loop | None) -> str:
    """Tokens of ``node``, the loop's counter as ``@`` and its per-iteration values spelled out."""
    if node.child_count == 0:
        word = _cuda.text(node)
        if loop is not None and node.type == "identifier":
            if word == loop.var:
                return "@"
            if word in loop.locals:
                return f"( {_normal(loop.locals[word], loop)} )"
        return word
    return " ".join(_normal(c, loop) for c in node.children if c.type != "comment")


def _declared_names(node: Node) -> list[str]:
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


def _names(node: Node, loop: _Loop | None) -> set[str]:
    """Identifiers ``node`` reads, a loop's per-iteration values spelled out, its counter left out."""
    out: set[str] = set()
    for n in _cuda.walk(node):
        if n.type != "identifier":
            continue
        word = _cuda.text(n)
        if loop is not None and word in loop.locals:
            out |= _names(loop.locals[word], loop)
        elif loop is None or word != loop.var:
            out.add(word)
    return out


def _mentions(node: Node, loop: _Loop) -> bool:
    return "@" in _normal(node, loop).split()


def _unit_stride(index: Node, loop: _Loop) -> bool:
    """``index`` is ``offset + var`` (any order, casts and parentheses allowed), offset free of ``var``."""
    node = _strip(index)
    if node.type == "identifier" and _cuda.text(node) in loop.locals:
        return _unit_stride(loop.locals[_cuda.text(node)], loop)
    if node.type == "identifier":
        return _cuda.text(node) == loop.var
    if node.type == "binary_expression" and _cuda.text(node.child_by_field_name("operator") or node) == "+":
        sides = [
            s for s in (node.child_by_field_name("left"), node.child_by_field_name("right")) if s is not None
        ]
        with_var = [s for s in sides if _mentions(s, loop)]
        return len(sides) == 2 and len(with_var) == 1 and _unit_stride(with_var[0], loop)
    return False


def analyse(kernel: Node) -> _Plan | str:
    """The kernel's cooperative plan, or why it does not apply."""
    whole = _cuda.text(kernel)
    for word in _FORBIDDEN:
        if word in whole:
            return f"the kernel uses {word}: its threads already cooperate"
    if LANE in whole:
        return f"the kernel already has a variable named {LANE}"
    row = _row(kernel)
    if isinstance(row, str):
        return row
    row_var, row_init = row
    nodes = [n for n in _cuda.walk(kernel) if n.type in _LOOPS]
    if not nodes:
        return "the kernel has no loop over the row"
    for loop in nodes:
        if loop.type != "for_statement":
            return f"the loop on line {_line(loop)} is not a counted for loop"
        if any(a.type in _LOOPS for a in _ancestors(loop)):
            return f"the loop on line {_line(loop)} is nested: only single loops over the row are rewritten"
    analysis = _Analysis(kernel, row_var, row_init)
    try:
        analysis.params()
        analysis.aliases(nodes)
        loops = [analysis.loop(n) for n in nodes]
        analysis.others(nodes)
        analysis.memory(loops)
        analysis.resets(loops)
    except _Refused as exc:
        return str(exc)
    plan = analysis.plan
    plan.loops = loops
    if not plan.reductions:
        return "no loop reduces over the row (nothing for a warp to share)"
    return plan


def _kernel(request: RewriteRequest) -> Node | str:
    tree = _cuda.require_clean(request.source)
    found = _cuda.kernels(tree, request.kernel)
    if not found:
        return "no __global__ kernel in the source"
    if len(found) > 1 and request.kernel is None:
        return "several kernels and none named"
    return found[0]


def _block_ok(request: RewriteRequest) -> str | None:
    assert request.launch is not None
    env = {
        **request.launch.params,
        **{k: v for k, v in request.launch.defines.items() if isinstance(v, int | float)},
    }
    try:
        block = evaluate_int(str(request.launch.block[0]), env)
    except ExpressionError:
        return f"the block size {request.launch.block[0]} cannot be evaluated from the spec's parameters"
    return None if block % 32 == 0 else f"the block ({block} threads) is not a multiple of 32"


def applies(request: RewriteRequest) -> str | None:
    if request.language != "cuda":
        return "not a CUDA source"
    if request.launch is None:
        return "no launch spec: the grid is set in the source's own launch"
    if len(request.launch.grid) != 1 or len(request.launch.block) != 1:
        return "the launch spec's grid or block has more than one dimension"
    kernel = _kernel(request)
    if isinstance(kernel, str):
        return kernel
    plan = analyse(kernel)
    return plan if isinstance(plan, str) else _block_ok(request)


def _shuffle(acc: str, combine: str) -> str:
    step = (
        f"{acc} + __shfl_xor_sync(0xffffffffu, {acc}, o_)"
        if combine == "+"
        else (f"{combine}({acc}, __shfl_xor_sync(0xffffffffu, {acc}, o_))")
    )
    return f"for (int o_ = 16; o_ > 0; o_ >>= 1) {acc} = {step};  // every lane now holds the row's value"


def rewrite(source: str, plan: _Plan) -> str:
    """The warp-per-row source."""
    edits: list[_cuda.Edit] = []
    init = plan.row_init
    edits.append(_cuda.Edit(init.start_byte, init.end_byte, f"({_cuda.text(init)}) / 32"))
    decl = init.parent.parent if init.parent is not None else None  # init_declarator -> declaration
    if decl is not None and decl.type == "declaration":
        pad = " " * decl.start_point[1]
        edits.append(_cuda.Edit(decl.end_byte, decl.end_byte, f"\n{pad}const int {LANE} = threadIdx.x % 32;"))
    for loop in plan.loops:
        node, start = loop.node, loop.start
        update = node.child_by_field_name("update")
        assert update is not None
        first = LANE if _cuda.text(start).strip() == "0" else f"({_cuda.text(start)}) + {LANE}"
        edits.append(_cuda.Edit(start.start_byte, start.end_byte, first))
        edits.append(_cuda.Edit(update.start_byte, update.end_byte, f"{loop.var} += 32"))
        before = [
            f"if ({LANE} != 0) {acc} = 0;  // the incoming value counts once, in lane 0"
            for acc in loop.resets
        ]
        after = [_shuffle(acc, combine) for acc, combine in loop.reductions.items()]
        pad = " " * node.start_point[1]
        braced = node.parent is not None and node.parent.type == "compound_statement"
        head = "".join(f"{line}\n{pad}" for line in before)
        tail = "".join(f"\n{pad}{line}" for line in after)
        if braced:
            if head:
                edits.append(_cuda.Edit(node.start_byte, node.start_byte, head))
            if tail:
                edits.append(_cuda.Edit(node.end_byte, node.end_byte, tail))
        elif head or tail:
            edits.append(_cuda.Edit(node.start_byte, node.start_byte, "{\n" + pad + head))
            edits.append(_cuda.Edit(node.end_byte, node.end_byte, tail + "\n" + pad + "}"))
    for stmt in plan.scalar_stores:
        if stmt.parent is not None and stmt.parent.type == "compound_statement":
            edits.append(_cuda.Edit(stmt.start_byte, stmt.start_byte, f"if ({LANE} == 0) "))
        else:  # the body of an if or else: keep an else bound to its own if
            edits.append(_cuda.Edit(stmt.start_byte, stmt.start_byte, f"{{ if ({LANE} == 0) "))
            edits.append(_cuda.Edit(stmt.end_byte, stmt.end_byte, " }"))
    return _cuda.apply_edits(source, edits)


def propose(request: RewriteRequest) -> list[Candidate]:
    if applies(request) is not None:
        return []
    assert request.launch is not None
    kernel = _kernel(request)
    assert not isinstance(kernel, str)
    plan = analyse(kernel)
    assert not isinstance(plan, str)
    grid = str(request.launch.grid[0])
    reductions = [f"{acc} ({combine})" for acc, combine in plan.reductions]
    return [
        make_candidate(
            request,
            backend="recipes",
            recipe=NAME,
            source=rewrite(request.source, plan),
            description=(
                f"warp per row: lane-strided loops (coalesced), butterfly shuffles after the reductions of "
                f"{', '.join(reductions)}, lane 0 stores the scalars; grid x32. Summation order changes: "
                "results differ by rounding only"
            ),
            parameters={"rows_per_block": "block / 32", "reductions": len(reductions)},
            launch=LaunchOverride(grid=[f"32 * ({grid})"]),
        )
    ][: request.max_candidates]


RECIPE = Recipe(
    name=NAME,
    transforms=("cooperative-row",),
    languages=("cuda",),
    applies=applies,
    propose=propose,
    summary="row-per-thread reductions (GEMV, softmax, norms): a warp per row with lane-strided loops and shuffles",
)
