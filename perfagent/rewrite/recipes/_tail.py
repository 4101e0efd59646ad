"""The shared tail of every recipe: a planned ``Variant`` becomes a ``Candidate``, and re-tuned launches follow.

For each variant, in the order ``plan`` gave them: the edits are applied to the original source and the
result is re-parsed (a tree with ERROR/MISSING nodes, or Python that does not compile, is a bug of the
recipe and raises ``ParseError``); the compile check (``_compile_check``) drops a variant that does not
compile where the original does (its reason goes to the log of the first candidate kept, as a note); the
launch override is carried in ``Candidate.launch`` (the loop copies it into the candidate's launch spec);
duplicates (same source and launch) are dropped; the primaries are cut at ``max_candidates``.

``with_sweeps`` adds, after the primaries, one candidate per swept block size of every variant that
declared a ``Retune`` (see ``framework.Retune``): same new source, block swept, grid re-derived; at most
``max_candidates`` of them (the backend's batch gives them up to half its slots).
"""

from __future__ import annotations

import logging

from perfagent.rewrite.base import RETUNED, Candidate, LaunchContext, make_candidate
from perfagent.rewrite.recipes import _compile_check, _cuda, _launch, _python
from perfagent.rewrite.recipes._variant import Retune, Source, Variant
from perfagent.workloads.launch_spec import Expr, LaunchOverride

_log = logging.getLogger(__name__)
SM_WAVES = (2, 4, 8)
"""Grids of a grid-stride kernel swept by ``Retune.grid_stride``: this many blocks per SM."""


def primaries(recipe: str, src: Source, variants: list[Variant]) -> list[Candidate]:
    """The candidates of ``variants`` (re-parsed, compile-checked, deduplicated), at most ``max_candidates``."""
    return [cand for cand, _ in _built(recipe, src, variants)][: src.request.max_candidates]


def with_sweeps(recipe: str, src: Source, variants: list[Variant]) -> list[Candidate]:
    """``primaries`` followed by the launch sweeps of the variants that changed the work per thread/block."""
    built = _built(recipe, src, variants)
    most = src.request.max_candidates
    primary = [cand for cand, _ in built][:most]
    sweeps: list[Candidate] = []
    for cand, variant in built:
        if variant.retune is not None and src.launch is not None:
            sweeps.extend(_sweeps(recipe, src, cand, variant.retune, src.launch))
    first: dict[str, Candidate] = {}
    # up to ``most`` of each: the backend's batch shares the slots between them (``_batch``), so more
    # primaries than half the batch (cooperative-row's vectorised and scalar variants) keep their sweeps
    for cand in primary + sweeps[:most]:
        first.setdefault(cand.id, cand)
    return list(first.values())


def _built(recipe: str, src: Source, variants: list[Variant]) -> list[tuple[Candidate, Variant]]:
    out: list[tuple[Candidate, Variant]] = []
    seen: set[str] = set()
    dropped: list[str] = []
    for variant in variants:
        source = _materialise(src, variant)
        if src.language == "cuda":
            error = _compile_check.compile_error(src.text, source, tuple(sorted(variant.defines.items())))
            if error is not None:
                _log.info("%s: a variant does not compile and is dropped: %s", recipe, error)
                dropped.append(
                    f"{recipe}: a variant ({variant.description[:60]}...) did not compile: {error}"
                )
                continue
        cand = make_candidate(
            src.request,
            backend="recipes",
            recipe=recipe,
            source=source,
            description=variant.description,
            parameters=dict(variant.parameters),
            defines=dict(variant.defines),
            launch=variant.launch,
            notes=[*variant.notes, *dropped],
        )
        dropped = []
        if cand.id not in seen:
            seen.add(cand.id)
            out.append((cand, variant))
    return out


def _materialise(src: Source, variant: Variant) -> str:
    """The variant's new source, re-parsed (ParseError: the recipe produced something unreadable)."""
    if variant.source is not None:
        if src.language == "cuda":
            _cuda.require_clean(variant.source)
        else:
            _python.apply_edits(variant.source, [])
        return variant.source
    if src.language == "cuda":
        return _cuda.apply_edits(src.text, list(variant.edits))
    return _python.apply_edits(src.text, list(variant.edits))


def _sweeps(
    recipe: str, src: Source, cand: Candidate, retune: Retune, spec: LaunchContext
) -> list[Candidate]:
    """Candidates of ``cand``'s source at re-tuned launches: blocks swept, grid re-derived (x only)."""
    base = cand.launch or LaunchOverride()
    grid: list[Expr] = list(base.grid or spec.grid)
    block: list[Expr] = list(base.block or spec.block)
    current = _launch.value(block[0], spec)
    launches: list[tuple[str, LaunchOverride]] = []
    if retune.grid_stride:
        launches += [
            (f"grid {waves} x sm_count", _override(base, [f"{waves} * sm_count", *grid[1:]], block))
            for waves in SM_WAVES
        ]
    # more work per block wants fewer, larger blocks first; more work per thread, blocks near the current
    order = sorted(retune.blocks, key=lambda b: -b if retune.per == "block" else abs(b - (current or 256)))
    for size in order:
        if size == current or size > retune.max_block or size % retune.multiple:
            continue
        if retune.power_of_two and size & (size - 1):
            continue
        new_grid = list(grid)
        if retune.threads is not None:
            new_grid[0] = _launch.ceil_div(retune.threads, size)
        launches.append((f"block {size}", _override(base, new_grid, [size, *block[1:]])))
    return [_retuned(recipe, src, cand, retune, what, launch) for what, launch in launches]


def _override(base: LaunchOverride, grid: list[Expr], block: list[Expr]) -> LaunchOverride:
    return base.model_copy(update={"grid": grid, "block": block})


def _retuned(
    recipe: str, src: Source, cand: Candidate, retune: Retune, what: str, launch: LaunchOverride
) -> Candidate:
    return make_candidate(
        src.request,
        backend="recipes",
        recipe=recipe,
        source=cand.source,
        description=f"{cand.description}; re-tuned launch ({what}, grid {', '.join(map(str, launch.grid or []))}): "
        f"the rewrite changed the work per {retune.per}",
        parameters={**cand.parameters, RETUNED: what},
        defines=dict(cand.defines),
        launch=launch,
        notes=list(cand.notes),
    )
