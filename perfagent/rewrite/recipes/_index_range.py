"""The range of an integer index expression at one point of a kernel, as affine forms of its sizes.

``Ranges(kernel)`` reads the kernel once: its *sizes* (integer arguments and locals that never change
and are computed from sizes only: ``worldSize = W * H`` is the product monomial ``H * W``), its
*values* (locals declared once and never written), and its *loop counters* (declared in a ``for`` and
written only by its update, by a non-negative step). ``at(node)`` then gives what holds at ``node``:
the guards that dominate it (enclosing ``if`` and loop conditions, and ``if (...) return;`` /
``continue;`` before it) as upper bounds of counters and values, and the facts they imply (a counter
``0 <= i < S`` makes ``S >= 1``). ``Point.bounds(expr)`` is then the expression's lower and upper
bounds (lists of candidate forms; an empty list: unknown).

Arithmetic is taken as exact: signed overflow is undefined, and unsigned wrap-around only lowers a
value below a bound that was derived for its exact value (``_affine`` proofs use both sides; the recipe
using this says which side it needs). Products of sizes are assumed not to overflow their type (the
kernel's own index arithmetic relies on the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from tree_sitter import Node

from perfagent.rewrite.recipes import _affine, _cuda
from perfagent.rewrite.recipes._affine import Facts, Form, FormDict
from perfagent.rewrite.recipes._chunk_syntax import assigned, ident, operator
from perfagent.rewrite.recipes._index_guards import declared_names, guards, params, writes

_INT_WORDS = (
    "int",
    "unsigned",
    "long",
    "short",
    "size_t",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint64_t",
    "char",
)


def is_integer_type(text: str) -> bool:
    words = text.replace("const", "").split()
    return bool(words) and all(w in _INT_WORDS or w.endswith("_t") for w in words)


def is_unsigned_type(text: str) -> bool:
    return "unsigned" in text or text.strip().startswith("uint") or "size_t" in text


@dataclass
class Range:
    """Candidate lower and upper bounds (each a form); empty: unknown on that side."""

    lo: list[FormDict] = field(default_factory=list)
    hi: list[FormDict] = field(default_factory=list)


class Ranges:
    """The kernel-wide part: sizes, values and loop counters (module docstring)."""

    def __init__(self, kernel: Node) -> None:
        self.kernel = kernel
        self.written = assigned(kernel)
        self.sizes: dict[str, FormDict] = {}
        self.nonneg: set[str] = set()
        self.values: dict[str, Node] = {}
        self.counters: dict[str, Node] = {}
        for name, typ, pointer in _cuda.kernel_params(kernel):
            if not pointer and is_integer_type(typ) and name not in self.written:
                self.sizes[name] = _affine.sym(name)
                if is_unsigned_type(typ):
                    self.nonneg.add(name)
        self._locals()

    def _locals(self) -> None:
        declared: dict[str, list[Node]] = {}
        for n in _cuda.walk(self.kernel):
            if n.type == "init_declarator" and (name := ident(n.child_by_field_name("declarator"))):
                declared.setdefault(name, []).append(n)
        for name in declared_names(self.kernel) & set(self.sizes):
            del self.sizes[name]  # a local that shadows an argument: neither is a size
            self.nonneg.discard(name)
        for name, decls in declared.items():
            if len(decls) != 1 or name in params(self.kernel):
                continue
            decl = decls[0]
            value, typ = (
                decl.child_by_field_name("value"),
                _cuda.element_type(decl.parent) if decl.parent else "",
            )
            if value is None or not is_integer_type(typ):
                continue
            loop = decl.parent.parent if decl.parent is not None else None
            if name in self.written:
                if loop is not None and loop.type == "for_statement" and self._counts_up(loop, name):
                    self.counters[name] = decl
                continue
            form = self._size_form(value)
            if form is not None:
                self.sizes[name] = form
                if is_unsigned_type(typ) and set(form) == {(name,)}:
                    self.nonneg.add(name)
            else:
                self.values[name] = value

    def _size_form(self, value: Node) -> FormDict | None:
        """The form of an initialiser made of sizes and constants only (None otherwise)."""
        names = {_cuda.text(n) for n in _cuda.walk(value) if n.type == "identifier"}
        if not names <= set(self.sizes) or any(_cuda.builtin_axis(n) for n in _cuda.walk(value)):
            return None
        point = Point(self, Facts(self.nonneg), {})
        exact = point.exact(value)
        return exact if exact is not None else None

    def _counts_up(self, loop: Node, name: str) -> bool:
        """``name`` is written only by the loop's update, as ``name += step`` (step >= 0) or ``++name``."""
        update = loop.child_by_field_name("update")
        body = loop.child_by_field_name("body")
        if update is None or body is None or name in {ident(t) for t in writes(body)}:
            return False
        cond = loop.child_by_field_name("condition")
        if cond is not None and name in {ident(t) for t in writes(cond)}:
            return False
        if update.type == "update_expression":
            return ident(update.child_by_field_name("argument")) == name and "++" in _cuda.text(update)
        if update.type == "assignment_expression" and operator(update) == "+=":
            step = update.child_by_field_name("right")
            point = Point(self, Facts(self.nonneg), {})
            return (
                ident(update.child_by_field_name("left")) == name
                and step is not None
                and point.at_least_zero(step)
            )
        return False

    def at(self, node: Node) -> Point:
        """What holds at ``node``: the dominating guards and their facts."""
        point = Point(self, Facts(self.nonneg), {})
        for name, op, bound in guards(node, self.kernel):
            form = point.exact(bound)
            if form is None:
                continue
            shift = {"<": -1, "<=": 0, ">": 1, ">=": 0}[op]
            side = point.guards if op in ("<", "<=") else point.lows
            side.setdefault(name, []).append(_affine.add(form, _affine.const(shift)))
        for name in set(point.guards) | set(point.lows):
            r = point.bounds_of_name(name)
            for lo, hi in product(r.lo, r.hi):
                point.facts.add(_affine.sub(hi, lo))
        point.facts.add_product_facts()
        return point


