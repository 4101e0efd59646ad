"""cooperative-scan's analysis: the row's one counted loop, its running value and the stores that read it.

What is proven here (and refused, with the line, when it does not hold) is the precondition in
``cooperative_scan``'s docstring; ``ScanPlan`` is what the rewrite (``_scan_emit``) needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from perfagent.rewrite.recipes import _cuda
from perfagent.rewrite.recipes._coop_row_analysis import FORBIDDEN, LANE, LOOPS, Analysis
from perfagent.rewrite.recipes._coop_row_syntax import (
    Loop,
    Refused,
    ancestors,
    is_written,
    normal_form,
    row_index,
    statements,
    subscript_index,
    unit_stride,
    unwrap,
)
from perfagent.rewrite.recipes._scan_syntax import (
    Update,
    counter_and_step,
    direction_ok,
    mentions,
    reads_memory,
    scan_update,
)

BASE = "coop_base"
IN = "coop_in"
CONTRIB = "coop_d"
INCL = "coop_incl"
EXCL = "coop_excl"
TID = "coop_tid"
SCAN = "coop_scan_"
MAX_BLOCK = 1024
"""The block version's shared array holds one value per thread of the largest block CUDA allows."""
_OURS = (BASE, IN, CONTRIB, INCL, EXCL, LANE, TID, SCAN)


@dataclass
class ScanPlan:
    """What the rewrite needs: the row index, the loop and its parts, the accumulator."""

    row_init: Node
    loop: Node
    var: str
    counter_type: str
    step: int
    """+1 (the loop counts up) or -1 (down: a reverse scan, lane 0 takes the first element visited)."""
    acc: str
    acc_type: str
    combine: str
    """'+', '*', or a max/min function (fmaxf, max, fmax, fminf, min, fmin)."""
    declarations: list[Node] = field(default_factory=list)
    update: Node | None = None
    """The statement holding the update (the ``if`` around it, when there is one)."""
    update_expr: Node | None = None
    contribution: str = ""
    """What the update combines in ('(x[idx])', '1')."""
    stores_before: list[Node] = field(default_factory=list)
    stores_after: list[Node] = field(default_factory=list)
    guarded: set[int] = field(default_factory=set)
    """Ids of declarations whose value reads memory (evaluated only within the bound)."""


