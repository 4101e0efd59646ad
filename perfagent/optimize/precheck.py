"""Check before it travels: ``--propose-only`` compiles each proposal on the proposing machine.

A proposal that cannot build costs the GPU machine a build and a verdict it could have been spared. So
before a proposal is written: a launch-spec ``.cu`` kernel is compiled with nvcc (``-cubin`` for the
target's architecture, the spec's and the candidate's ``-D`` macros), a Python file is parsed; a failure
goes back to the model as a repair (its compiler's first lines), at most ``--repairs`` times. A ``load_inline``
ModelNew's C++ needs torch's CUDA headers and a CUDA build of torch to compile; where this machine lacks
one, the proposal says it was not compiled here. Nothing is run.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from perfagent.optimize.events import Info
from perfagent.optimize.loop_state import Origin, merged
from perfagent.rewrite.base import Candidate, RewriteRequest
from perfagent.rewrite.prompt import first_lines
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.build import compile_cubin
from profilers.core_errors import BadInput, LLMError
from profilers.errors import ProfilerError, ProfilerUnavailable

__all__ = ["CheckHere", "Checked", "Precheck", "check_and_repair", "precheck"]

RepairFn = Callable[..., Candidate]
"""``Rewriter.repair(request, candidate, feedback, round_=N)``."""


@dataclass(frozen=True)
class Precheck:
    """What compiling a proposal here said."""

    ok: bool | None
    """True: it built (or parsed); False: it did not (``detail`` is the compiler's output); None: not
    checked here (``detail`` says why)."""
    detail: str


def precheck(
    wl: OptimizeWorkload, source: str, defines: dict[str, int], *, arch: str, timeout_s: float
) -> Precheck:
    """Compile (CUDA) or parse (Python) ``source`` as the proposal for ``wl``; never runs it."""
    if wl.language != "cuda":
        return _python(source)
    if wl.spec_path is None:
        return Precheck(None, "not compiled here: no launch spec")
    if shutil.which("nvcc") is None:
        return Precheck(None, "not compiled here: nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="perfagent-precheck-") as tmp:
        path = Path(tmp) / "candidate.cu"
        path.write_text(source, encoding="utf-8")
        try:
            resolved = resolve_launch(load_launch_spec(wl.spec_path), wl.spec_path, source=path)
        except BadInput as exc:
            return Precheck(False, f"cannot launch it through the spec: {exc.message}")
        macros = {**resolved.defines, **defines}
        flags = [f"-D{k}={v}" for k, v in macros.items()]
        try:
            compile_cubin(path, path.with_suffix(".cubin"), arch, timeout_s, flags)
        except ProfilerUnavailable as exc:
            return Precheck(None, f"not compiled here: {exc.message}")
        except ProfilerError as exc:
            return Precheck(False, exc.message.replace(str(path.parent) + "/", ""))
    return Precheck(True, f"compiled here: nvcc -cubin -arch={arch} {' '.join(flags)}".strip())


def _python(source: str) -> Precheck:
    try:
        compile(source, "candidate.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Precheck(False, f"does not parse as Python (line {exc.lineno}: {exc.msg})")
    if "load_inline" in source:
        return Precheck(
            None,
            "parsed here; its load_inline C++/CUDA is not compiled here (that needs a CUDA build of torch): "
            "the GPU machine builds it",
        )
    return Precheck(True, "parsed here (Python)")


@dataclass(frozen=True)
class Checked:
    """A proposal after its check here: the candidate to write (repaired when it had to be) and whether
    it built in the end (False: every repair failed too; ``detail`` is the last compiler output)."""

    candidate: Candidate
    ok: bool | None
    detail: str
    repairs: int = 0


@dataclass(frozen=True)
class CheckHere:
    """What a proposal is checked against on the proposing machine: the workload it rewrites, the
    architecture and time limit of its build, and how many repairs a failing build may ask for."""

    wl: OptimizeWorkload
    arch: str
    timeout_s: float
    """Limit of one build, s."""
    repairs: int


def check_and_repair(
    check_here: CheckHere,
    request: RewriteRequest | None,
    cand: Candidate,
    origin: Origin,
    *,
    repair: RepairFn | None,
    tell: Callable[..., None],
    llm_errors: list[str],
) -> Checked:
    """Compile ``cand`` here; while it does not build, ask ``repair`` (the llm's) with the compiler's first
    lines, at most ``check_here.repairs`` times, as a repair of ``request``. Notes on the candidate say what
    was checked; ``tell`` hears each repair asked for, ``llm_errors`` keeps a failed one."""
    wl, arch = check_here.wl, check_here.arch
    limit = check_here.repairs if repair is not None and request is not None and cand.backend == "llm" else 0
    spent = cand.tokens
    for round_ in range(limit + 1):
        defines, _ = merged(cand, origin)
        check = precheck(wl, cand.source, defines, arch=arch, timeout_s=check_here.timeout_s)
        if check.ok is not False or round_ == limit:
            note = (
                check.detail
                if check.ok is not False
                else f"does not compile here: {first_lines(check.detail, 3)}"
            )
            if round_:
                note += f" (after {round_} repair(s) of compile errors here)"
            cand = cand.model_copy(update={"notes": [*cand.notes, note], "tokens": spent})
            return Checked(cand, check.ok, check.detail, round_)
        tell(
            Info,
            f"{cand.transform}: does not compile here; asking for a repair ({round_ + 1} of {limit}) before "
            "it is written",
            transform=cand.transform,
        )
        feedback = "It does not compile. The compiler's first errors:\n" + first_lines(check.detail)
        assert repair is not None and request is not None
        try:
            cand = repair(request, cand, feedback, round_=round_ + 1)
        except LLMError as exc:
            llm_errors.append(str(exc))
            note = f"does not compile here, and the repair failed: {exc}"
            return Checked(
                cand.model_copy(update={"notes": [*cand.notes, note]}), False, check.detail, round_
            )
        spent = (
            (spent + cand.tokens) if spent is not None and cand.tokens is not None else cand.tokens or spent
        )
    raise AssertionError("unreachable")  # pragma: no cover