@dataclass
class Point:
    """Bounds of expressions at one point of the kernel."""

    scope: Ranges
    facts: Facts
    guards: dict[str, list[FormDict]]
    """name -> upper bounds the dominating guards give it."""
    lows: dict[str, list[FormDict]] = field(default_factory=dict)
    """name -> lower bounds the dominating guards give it (``x >= 1`` of a stencil's interior)."""

    def exact(self, node: Node) -> FormDict | None:
        """The form of a size expression (None when it reads anything else or is not affine)."""
        r = self.bounds(node)
        if isinstance(r, str) or len(r.lo) != 1 or r.lo != r.hi:
            return None
        return r.lo[0]

    def at_least_zero(self, node: Node) -> bool:
        r = self.bounds(node)
        return not isinstance(r, str) and any(self.facts.nonneg(lo) for lo in r.lo)

    def bounds_of_name(self, name: str, guarded: bool = True) -> Range:
        scope = self.scope
        if name in scope.sizes:
            form = scope.sizes[name]
            return Range([form], [form])
        r = Range()
        if name in scope.values:
            got = self.bounds(scope.values[name])
            r = got if isinstance(got, Range) else Range()
        elif name in scope.counters:
            r = self._counter_low(scope.counters[name])
        his = self.guards.get(name, []) if guarded else []
        los = self.lows.get(name, []) if guarded else []
        return Range(list(r.lo) + los, list(r.hi) + his)

    def _counter_low(self, decl: Node) -> Range:
        """A counter that only counts up stays at or above its start (signed: overflow is undefined);
        an unsigned one may wrap past its type's end, so only ``>= 0`` is kept for it."""
        init = decl.child_by_field_name("value")
        start = self.bounds(init) if init is not None else "no start"
        if isinstance(start, str):
            return Range()
        if decl.parent is not None and is_unsigned_type(_cuda.element_type(decl.parent)):
            return Range([_affine.const(0)], []) if self._nonneg(start) else Range()
        return Range(list(start.lo), [])

    def bounds(self, node: Node) -> Range | str:
        """The bounds of ``node``, or why they are unknown."""
        node = _strip_int_casts(node)
        if node.type == "number_literal":
            value = _literal(_cuda.text(node))
            return Range([_affine.const(value)], [_affine.const(value)]) if value is not None else "a literal"
        if node.type == "identifier":
            return self.bounds_of_name(_cuda.text(node))
        axis = _cuda.builtin_axis(node)
        if axis is not None:
            low = 0 if axis[0] in ("threadIdx", "blockIdx") else 1
            return Range([_affine.const(low)], [])
        if node.type == "binary_expression":
            return self._binary(node)
        return f"'{_cuda.text(node)}' is not index arithmetic"

    def _binary(self, node: Node) -> Range | str:
        op = operator(node)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or op not in ("+", "-", "*", "/", "%"):
            return f"'{_cuda.text(node)}' is not index arithmetic"
        a = self.bounds(left)
        if isinstance(a, str):
            return a
        if op == "-" and self._minus_own_remainder(left, right):
            return Range([_affine.const(0)], list(a.hi)) if self._nonneg(a) else "a negative dividend"
        if op == "-" and (kept := _cancelled(left, right, self.scope.values)) is not None:
            return self.bounds(kept)  # a - (a - X) is X: the column of a flat index, from its row start
        b = self.bounds(right)
        if isinstance(b, str):
            return b
        if op == "+":
            return Range(_sums(a.lo, b.lo), _sums(a.hi, b.hi))
        if op == "-":
            return Range(
                _sums(a.lo, [_affine.scale(h, -1) for h in b.hi]),
                _sums(a.hi, [_affine.scale(x, -1) for x in b.lo]),
            )
        if op == "*":
            return self._product(a, b)
        return self._division(op, a, right)

    def _nonneg(self, r: Range) -> bool:
        return any(self.facts.nonneg(lo) for lo in r.lo)

    def _product(self, a: Range, b: Range) -> Range | str:
        if not (self._nonneg(a) and self._nonneg(b)):
            return "a product of values that may be negative"
        # a product of lower bounds bounds the product only where both are >= 0 themselves
        lows = [(x, y) for x, y in product(a.lo, b.lo) if self.facts.nonneg(x) and self.facts.nonneg(y)]
        lo = [p for x, y in lows if (p := _affine.mul(x, y)) is not None] or [_affine.const(0)]
        hi = [p for x, y in product(a.hi, b.hi) if (p := _affine.mul(x, y)) is not None]
        return Range(lo, hi)

    def _division(self, op: str, a: Range, divisor: Node) -> Range | str:
        d = self.exact(divisor)
        if d is None:
            return f"the divisor '{_cuda.text(divisor)}' is not a size"
        if not self.facts.positive(d):
            return f"the divisor '{_cuda.text(divisor)}' is not provably >= 1"
        if not self._nonneg(a):
            return "the dividend is not provably >= 0"
        if op == "%":
            return Range([_affine.const(0)], [_affine.add(d, _affine.const(-1))])
        # a < d * q (hi = d * q - 1) gives a / d < q: the row of a flat index below W * H is below H
        rows = [
            _affine.add(q, _affine.const(-1))
            for h in a.hi
            if (q := _affine.quotient(_affine.add(h, _affine.const(1)), d))
        ]
        return Range([_affine.const(0)], rows + list(a.hi))

    def _minus_own_remainder(self, left: Node, right: Node) -> bool:
        """``a - a % D`` (the remainder maybe through a value): the row start, in ``[0, a]``."""
        r = _cuda.strip(right)
        if (name := ident(r)) is not None and name in self.scope.values:
            r = _cuda.strip(self.scope.values[name])
        if r.type != "binary_expression" or operator(r) != "%":
            return False
        dividend = r.child_by_field_name("left")
        return dividend is not None and _same(dividend, left)


