"""The cooperative-row recipe's precondition, proven on one kernel's parse tree (see ``cooperative_row``).

``analyse`` returns the plan the rewrite follows (the row index, each loop's reductions and resets, the
scalar stores lane 0 makes) or why the kernel is outside the precondition.
"""

from __future__ import annotations

from tree_sitter import Node

from perfagent.rewrite.recipes import _coop_row_atomics, _cuda
from perfagent.rewrite.recipes._coop_row_memory import check_memory
from perfagent.rewrite.recipes._coop_row_nest import (
    FLAT,
    gathered_written,
    item_loop,
    levels,
    privates,
    stores,
)
from perfagent.rewrite.recipes._coop_row_syntax import (
    Loop,
    Plan,
    Refused,
    ancestors,
    declared_names,
    inside,
    reduction,
    row_index,
    select_update,
    statements,
    sum_resets,
    unwrap,
)

LANE = "coop_lane"
"""The lane variable the rewrite declares (a kernel that already has one is refused)."""
FORBIDDEN = ("__shared__", "__syncthreads", "__shfl", "__syncwarp")
LOOPS = ("for_statement", "while_statement", "do_statement")


class Analysis:
    """One pass over the kernel: pointers, loops, memory accesses; ``Refused`` on the first failure."""

    def __init__(self, kernel: Node, row_var: str, row_init: Node) -> None:
        self.kernel = kernel
        self.body = kernel.child_by_field_name("body") or kernel
        self.row_var = row_var
        self.plan = Plan(row_init=row_init)
        self.pointers: dict[str, str] = {}
        """Pointer parameters (-> themselves) and row pointers into them (-> their parameter)."""
        self.alias_values: list[tuple[int, int]] = []
        self.outer_names: set[str] = set()
        self.assigned: set[str] = set()
        """Names assigned or updated anywhere in the kernel (loop counters' own steps aside)."""
        self.declared: dict[str, int] = {}
        """How many times each name is declared in the kernel and its parameters."""
        self.offset_reads: dict[str, Node] = {}
        """Buffers a row pointer's offset reads (``table + ids[t] * dim``): they must stay unwritten."""
        self.atomics: list[_coop_row_atomics.Site] = []

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
            if node.type != "init_declarator" or any(inside(node, lp) for lp in loops):
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
                raise Refused(
                    f"the pointer {name} on line {_cuda.line_of(node)} is not a parameter plus an offset "
                    "(base + e, &base[e]): its buffer is unknown"
                )
            self.pointers[name] = self.pointers[base]
            self.outer_names.add(name)
            self.alias_values.append((value.start_byte, value.end_byte))

    def _alias_base(self, value: Node) -> str | None:
        value = unwrap(value)
        if value.type == "identifier" and _cuda.text(value) in self.pointers:
            return _cuda.text(value)
        if (
            value.type == "binary_expression"
            and _cuda.text(value.child_by_field_name("operator") or value) == "+"
        ):
            sides = [
                unwrap(s)
                for s in (value.child_by_field_name("left"), value.child_by_field_name("right"))
                if s is not None
            ]
            found = [(s, b) for s in sides if (b := self._alias_base(s)) is not None]
            others = [s for s in sides if all(s.id != f.id for f, _ in found)]
            if len(found) == 1 and all(self._read_only_offset(o) for o in others):
                return found[0][1]  # p + e, e + p, (p + e) + f, table + ids[t] * dim
        if (
            value.type == "pointer_expression"
            and _cuda.text(value.child_by_field_name("operator") or value) == "&"
        ):
            arg = value.child_by_field_name("argument")
            arg = unwrap(arg) if arg is not None else None
            if arg is not None and arg.type == "subscript_expression":
                base = arg.child_by_field_name("argument")
                if base is not None and base.type == "identifier" and _cuda.text(base) in self.pointers:
                    return _cuda.text(base)
        return None

    def _read_only_offset(self, offset: Node) -> bool:
        """The offset names pointers only as subscripted bases (an index read once per item: a gather)."""
        for n in _cuda.walk(offset):
            if n.type == "identifier" and _cuda.text(n) in self.pointers:
                parent = n.parent
                if (
                    parent is None
                    or parent.type != "subscript_expression"
                    or parent.child_by_field_name("argument") != n
                ):
                    return False
                self.offset_reads.setdefault(self.pointers[_cuda.text(n)], n)
        return True

    # ---------------------------------------------------------------------------------------- loops

    def loop(self, node: Node) -> Loop:
        nest = levels(node)
        if any(lv.var == self.row_var for lv in nest):
            raise Refused(f"the loop on line {_cuda.line_of(node)} counts the row index itself")
        loop = Loop(node=node, var=nest[-1].var, start=nest[0].start, levels=nest)
        loop.privates = privates(loop)
        updates: dict[str, Node] = {}
        allowed: set[int] = set()
        body = nest[-1].node.child_by_field_name("body")
        for stmt in statements(body) if body is not None else []:
            self._statement(loop, stmt, updates, allowed)
        for n in _cuda.walk(node):
            if n.type == "identifier" and _cuda.text(n) in loop.reductions and n.id not in allowed:
                acc = _cuda.text(n)
                raise Refused(
                    f"the loop on line {_cuda.line_of(node)} reads {acc} (line {_cuda.line_of(n)}) while it accumulates it "
                    f"(line {_cuda.line_of(updates[acc])}): a running value such as a prefix sum is a loop-carried "
                    "dependency, not an associative reduction the lanes can split"
                )
        return loop

    def _statement(
        self, loop: Loop, stmt: Node, updates: dict[str, Node], allowed: set[int], serial: bool = False
    ) -> None:
        where = f"the loop on line {_cuda.line_of(loop.node)}"
        picked = select_update(stmt, self.kernel) if stmt.type == "if_statement" and not serial else None
        if picked is not None:  # if (v > mx) mx = v;
            acc, combine, nodes = picked
            if loop.reductions.setdefault(acc, combine) != combine:
                raise Refused(f"{where} combines {acc} with both {loop.reductions[acc]} and {combine}")
            updates.setdefault(acc, stmt)
            allowed.update(n.id for n in nodes)
            return
        if stmt.type in ("compound_statement", "if_statement", "else_clause"):
            for child in stmt.named_children:  # an if's condition is an expression, checked by the reads
                if child.type not in ("comment", "condition_clause"):
                    self._statement(loop, child, updates, allowed, serial)
            return
        if stmt.type == "for_statement":  # a loop inside one iteration (a pooling window): it stays serial
            body = stmt.child_by_field_name("body")
            for child in statements(body) if body is not None else []:
                self._statement(loop, child, updates, allowed, True)
            return
        if serial and stmt.type in ("break_statement", "continue_statement"):
            return  # leaves the serial inner loop only
        if stmt.type == "comment" or (stmt.type == "expression_statement" and not stmt.named_children):
            return
        if any(stmt.id == a.statement.id for a in self.atomics):
            return  # an atomic update: its address is checked with the memory (_coop_row_atomics.place)
        if stmt.type == "declaration":
            self._local(loop, stmt)
            return
        if stmt.type != "expression_statement":
            raise Refused(
                f"{where} holds a {stmt.type.replace('_', ' ')} (line {_cuda.line_of(stmt)}): only scalar "
                "declarations, element stores, reductions and if/else are split among lanes"
            )
        self._assignment(loop, stmt, updates, allowed)

    def _assignment(self, loop: Loop, stmt: Node, updates: dict[str, Node], allowed: set[int]) -> None:
        """An assignment or update in the loop body: an element store (checked by ``memory``), a private
        value of one iteration, or an associative reduction (recorded in ``loop.reductions``, its
        statement in ``updates``, its own reads of the accumulator in ``allowed``)."""
        where = f"the loop on line {_cuda.line_of(loop.node)}"
        expr = stmt.named_children[0]
        target = expr.child_by_field_name("left") if expr.type == "assignment_expression" else None
        if expr.type == "update_expression":
            target = expr.child_by_field_name("argument")
        if target is None:
            raise Refused(
                f"{where} has a statement that is neither an assignment nor an update (line {_cuda.line_of(stmt)}): "
                f"{_cuda.text(stmt)}"
            )
        target = unwrap(target)
        if target.type == "subscript_expression":
            return  # an element store: the memory pass checks its subscript
        if target.type != "identifier":
            raise Refused(
                f"{where} stores through {_cuda.text(target)} (line {_cuda.line_of(stmt)}): only subscripts are followed"
            )
        name = _cuda.text(target)
        if name in loop.privates:
            return  # declared and reassigned inside one iteration: no other iteration sees it
        if name == loop.var:
            raise Refused(f"{where} assigns its counter {name} in its body (line {_cuda.line_of(stmt)})")
        if name in loop.locals:
            raise Refused(f"{where} reassigns its per-iteration value {name} (line {_cuda.line_of(stmt)})")
        if name in self.pointers or name == self.row_var:
            raise Refused(f"{where} moves {name} (line {_cuda.line_of(stmt)})")
        red = reduction(expr)
        if red is None:
            raise Refused(
                f"{where} updates {name}: not an associative reduction or an element-wise pass "
                f"(line {_cuda.line_of(stmt)}: {_cuda.text(stmt)})"
            )
        acc, combine, nodes = red
        if loop.reductions.setdefault(acc, combine) != combine:
            raise Refused(f"{where} combines {acc} with both {loop.reductions[acc]} and {combine}")
        updates.setdefault(acc, stmt)
        allowed.update(n.id for n in nodes)

    def _local(self, loop: Loop, decl: Node) -> None:
        where = f"the loop on line {_cuda.line_of(loop.node)}"
        for child in decl.named_children:
            if child.type == "identifier" and _cuda.text(child) in loop.privates:
                self._check_new_name(loop, _cuda.text(child), decl)
                continue
            if child.type != "init_declarator":
                if child.type in ("identifier", "array_declarator", "pointer_declarator"):
                    raise Refused(
                        f"{where} declares {_cuda.text(child)} without a value (line {_cuda.line_of(decl)})"
                    )
                continue
            ident, value = child.child_by_field_name("declarator"), child.child_by_field_name("value")
            if ident is not None and ident.type == "identifier" and _cuda.text(ident) in loop.privates:
                self._check_new_name(loop, _cuda.text(ident), decl)
                continue
            if ident is None or value is None or ident.type != "identifier":
                raise Refused(
                    f"{where} declares {_cuda.text(child)} (line {_cuda.line_of(decl)}): only scalars with a value"
                )
            name = _cuda.text(ident)
            if name in _cuda.identifiers_in(value):
                raise Refused(f"{where} declares {name} from itself (line {_cuda.line_of(decl)})")
            self._check_new_name(loop, name, decl)
            loop.locals[name] = value

    def _check_new_name(self, loop: Loop, name: str, decl: Node) -> None:
        if name in self.outer_names or name in loop.locals or any(name == lv.var for lv in loop.levels):
            raise Refused(
                f"the loop on line {_cuda.line_of(loop.node)} declares {name} again (line {_cuda.line_of(decl)}), "
                "shadowing another name"
            )

    def others(self, loops: list[Node]) -> None:
        """Names declared and assigned; the row and the pointers never reassigned, no assignment inside
        another expression, no call made for its side effects."""
        updates = {u.id for lp in loops if (u := lp.child_by_field_name("update")) is not None}
        for n in _cuda.walk(self.body):
            if n.type == "init_declarator" or (n.type == "declaration" and n.parent is not None):
                for ident in declared_names(n):
                    self.declared[ident] = self.declared.get(ident, 0) + 1
            if n.type in ("assignment_expression", "update_expression"):
                parent = n.parent
                if n.id not in updates and (parent is None or parent.type != "expression_statement"):
                    raise Refused(
                        f"the assignment {_cuda.text(n)} on line {_cuda.line_of(n)} is inside another expression "
                        "(a hidden update of its own)"
                    )
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                target = unwrap(target) if target is not None else None
                if target is not None and target.type == "identifier":
                    name = _cuda.text(target)
                    if n.id not in updates:
                        self.assigned.add(name)
                    if name == self.row_var and n.id not in updates:
                        raise Refused(f"the row index {name} is changed on line {_cuda.line_of(n)}")
                    if name in self.pointers:
                        raise Refused(f"the pointer {name} is moved on line {_cuda.line_of(n)}")
            if (
                n.type == "expression_statement"
                and n.named_children
                and n.named_children[0].type == "call_expression"
                and all(n.id != a.statement.id for a in self.atomics)
            ):
                raise Refused(
                    f"the call {_cuda.text(n.named_children[0])} on line {_cuda.line_of(n)} is made for its side effects"
                )