class _Scan:
    """One pass over the kernel; ``Refused`` on the first thing outside the precondition."""

    def __init__(self, kernel: Node, row_var: str, row_init: Node, buffers: Analysis) -> None:
        self.kernel = kernel
        self.body = kernel.child_by_field_name("body") or kernel
        self.row_var = row_var
        self.row_init = row_init
        self.pointers = dict(buffers.pointers)
        """Pointer parameters (-> themselves) and row pointers into them (``T *dst = out + row * n``)."""
        self.alias_values = list(buffers.alias_values)
        """Byte ranges of the row pointers' values: the one place a parameter may appear unsubscripted."""

    def loop(self, node: Node) -> ScanPlan:
        where = f"the loop on line {_cuda.line_of(node)}"
        counter = counter_and_step(node)
        if isinstance(counter, str):
            raise Refused(counter)
        var, start, step = counter
        why = direction_ok(node, var, step)
        if why is not None:
            raise Refused(why)
        init = node.child_by_field_name("initializer")
        assert init is not None
        counter_type = _cuda.element_type(init) or "int"
        shape = Loop(node=node, var=var, start=start)
        (stmt, expr, upd), stores, decls = self._body_statements(shape, where)
        acc, acc_nodes = upd.acc, upd.acc_nodes
        acc_type = self._acc_type(acc, node)
        if upd.combine not in ("+", "*") and acc_type not in ("float", "double"):
            raise Refused(
                f"{where} keeps a running {upd.combine} of the {acc_type} {acc}: a running max/min is scanned "
                "for float and double only (the identity is an infinity)"
            )
        plan = ScanPlan(
            row_init=self.row_init,
            loop=node,
            var=var,
            counter_type=counter_type,
            step=step,
            acc=acc,
            acc_type=acc_type,
            combine=upd.combine,
            declarations=decls,
            update=stmt,
            update_expr=expr,
            contribution=upd.contribution,
        )
        self._running_value_stores(plan, stmt, stores, acc_nodes)
        for d in decls:
            if mentions(d, acc):
                raise Refused(f"the declaration on line {_cuda.line_of(d)} reads the running value {acc}")
            if reads_memory(d):
                plan.guarded.add(d.id)
        self._memory(shape, node, plan)
        return plan

    def _body_statements(
        self, shape: Loop, where: str
    ) -> tuple[tuple[Node, Node, Update], list[Node], list[Node]]:
        """The loop body's one running-value update (statement, expression, what it does), its element
        stores and its scalar declarations; anything else is refused."""
        body = shape.node.child_by_field_name("body")
        stmts = statements(body) if body is not None else []
        found: list[tuple[Node, Node, Update]] = []
        stores: list[Node] = []
        decls: list[Node] = []
        for stmt in stmts:
            if stmt.type == "declaration":
                decls.append(self._declaration(shape, stmt, where))
                continue
            update = self._update(stmt)
            if update is not None and update[1].acc == shape.var:
                raise Refused(
                    f"{where} assigns its counter {shape.var} in its body (line {_cuda.line_of(stmt)})"
                )
            if update is not None:
                found.append((stmt, *update))
                continue
            if self._store(stmt) is not None:
                stores.append(stmt)
                continue
            raise Refused(
                f"{where} holds {_cuda.text(stmt).splitlines()[0]} (line {_cuda.line_of(stmt)}): only scalar "
                "declarations, one running-value update and element stores are scanned by a warp"
            )
        if len(found) != 1:
            raise Refused(f"{where} has {len(found)} running-value updates: a warp scans exactly one")
        return found[0], stores, decls

    def _running_value_stores(
        self, plan: ScanPlan, update: Node, stores: list[Node], acc_nodes: list[Node]
    ) -> None:
        """Sort the stores into before (exclusive) and after (inclusive) the update; the running value
        must be stored, and read nowhere else after the loop starts."""
        where = f"the loop on line {_cuda.line_of(plan.loop)}"
        # a store before the update reads the exclusive value; every other one, after the scan
        for s in stores:
            exclusive = s.start_byte < update.start_byte and bool(mentions(s, plan.acc))
            (plan.stores_before if exclusive else plan.stores_after).append(s)
        if not any(mentions(s, plan.acc) for s in stores):
            raise Refused(
                f"{where} accumulates {plan.acc} but stores no running value: a reduction (cooperative-row), not a scan"
            )
        allowed = {n.id for n in acc_nodes} | {n.id for s in stores for n in mentions(s, plan.acc)}
        for n in mentions(self.body, plan.acc):
            if n.id in allowed or n.start_byte < plan.loop.start_byte:
                continue
            raise Refused(
                f"{plan.acc} is read on line {_cuda.line_of(n)} outside its update and the stores of the running value"
            )

    def _declaration(self, shape: Loop, decl: Node, where: str) -> Node:
        inits = [c for c in decl.named_children if c.type == "init_declarator"]
        bare = [
            c
            for c in decl.named_children
            if c.type in ("identifier", "pointer_declarator", "array_declarator")
        ]
        if bare or len(inits) != 1:
            raise Refused(
                f"{where} declares {_cuda.text(decl)} (line {_cuda.line_of(decl)}): one scalar with a value"
            )
        ident, value = inits[0].child_by_field_name("declarator"), inits[0].child_by_field_name("value")
        if ident is None or value is None or ident.type != "identifier":
            raise Refused(
                f"{where} declares {_cuda.text(decl)} (line {_cuda.line_of(decl)}): one scalar with a value"
            )
        shape.locals[_cuda.text(ident)] = value
        return decl

    def _update(self, stmt: Node) -> tuple[Node, Update] | None:
        """(the update expression, what it does) when ``stmt`` is the update or an else-less ``if`` of it."""
        inner = stmt
        if stmt.type == "if_statement":
            if stmt.child_by_field_name("alternative") is not None:
                return None
            cons = stmt.child_by_field_name("consequence")
            body = statements(cons) if cons is not None else []
            if len(body) != 1:
                return None
            inner = body[0]
        if inner.type != "expression_statement" or not inner.named_children:
            return None
        expr = inner.named_children[0]
        found = scan_update(expr)
        if found is None:
            return None
        if stmt.type == "if_statement":
            cond = stmt.child_by_field_name("condition")
            if cond is not None and mentions(cond, found.acc):
                raise Refused(
                    f"the condition on line {_cuda.line_of(cond)} reads the running value {found.acc}"
                )
        return expr, found

    def _store(self, stmt: Node) -> Node | None:
        if stmt.type != "expression_statement" or not stmt.named_children:
            return None
        expr = stmt.named_children[0]
        if (
            expr.type != "assignment_expression"
            or _cuda.text(expr.child_by_field_name("operator") or expr) != "="
        ):
            return None
        left = expr.child_by_field_name("left")
        left = unwrap(left) if left is not None else None
        return left if left is not None and left.type == "subscript_expression" else None

    def _acc_type(self, acc: str, loop: Node) -> str:
        decls = _cuda.init_declarators(self.body, acc)
        if len(decls) != 1 or decls[0].end_byte > loop.start_byte or decls[0].parent is None:
            raise Refused(f"the running value {acc} is not declared once, with a value, before the loop")
        typ = _cuda.element_type(decls[0].parent).replace("const ", "")
        if (
            typ not in _cuda.ELEMENT_BYTES
            or _cuda.ELEMENT_BYTES[typ] > 8
            or typ in ("float2", "int2", "__half2")
        ):
            raise Refused(
                f"the running value {acc} is a {typ or 'value of unknown type'}: not a shuffled scalar"
            )
        return typ

    def _memory(self, shape: Loop, loop: Node, plan: ScanPlan) -> None:
        stored: dict[str, str] = {}
        for s in plan.stores_before + plan.stores_after:
            target = self._store(s)
            assert target is not None
            base, index = target.child_by_field_name("argument"), subscript_index(target)
            if (
                base is None
                or base.type != "identifier"
                or _cuda.text(base) not in self.pointers
                or index is None
            ):
                raise Refused(
                    f"{_cuda.text(target)} on line {_cuda.line_of(target)} is not a subscript of a pointer parameter "
                    "or of a row pointer into one"
                )
            if not unit_stride(index, shape):
                raise Refused(
                    f"{_cuda.text(target)} on line {_cuda.line_of(target)} is not offset + {shape.var}: lanes could store one element"
                )
            name, form = _cuda.text(base), normal_form(index, shape)
            if stored.setdefault(name, form) != form:
                raise Refused(
                    f"{name} is stored at two different elements per iteration (line {_cuda.line_of(s)})"
                )
        self._one_name_per_buffer()
        for n in _cuda.walk(self.body):
            if n.type == "identifier" and _cuda.text(n) in self.pointers and not self._in_alias_value(n):
                parent = n.parent
                if parent is not None and parent.type == "pointer_declarator":
                    continue  # a row pointer's own declaration (its value is checked by Analysis.aliases)
                if (
                    parent is None
                    or parent.type != "subscript_expression"
                    or parent.child_by_field_name("argument") != n
                ):
                    raise Refused(
                        f"the pointer {_cuda.text(n)} is used on line {_cuda.line_of(n)} other than by subscript"
                    )
            if n.type == "pointer_expression" and not self._in_alias_value(n):
                raise Refused(f"{_cuda.text(n)} on line {_cuda.line_of(n)} dereferences or takes an address")
            if n.type == "subscript_expression":
                base = n.child_by_field_name("argument")
                name = _cuda.text(base) if base is not None else ""
                index = subscript_index(n)
                inside_loop = loop.start_byte <= n.start_byte < loop.end_byte
                if name in stored and (
                    not inside_loop or index is None or normal_form(index, shape) != stored[name]
                ):
                    raise Refused(
                        f"{name} is stored in the loop and reached as {_cuda.text(n)} on line {_cuda.line_of(n)}: "
                        "lanes would share its elements"
                    )
                if is_written(n) and not inside_loop:
                    raise Refused(f"{_cuda.text(n)} is stored outside the loop (line {_cuda.line_of(n)})")

    def _in_alias_value(self, node: Node) -> bool:
        return any(start <= node.start_byte < end for start, end in self.alias_values)

    def _one_name_per_buffer(self) -> None:
        """Each buffer is reached under one name: a row pointer and its parameter (or two row pointers into
        one parameter) could name one element at two subscripts the per-name checks cannot compare."""
        seen: dict[str, str] = {}
        for n in _cuda.walk(self.body):
            if n.type != "identifier" or _cuda.text(n) not in self.pointers or self._in_alias_value(n):
                continue
            if n.parent is not None and n.parent.type == "pointer_declarator":
                continue  # the row pointer's own declaration
            name = _cuda.text(n)
            buffer = self.pointers[name]
            if seen.setdefault(buffer, name) != name:
                raise Refused(
                    f"{seen[buffer]} and {name} (line {_cuda.line_of(n)}) both reach the buffer {buffer}: "
                    "one name per buffer is followed"
                )