def _cancelled(left: Node, right: Node, values: dict[str, Node]) -> Node | None:
    """``X`` when ``right`` (maybe through a value) is ``left - X``."""
    r = _cuda.strip(right)
    if (name := ident(r)) is not None and name in values:
        r = _cuda.strip(values[name])
    if r.type != "binary_expression" or operator(r) != "-":
        return None
    minuend, kept = r.child_by_field_name("left"), r.child_by_field_name("right")
    return kept if minuend is not None and kept is not None and _same(minuend, left) else None


def _same(a: Node, b: Node) -> bool:
    return "".join(_cuda.text(_cuda.strip(a)).split()) == "".join(_cuda.text(_cuda.strip(b)).split())


def _sums(xs: list[FormDict], ys: list[FormDict]) -> list[FormDict]:
    return [_affine.add(x, y) for x, y in product(xs, ys)]


def _strip_int_casts(node: Node) -> Node:
    """Parentheses and casts to integer types (a cast to another type ends the index arithmetic)."""
    while node.type in ("parenthesized_expression", "cast_expression"):
        if node.type == "cast_expression":
            typ = node.child_by_field_name("type")
            if typ is None or not is_integer_type(_cuda.text(typ)) or _narrow(_cuda.text(typ)):
                return node
            value = node.child_by_field_name("value")
        else:
            value = node.named_children[-1] if node.named_children else None
        if value is None:
            return node
        node = value
    return node


def _narrow(typ: str) -> bool:
    """A cast to fewer than 32 bits may change an in-range index: it ends the arithmetic."""
    return any(w in typ for w in ("char", "short", "int8", "int16"))


def _literal(text: str) -> int | None:
    digits = text.rstrip("uUlL")
    try:
        return int(digits, 0)
    except ValueError:
        return None


__all__ = ["Form", "Point", "Range", "Ranges", "is_integer_type", "is_unsigned_type"]
