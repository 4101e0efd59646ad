"""The in-place Kogge-Stone step, in the spellings ``_block_scan`` accepts (statements whitespace-free).

A step is READ, ``__syncthreads();``, WRITE, with ``t`` the thread index, ``s`` the stride and ``G`` the
guard ``t >= s`` / ``s <= t``; ``op`` one of ``+ * | & ^`` (``op=``, ``x = x op y`` or ``x = y op x``) or a
max/min function ``f(x, y)``:

1. ``if (G) tmp = A[t] op A[t - s];`` then ``if (G) A[t] = tmp;`` (PMPP Fig. 11.3);
2. ``[T tmp = identity;] if (G) tmp = A[t - s];`` then ``if (G) A[t] op= tmp;`` (unguarded when the
   temporary starts at the identity of ``op``);
3. ``T tmp = G ? A[t - s] : identity;`` then ``A[t] op= tmp;``;
4. ``T v = A[t]; if (G) v op= A[t - s];`` then ``A[t] = v;``;
5. ``T v = G ? A[t] op A[t - s] : A[t];`` then ``A[t] = v;``.

Each leaves ``A[t]`` = ``A[t - s] op A[t]`` for ``t >= s`` and ``A[t]`` unchanged otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perfagent.rewrite.recipes._block_scan_db import combination

OPS = {"+": "0", "*": "1", "|": "0", "^": "0", "&": "~0"}
"""Binary combines and the literal that is their identity (what a temporary may start at)."""
FUNCS = ("fmaxf", "fminf", "fmax", "fmin", "max", "min")
BARRIER = "__syncthreads();"
_OP = r"[+*|&^]"
_DECL = r"(?:[\w ]+ )?"
"""An optional declaration type in front of a name (``float v=...``, ``const int v=...``)."""


@dataclass(frozen=True)
class Step:
    """One Kogge-Stone step as written: the temporary and the combine."""

    tmp: str
    combine: str


def _accumulated(stmt: str, target: str, operand: str) -> str | None:
    """The combine when ``stmt`` is ``target op= operand;`` / ``target = target op operand;`` (either
    order) / ``target = f(target, operand);`` (regexes for ``target`` and ``operand``)."""
    m = (
        re.fullmatch(rf"{target}({_OP})={operand};", stmt)
        or re.fullmatch(rf"{target}={target}({_OP}){operand};", stmt)
        or re.fullmatch(rf"{target}={operand}({_OP}){target};", stmt)
    )
    if m:
        return m.group(1)
    f = re.fullmatch(rf"{target}=(\w+)\((?:{target},{operand}|{operand},{target})\);", stmt)
    return f.group(1) if f and f.group(1) in FUNCS else None


def _is_identity(literal: str, combine: str) -> bool:
    """Whether the literal is the identity of ``op`` (``0``, ``0.0f``, ``0u`` for +; ``1`` for *; ``~0`` for &)."""
    if combine not in OPS:
        return False
    if combine == "&":
        return literal in ("~0", "~0u", "0xffffffff", "0xffffffffu", "0xFFFFFFFF", "0xFFFFFFFFu")
    plain = re.sub(r"[uUlL]+$", "", literal)
    try:
        value = (
            float(int(plain, 0))
            if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", plain)
            else float(plain.rstrip("fF"))
        )
    except ValueError:
        return False
    return value == float(OPS[combine])


def _guarded(stmt: str, g: str) -> str | None:
    """The statement inside ``if (G) stmt`` / ``if (G) { stmt }``, or None."""
    m = re.fullmatch(rf"if\({g}\)\{{?(.+;)\}}?", stmt)
    return m.group(1) if m else None


def _forms(read: list[str], write: str, a: str, t: str, s: str) -> Step | None:
    """Forms 1 to 5 of the module docstring; ``a``, ``t``, ``s`` as written (unescaped)."""
    me_txt, nb_txt = f"{a}[{t}]", f"{a}[{t}-{s}]"
    me, nb = re.escape(me_txt), rf"\(?{re.escape(nb_txt)}\)?"
    g = rf"(?:\(?{re.escape(t)}>={s}\)?|\(?{s}<={re.escape(t)}\)?)"
    start = re.fullmatch(rf"{_DECL}(\w+)=\(?([\w.~]+)\)?;", read[0]) if len(read) == 2 else None
    last = read[-1]
    inner = _guarded(last, g)
    assign = re.fullmatch(r"(\w+)=(.+);", inner) if inner else None
    if assign and len(read) == 1:  # forms 1 and 2 without a start value
        tmp, expr = assign.groups()
        combine = combination(expr, me_txt, nb_txt, FUNCS)
        if combine is not None and _guarded(write, g) == f"{me_txt}={tmp};":
            return Step(tmp, combine)
        body = _guarded(write, g)
        combine = _accumulated(body, me, tmp) if body and re.fullmatch(nb, expr) else None
        return Step(tmp, combine) if combine else None
    if assign and start and start.group(1) == assign.group(1) and re.fullmatch(nb, assign.group(2)):
        tmp = assign.group(1)  # form 2 with a start value
        body = _guarded(write, g)
        combine = _accumulated(body or write, me, tmp)
        ok = combine is not None and (body is not None or _is_identity(start.group(2), combine))
        return Step(tmp, combine) if ok and combine else None
    own = re.fullmatch(rf"{_DECL}(\w+)=\(?{me}\)?;", read[0]) if len(read) == 2 else None
    if own and inner and write == f"{me_txt}={own.group(1)};":  # form 4
        combine = _accumulated(inner, re.escape(own.group(1)), nb)
        return Step(own.group(1), combine) if combine else None
    return _ternaries(read, write, me_txt, nb_txt, g) if len(read) == 1 else None


def _ternaries(read: list[str], write: str, me_txt: str, nb_txt: str, g: str) -> Step | None:
    """Forms 3 and 5."""
    me, nb = re.escape(me_txt), rf"\(?{re.escape(nb_txt)}\)?"
    m = re.fullmatch(rf"{_DECL}(\w+)=\(?{g}\)?\?(.+):\(?(.+?)\)?;", read[0])
    if m is None:
        return None
    tmp, taken, other = m.groups()
    if re.fullmatch(nb, taken):  # form 3
        combine = _accumulated(write, me, re.escape(tmp))
        return Step(tmp, combine) if combine and _is_identity(other, combine) else None
    combine = combination(taken, me_txt, nb_txt, FUNCS)  # form 5
    if combine and re.fullmatch(rf"\(?{me}\)?", other) and write == f"{me_txt}={tmp};":
        return Step(tmp, combine)
    return None


def step(core: list[str], a: str, t: str, s: str) -> Step | None:
    """The step when ``core`` is READ (one or two statements), the barrier, WRITE; or None."""
    if core.count(BARRIER) != 1:
        return None
    k = core.index(BARRIER)
    if k not in (1, 2) or len(core) != k + 2:
        return None
    return _forms(core[:k], core[k + 1], a, t, s)