def analyse(kernel: Node) -> ScanPlan | str:
    """The kernel's warp-scan plan, or why it does not apply."""
    whole = _cuda.text(kernel)
    for word in (*FORBIDDEN, "atomic"):  # a scan's atomics: cooperative-row's atomic passes do not apply
        if word in whole:
            return f"the kernel uses {word}: its threads already cooperate"
    for name in _OURS:
        if name in whole:
            return f"the kernel already has a name {name} the rewrite declares"
    row = row_index(kernel)
    if isinstance(row, str):
        return row
    loops = [n for n in _cuda.walk(kernel) if n.type in LOOPS]
    if len(loops) != 1:
        return "the kernel has no loop over the row" if not loops else "the kernel has more than one loop"
    loop = loops[0]
    if loop.type != "for_statement" or any(a.type in LOOPS for a in ancestors(loop)):
        return f"the loop on line {_cuda.line_of(loop)} is not a single counted for loop"
    rest = Analysis(kernel, *row)  # no hidden assignment, moved row or pointer, call for its effects
    try:
        rest.params()
        rest.aliases([loop])  # row pointers declared before the loop, each into one pointer parameter
        plan = _Scan(kernel, *row, rest).loop(loop)
        rest.others([loop])
        # the accumulator is changed only by its update
        for n in _cuda.walk(rest.body):
            if n.type in ("assignment_expression", "update_expression") and plan.update_expr is not None:
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                target = unwrap(target) if target is not None else None
                if (
                    target is not None
                    and target.type == "identifier"
                    and _cuda.text(target) == plan.acc
                    and n.id != plan.update_expr.id
                ):
                    raise Refused(f"the running value {plan.acc} is also changed on line {_cuda.line_of(n)}")
    except Refused as exc:
        return str(exc)
    return plan
