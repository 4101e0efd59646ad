"""Recipe ``grid-swizzle``: grouped program-id ordering for L2 reuse in Triton kernels.

Precondition (Python ``ast``): a ``@triton.jit`` function holding, in one statement list,
``A = pid // D`` and ``B = pid % D`` where ``pid`` is assigned ``tl.program_id(...)``, ``D`` is a name
assigned ``tl.cdiv(...)`` (the number of program ids along B) and another ``tl.cdiv`` name gives the
count along A (``num_pid_m`` next to ``num_pid_n``), and no grouped ordering yet (no ``group_id`` /
``GROUP`` name in the function). Both statements are replaced by the Triton tutorial's grouped form::

    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

with GROUP_M a literal (8, then 4, 16) held in a local name, so that neither the kernel's signature nor
its launches change. The mapping stays a bijection over the grid (group_size_m shrinks the last group).

A kernel that already has the grouped form, driven by a ``GROUP_M`` / ``GROUP_SIZE_M`` constexpr that
every launch in the source sets to 1 (an integer literal, or a name bound to one), gets that value
raised to 8 / 4 / 16 instead.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from perfagent.rewrite.recipes import _python
from perfagent.rewrite.recipes._python import SourceMap
from perfagent.rewrite.recipes.framework import Edit, PythonRecipe, Source, Variant, collect, register

NAME = "grid-swizzle"
GROUP_SIZES = (8, 4, 16)


@dataclass(frozen=True)
class _Site:
    kernel: str
    first: ast.Assign
    """The earlier of the two assignments (replaced by the grouped block)."""
    second: ast.Assign
    """The later one (deleted)."""
    outer: str
    """A: the index that is grouped (pid // D)."""
    inner: str
    """B: the index that runs fastest (pid % D)."""
    pid: str
    count_inner: str
    """D."""
    count_outer: str
    names_in_use: frozenset[str]


def _binop_of(stmt: ast.stmt, op: type[ast.operator]) -> tuple[str, str, str] | None:
    """(target, left name, right name) of ``target = left <op> right`` with plain names."""
    if not (
        isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    ):
        return None
    value = stmt.value
    if (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, op)
        and isinstance(value.left, ast.Name)
        and isinstance(value.right, ast.Name)
    ):
        return stmt.targets[0].id, value.left.id, value.right.id
    return None


def _assigned_from(fn: ast.FunctionDef, suffix: str) -> dict[str, ast.Assign]:
    """Names assigned a call to something ending in ``suffix`` (tl.cdiv, tl.program_id)."""
    out: dict[str, ast.Assign] = {}
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and _python.dotted(node.value).endswith(suffix)
        ):
            out[node.targets[0].id] = node
    return out


