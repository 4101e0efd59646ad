"""Recipe ``triton-config``: sweep a Triton kernel's BLOCK sizes, ``num_warps`` and ``num_stages``.

Knobs found with Python ``ast`` (every edit is a byte range of an ``ast`` node):

- the ``triton.Config`` list of an ``@triton.autotune`` decorator (inline, or a module-level list the
  decorator names): each candidate pins it to one standard configuration not already in it (the loop
  measures every candidate; a one-entry list also runs under the CPU interpreter);
- keyword arguments of a kernel launch ``kernel[grid](..., BLOCK_M=64, num_warps=4)`` that are integer
  literals, or names bound to an integer literal in the launching function or at module level
  (``BLOCK_SIZE = 1024``); ``num_warps`` / ``num_stages`` are added to the launch when absent.

Roles come from the meta-parameter names: BLOCK_M / BLOCK_SIZE_M / BM (and N, K), BLOCK_SIZE / BLOCK /
XBLOCK (1-D). Values: the Triton matmul tutorial's configurations when M, N and K are present,
square-ish 2-D tiles for M and N, 256 to 4096 for 1-D blocks, and warps/stages alone otherwise. Integer
literals equal to a changed value inside the launch's grid expression change with it (a grid written
as ``triton.cdiv(n, 1024)`` next to ``BLOCK_SIZE=1024``); an ambiguous literal drops that configuration.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.recipes import _python
from perfagent.rewrite.recipes._python import SourceMap
from perfagent.rewrite.recipes.framework import Edit, PythonRecipe, Source, Variant, register

NAME = "triton-config"
Point = dict[str, int]
"""A configuration: role -> value (roles 'm', 'n', 'k', '1d', 'num_warps', 'num_stages')."""

MATMUL_POINTS: list[Point] = [
    {"m": 128, "n": 256, "k": 64, "num_warps": 8, "num_stages": 3},
    {"m": 64, "n": 256, "k": 32, "num_warps": 4, "num_stages": 4},
    {"m": 128, "n": 128, "k": 32, "num_warps": 4, "num_stages": 4},
    {"m": 128, "n": 64, "k": 32, "num_warps": 4, "num_stages": 4},
    {"m": 64, "n": 128, "k": 32, "num_warps": 4, "num_stages": 4},
    {"m": 128, "n": 32, "k": 32, "num_warps": 4, "num_stages": 4},
    {"m": 64, "n": 32, "k": 32, "num_warps": 2, "num_stages": 5},
    {"m": 32, "n": 64, "k": 32, "num_warps": 2, "num_stages": 5},
]
"""The Triton matmul tutorial's CUDA configurations (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages)."""
TILE_POINTS: list[Point] = [
    {"m": 64, "n": 64, "num_warps": 4},
    {"m": 128, "n": 64, "num_warps": 4},
    {"m": 64, "n": 128, "num_warps": 4},
    {"m": 128, "n": 128, "num_warps": 8},
    {"m": 32, "n": 32, "num_warps": 2},
]
BLOCK_1D_POINTS: list[Point] = [
    {"1d": 1024, "num_warps": 4},
    {"1d": 2048, "num_warps": 8},
    {"1d": 4096, "num_warps": 8},
    {"1d": 8192, "num_warps": 16},
    {"1d": 512, "num_warps": 4},
    {"1d": 256, "num_warps": 2},
]
WARP_POINTS: list[Point] = [
    {"num_warps": 4, "num_stages": 3},
    {"num_warps": 8, "num_stages": 3},
    {"num_warps": 4, "num_stages": 4},
    {"num_warps": 2, "num_stages": 2},
]
LAUNCH_OPTIONS = ("num_warps", "num_stages")
TRITON_DEFAULTS = {"num_warps": 4, "num_stages": 3}
"""What Triton uses when a launch does not say (NVIDIA backend): inserting these changes nothing."""