def _raise(why: str | None) -> None:
    if why is not None:
        raise Refused(why)


def analyse(kernel: Node) -> Plan | str:
    """The kernel's cooperative plan, or why it does not apply."""
    whole = _cuda.text(kernel)
    for word in FORBIDDEN:
        if word in whole:
            return f"the kernel uses {word}: its threads already cooperate"
    for name in (LANE, FLAT):
        if name in whole:
            return f"the kernel already has a variable named {name}"
    item = item_loop(kernel)
    row = row_index(kernel, item)
    if isinstance(row, str):
        return row
    row_var, row_init = row
    nodes = [n for n in _cuda.walk(kernel) if n.type in LOOPS and (item is None or n.id != item.id)]
    if not nodes:
        return "the kernel has no loop over the row"
    for loop in nodes:
        if loop.type != "for_statement":
            return f"the loop on line {_cuda.line_of(loop)} is not a counted for loop"
    # the passes: loops inside no other loop but the item loop (loops inside a pass stay in its iterations)
    top = [
        n
        for n in nodes
        if not any(a.type in LOOPS and (item is None or a.id != item.id) for a in ancestors(n))
    ]
    analysis = Analysis(kernel, row_var, row_init)
    analysis.plan.item_loop = item
    try:
        analysis.params()
        analysis.aliases(top)
        analysis.atomics = _coop_row_atomics.sites(analysis.body, analysis.pointers)
        loops = [analysis.loop(n) for n in top]
        analysis.others(nodes if item is None else [*nodes, item])
        check_memory(analysis, loops)
        analysis.plan.scalar_stores += _coop_row_atomics.place(analysis.atomics, loops, analysis)
        _raise(gathered_written(analysis.body, analysis.pointers, analysis.offset_reads))
        sum_resets(analysis.body, loops)
    except Refused as exc:
        return str(exc)
    plan = analysis.plan
    plan.loops = loops
    if not plan.reductions and not any(stores(lp) for lp in loops):
        return "no loop reduces over the row or stores along it (nothing for a warp to share)"
    return plan