def _bodies(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    out = [fn.body]
    for node in ast.walk(fn):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if node is not fn and isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                out.append(block)
    return out


def _find(fn: ast.FunctionDef) -> _Site | str:
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    if any("group" in n.lower() for n in names):
        return f"{fn.name} already has grouped ordering code (a GROUP/group name is present)"
    pids = _assigned_from(fn, "program_id")
    counts = _assigned_from(fn, "cdiv")
    if len(pids) > 1:
        return f"{fn.name} reads several program ids (a 2-D or 3-D grid): grouping needs a 1-D grid"
    for body in _bodies(fn):
        divs = {}
        mods = {}
        for index, stmt in enumerate(body):
            d = _binop_of(stmt, ast.FloorDiv)
            m = _binop_of(stmt, ast.Mod)
            if d and d[1] in pids:
                divs[(d[1], d[2])] = (index, stmt, d[0])
            if m and m[1] in pids:
                mods[(m[1], m[2])] = (index, stmt, m[0])
        for key in divs.keys() & mods.keys():
            pid, count_inner = key
            if count_inner not in counts:
                return f"{fn.name}: the divisor {count_inner} is not assigned tl.cdiv(...) in the kernel"
            others = [c for c in counts if c != count_inner]
            if not others:
                return f"{fn.name}: no tl.cdiv count of program ids along the other axis (e.g. num_pid_m = tl.cdiv(M, BLOCK_M))"
            guess = count_inner[:-1] + {"n": "m", "m": "n"}.get(count_inner[-1:], "")
            count_outer = guess if guess in others else others[0]
            (i_div, s_div, outer), (i_mod, s_mod, inner) = divs[key], mods[key]
            first, second = (s_div, s_mod) if i_div < i_mod else (s_mod, s_div)
            assert isinstance(first, ast.Assign) and isinstance(second, ast.Assign)
            if (first.end_lineno or first.lineno) >= second.lineno:
                return f"{fn.name}: the two program-id statements share a line; put each on its own line"
            return _Site(
                fn.name, first, second, outer, inner, pid, count_inner, count_outer, frozenset(names)
            )
    if not pids:
        return f"{fn.name} does not call tl.program_id"
    return f"{fn.name} has no 'pid_m = pid // num_pid_n' / 'pid_n = pid % num_pid_n' pair to regroup"


@dataclass(frozen=True)
class _GroupKnob:
    """A kernel that already computes grouped ordering from a GROUP constexpr its launches set to 1."""

    kernel: str
    param: str
    spans: tuple[tuple[int, int], ...]
    """Byte ranges of the integer literals that set it (launch keyword or a bound name)."""
    where: str


def _group_knob(tree: ast.Module, fn: ast.FunctionDef, smap: SourceMap) -> _GroupKnob | str | None:
    """The GROUP parameter to raise, a reason it cannot be, or None when the kernel has none."""
    param = next(
        (p for p in _python.constexpr_params(fn) if re.fullmatch(r"GROUP(?:_SIZE)?(?:_M)?", p.upper())), None
    )
    if param is None:
        return None
    sites = [_python.keyword_int_site(tree, call, param) for call in _python.launches_of(tree, fn.name)]
    if not sites:
        return f"{fn.name} takes {param} but no launch in this source sets it"
    if any(site is None for site in sites):
        return f"{fn.name}: a launch sets {param} to something other than an integer literal"
    found = [site for site in sites if site is not None]
    if all(value > 1 for value, _, _ in found):
        return f"{fn.name} already groups program ids ({param} = {found[0][0]})"
    spans = tuple(dict.fromkeys(smap.span(node) for _, node, _ in found))
    return _GroupKnob(fn.name, param, spans, "; ".join(where for _, _, where in found))


_Found = tuple[list[_Site | _GroupKnob], list[str]]


def _scan(src: Source) -> _Found | str:
    request, tree = src.request, src.module
    fns = [fn for fn in _python.jit_functions(tree) if request.kernel is None or fn.name == request.kernel]
    if not fns:
        return (
            "no @triton.jit kernel"
            + (f" named {request.kernel}" if request.kernel else "")
            + " in the source"
        )
    return collect(_site(tree, fn, src.smap) for fn in fns)


def _site(tree: ast.Module, fn: ast.FunctionDef, smap: SourceMap) -> _Site | _GroupKnob | str:
    knob = _group_knob(tree, fn, smap)
    return knob if knob is not None else _find(fn)


def _unique(base: str, used: frozenset[str]) -> str:
    name, i = base, 2
    while name in used:
        name, i = f"{base}_{i}", i + 1
    return name


def _block(site: _Site, group: int, indent: str) -> str:
    used = site.names_in_use
    g = _unique("GROUP_M", used)
    in_group = _unique("num_pid_in_group", used)
    group_id = _unique("group_id", used)
    first = _unique(f"first_{site.outer}", used)
    size = _unique("group_size", used)
    lines = [
        f"{g} = {group}",
        f"{in_group} = {g} * {site.count_inner}",
        f"{group_id} = {site.pid} // {in_group}",
        f"{first} = {group_id} * {g}",
        f"{size} = min({site.count_outer} - {first}, {g})",
        f"{site.outer} = {first} + (({site.pid} % {in_group}) % {size})",
        f"{site.inner} = ({site.pid} % {in_group}) // {size}",
    ]
    return "".join(f"{indent}{line}\n" for line in lines)


class _GridSwizzle(PythonRecipe[_Found]):
    name = NAME
    transforms = ("grid-swizzle",)
    summary = "rewrite pid_m = pid // num_pid_n; pid_n = pid % num_pid_n into grouped (GROUP_M) ordering"
    wrong_language = (
        "grid-swizzle (recipe) edits Triton kernels; for CUDA remap blockIdx by hand (llm backend)"
    )

    def match(self, src: Source) -> _Found | str:
        """The kernels whose program ids can be regrouped (or whose GROUP can be raised from 1), or why none."""
        return _scan(src)

    def plan(self, src: Source, m: _Found) -> list[Variant]:
        sites, reasons = m
        smap = src.smap
        kernels = ", ".join(s.kernel for s in sites)
        out = []
        for group in GROUP_SIZES[: src.request.max_candidates]:
            edits: list[Edit] = []
            for site in sites:
                if isinstance(site, _GroupKnob):
                    edits.extend(Edit(start, end, str(group)) for start, end in site.spans)
                    continue
                start, end = smap.line_span(site.first)
                edits.append(Edit(start, end, _block(site, group, smap.indent(site.first))))
                edits.append(Edit(*smap.line_span(site.second), ""))
            how = "; ".join(
                f"set {s.param} from 1 to {group} ({s.where})"
                if isinstance(s, _GroupKnob)
                else f"regroup {s.outer}/{s.inner} of {s.kernel}"
                for s in sites
            )
            out.append(
                Variant(
                    edits=edits,
                    description=(
                        f"Group program ids of {kernels} in bands of {group} row tiles so that concurrently running programs "
                        f"share operand tiles in L2 (Triton tutorial ordering): {how}."
                    ),
                    parameters={"GROUP_M": group, "kernels": kernels},
                    notes=[f"not changed: {r}" for r in reasons],
                )
            )
        return out


RECIPE = register(_GridSwizzle())
applies, propose = RECIPE.applies, RECIPE.propose