def role_of(name: str) -> str | None:
    """The sweep role of a meta-parameter name, or None when it is not swept."""
    upper = name.upper()
    if upper in ("NUM_WARPS", "NUM_STAGES"):
        return upper.lower()
    match = re.fullmatch(r"(?:BLOCK|BLK|TILE)(?:_?SIZE)?_?([MNK])|B([MNK])", upper)
    if match:
        return (match.group(1) or match.group(2)).lower()
    if re.fullmatch(r"(?:X|R)?BLOCK(?:_?SIZE)?(?:_X)?|TILE(?:_SIZE)?", upper):
        return "1d"
    return None


@dataclass
class _Site:
    """Where one role's value is written in the source."""

    role: str
    name: str
    """The meta-parameter name (the launch keyword)."""
    value: int
    """Current value (Triton's default when absent from the launch)."""
    span: tuple[int, int] | None
    """Byte range of the literal to replace (None: absent, insert a keyword)."""
    where: str


@dataclass
class _Launch:
    kernel: str
    call: ast.Call
    sites: dict[str, _Site] = field(default_factory=dict)
    fixed: set[str] = field(default_factory=set)
    """Roles the launch sets with a run-time expression (never swept)."""
    grid_exprs: list[ast.AST] = field(default_factory=list)
    insert_at: int = 0
    """Byte offset after the launch's last argument (where missing keywords go)."""


@dataclass
class _Autotune:
    kernel: str
    configs: ast.List
    keys: dict[str, str]
    """role -> meta-parameter name used by the existing configs or the kernel."""
    existing: list[Point]


_Found = tuple[list[_Launch], list[_Autotune]]


def _scan(src: Source) -> _Found | str:
    request, tree, smap = src.request, src.module, src.smap
    jit = {fn.name: fn for fn in _python.jit_functions(tree)}
    if request.kernel is not None:
        jit = {k: v for k, v in jit.items() if k == request.kernel}
    if not jit:
        return (
            "no @triton.jit kernel"
            + (f" named {request.kernel}" if request.kernel else "")
            + " in the source"
        )
    module_consts = _python.assignments(tree.body)
    autotunes = _autotunes(jit.values(), module_consts)
    autotuned = {a.kernel for a in autotunes}
    launches: list[_Launch] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            continue
        kname = _python.dotted(node.func.value).split(".")[-1]
        if kname in jit and kname not in autotuned:
            launches.append(_launch(tree, smap, node, jit[kname], module_consts))
    if not launches and not autotunes:
        return (
            "no tunable launch found: no kernel[grid](...) launch with integer BLOCK/num_warps keyword arguments "
            "(or names bound to integer literals) and no @triton.autotune config list"
        )
    return launches, autotunes


def _autotunes(kernels: Iterable[ast.FunctionDef], module_consts: dict[str, ast.Assign]) -> list[_Autotune]:
    """The ``triton.Config`` lists of the kernels' ``@triton.autotune`` decorators (inline or named)."""
    autotunes: list[_Autotune] = []
    for fn in kernels:
        for deco in fn.decorator_list:
            if not (_python.is_autotune(deco) and isinstance(deco, ast.Call)):
                continue
            configs = next(
                (kw.value for kw in deco.keywords if kw.arg == "configs"), deco.args[0] if deco.args else None
            )
            if isinstance(configs, ast.Name) and configs.id in module_consts:
                configs = module_consts[configs.id].value
            if isinstance(configs, ast.List):
                keys, existing = _existing_configs(configs, _python.constexpr_params(fn))
                autotunes.append(_Autotune(fn.name, configs, keys, existing))
    return autotunes


def _launch(
    tree: ast.Module,
    smap: SourceMap,
    node: ast.Call,
    kernel: ast.FunctionDef,
    module_consts: dict[str, ast.Assign],
) -> _Launch:
    """One ``kernel[grid](...)`` launch: its swept keyword sites (Triton's defaults for absent launch
    options), the grid expression and where missing keywords go."""
    assert isinstance(node.func, ast.Subscript)
    kname = kernel.name
    launch = _Launch(kname, node)
    enclosing = _python.enclosing_function(tree, node)
    local_consts = _python.assignments(enclosing.body) if enclosing is not None else {}
    params = set(_python.constexpr_params(kernel))
    for kw in node.keywords:
        role = role_of(kw.arg) if kw.arg is not None else None
        if kw.arg is None or role is None or (kw.arg not in params and kw.arg not in LAUNCH_OPTIONS):
            continue
        site = _python.keyword_int_site(tree, node, kw.arg)
        if site is None:
            launch.fixed.add(role)  # computed at run time: left alone
            continue
        value, holder, where = site
        launch.sites[role] = _Site(role, kw.arg, value, smap.span(holder), where)
    for option in LAUNCH_OPTIONS:
        if option not in launch.sites and option not in launch.fixed:
            where = f"{kname} launch at line {node.lineno} (default {TRITON_DEFAULTS[option]})"
            launch.sites[option] = _Site(option, option, TRITON_DEFAULTS[option], None, where)
    grid = node.func.slice
    launch.grid_exprs = [grid]
    if isinstance(grid, ast.Name):
        bound = local_consts.get(grid.id) or module_consts.get(grid.id)
        if bound is not None:
            launch.grid_exprs = [bound.value]
    last = max(
        [*node.args, *[kw.value for kw in node.keywords]],
        key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0),
        default=None,
    )
    launch.insert_at = smap.span(last)[1] if last is not None else smap.span(node)[1] - 1
    return launch


def _existing_configs(configs: ast.List, params: list[str]) -> tuple[dict[str, str], list[Point]]:
    keys: dict[str, str] = {}
    existing: list[Point] = []
    for name in params:
        role = role_of(name)
        if role is not None:
            keys.setdefault(role, name)
    for elt in configs.elts:
        if not isinstance(elt, ast.Call) or not _python.dotted(elt).endswith("Config"):
            continue
        point: Point = {}
        if elt.args and isinstance(elt.args[0], ast.Dict):
            for k, v in zip(elt.args[0].keys, elt.args[0].values, strict=False):
                if (
                    isinstance(k, ast.Constant)
                    and isinstance(k.value, str)
                    and _python.int_value(v) is not None
                ):
                    role = role_of(k.value)
                    if role is not None:
                        keys.setdefault(role, k.value)
                        point[role] = _python.int_value(v) or 0
        for kw in elt.keywords:
            if kw.arg in LAUNCH_OPTIONS and _python.int_value(kw.value) is not None:
                point[kw.arg] = _python.int_value(kw.value) or 0
        existing.append(point)
    return keys, existing


def _points_for(roles: set[str]) -> list[Point]:
    if {"m", "n", "k"} <= roles:
        return MATMUL_POINTS
    if {"m", "n"} <= roles:
        return TILE_POINTS
    if "1d" in roles:
        return BLOCK_1D_POINTS
    return WARP_POINTS


def _launch_candidate(
    request: RewriteRequest, launch: _Launch, point: Point, smap: SourceMap
) -> tuple[str, dict[str, int]] | str:
    """(new source, parameters) for one configuration of one launch, or why it was dropped."""
    edits: list[Edit] = []
    params: dict[str, int] = {}
    changes: dict[int, set[int]] = {}
    inserts: list[str] = []
    for role, value in point.items():
        site = launch.sites.get(role)
        if site is None:
            continue
        params[site.name] = value
        if site.value == value:
            continue
        if site.span is None:
            inserts.append(f"{site.name}={value}")
            continue
        edits.append(Edit(site.span[0], site.span[1], str(value)))
        changes.setdefault(site.value, set()).add(value)
    if not edits and not inserts:
        return "same as the current configuration"
    site_spans = {e.start for e in edits}
    for expr in launch.grid_exprs:
        for node in ast.walk(expr):
            v = _python.int_value(node)
            if v is None or v not in changes or not hasattr(node, "lineno"):
                continue
            start, end = smap.span(node)
            if start in site_spans:
                continue
            if len(changes[v]) > 1:
                return f"the grid holds the literal {v}, shared by meta-parameters that change differently"
            edits.append(Edit(start, end, str(next(iter(changes[v])))))
    if inserts:
        edits.append(Edit(launch.insert_at, launch.insert_at, ", " + ", ".join(inserts)))
    try:
        return _python.apply_edits(request.source, edits), params
    except (_python.ParseError, ValueError) as exc:
        return str(exc)


def _autotune_candidates(
    request: RewriteRequest, tune: _Autotune, smap: SourceMap
) -> list[tuple[str, dict[str, int]]]:
    """(new source, parameters) per standard configuration not already in the list.

    Each replaces the config list with that one configuration: the optimize loop measures every
    candidate itself (and a one-entry list needs no run-time benchmarking, so it also runs under the
    CPU interpreter, whose autotuner cannot benchmark).
    """
    roles = set(tune.keys) - set(LAUNCH_OPTIONS)
    out = []
    for point in _points_for(roles):
        meta = {role: v for role, v in point.items() if role in tune.keys and role not in LAUNCH_OPTIONS}
        options = {k: v for k, v in point.items() if k in LAUNCH_OPTIONS}
        full: Point = {**meta, **options}
        if any(full == {k: e.get(k) for k in full} for e in tune.existing):
            continue
        body = ", ".join(f"{tune.keys[r]!r}: {v}" for r, v in meta.items())
        opts = ", ".join(f"{k}={v}" for k, v in options.items())
        start, end = smap.span(tune.configs)
        new = f"[triton.Config({{{body}}}{', ' + opts if opts else ''})]"
        try:
            source = _python.apply_edits(request.source, [Edit(start, end, new)])
        except (_python.ParseError, ValueError):
            continue
        out.append((source, {**{tune.keys[r]: v for r, v in meta.items()}, **options}))
    return out


def _autotune_variants(src: Source, autotunes: list[_Autotune]) -> list[Variant]:
    return [
        Variant(
            source=source,
            description=f"Pin the @triton.autotune list of {tune.kernel} to the single configuration "
            f"{', '.join(f'{k}={v}' for k, v in params.items())}.",
            parameters={"kernel": tune.kernel, **params},
            notes=[
                f"replaces the {len(tune.configs.elts)}-entry autotune list: one configuration for every "
                "autotune key (the original list could pick per key)"
            ],
        )
        for tune in autotunes
        for source, params in _autotune_candidates(src.request, tune, src.smap)
    ]


def _launch_variants(src: Source, launches: list[_Launch], most: int) -> list[Variant]:
    out: list[Variant] = []
    dropped: list[str] = []
    seen: set[str] = set()
    uses_dot = "tl.dot" in src.text or ".dot(" in src.text
    for launch in launches:
        roles = {r for r in launch.sites if r not in LAUNCH_OPTIONS}
        for point in _points_for(roles):
            if len(out) >= most:
                break
            if uses_dot and any(point.get(r, 16) < 16 for r in ("m", "n", "k")):
                continue
            built = _launch_candidate(src.request, launch, point, src.smap)
            if isinstance(built, str):
                dropped.append(f"{point}: {built}")
                continue
            source, params = built
            if source in seen:
                continue
            seen.add(source)
            out.append(
                Variant(
                    source=source,
                    description=f"Launch {launch.kernel} with {', '.join(f'{k}={v}' for k, v in params.items())}.",
                    parameters={"kernel": launch.kernel, **params},
                    notes=[f"dropped: {d}" for d in dropped[-3:]],
                )
            )
    return out


class _TritonConfig(PythonRecipe[_Found]):
    name = NAME
    transforms = ("launch-config",)
    summary = "sweep Triton BLOCK sizes / num_warps / num_stages in launch keywords, constants or the autotune config list"
    wrong_language = "the triton-config recipe edits Python sources with @triton.jit kernels"

    def match(self, src: Source) -> _Found | str:
        return _scan(src)

    def plan(self, src: Source, m: _Found) -> list[Variant]:
        """One configuration each: the autotune lists pinned, then the launches, in the standard grids' order."""
        launches, autotunes = m
        most = src.request.max_candidates
        pinned = _autotune_variants(src, autotunes)[:most]
        return pinned + _launch_variants(src, launches, most - len(pinned))


RECIPE = register(_TritonConfig())
applies, propose = RECIPE.applies, RECIPE.propose
