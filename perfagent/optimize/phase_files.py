"""The run folder of a two-machine run: finding the target again, checking it is unchanged, the proposals.

``--propose-only`` writes proposals into ``RUN/proposals/``; ``--evaluate RUN`` and ``--from RUN`` read the
run back on another machine (paths recorded there are moved into the run folder here), check that the
target is the file the proposals rewrite (its hash), and give the loop what the run measured before.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from perfagent.optimize import reprofile
from perfagent.optimize.loop_state import LoopState, candidate_key, diagnose_one
from perfagent.optimize.repair import NOT_RUN
from perfagent.optimize.run_writer import shown_path
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import CandidateOutcome, PhasesInfo, RunRecord
from perfagent.rewrite.base import RewriteRequest, unified_diff
from perfagent.rewrite.proposals import PROPOSAL_FILE, StoredProposal
from perfagent.session import RECORD_FILE, load_record
from perfagent.target import FileRole, TargetDescription
from perfagent.workloads.optimizable import OptimizeWorkload
from perfagent.workloads.registry import optimize_workload
from profilers.core_errors import BadInput
from profilers.model import KernelDiagnosis, KernelProfile, Profile

PROPOSALS = "proposals"
"""The run folder's sub-folder holding the proposals."""
PROPOSE_DEVICE = "none (--propose-only: nothing is built, run or timed here)"
SETTING_KEYS = ("seeds", "timeout_s", "compile_timeout_s", "runs", "warmup", "arch", "profile_timeout_s")
"""The loop settings a proposals run hands to ``--evaluate`` (the budget comes from the proposals)."""


def evaluate_command(run_dir: Path) -> str:
    return f"perfagent optimize --evaluate {shown_path(run_dir)}"


def proposed_reason(run_dir: Path) -> str:
    return f"{NOT_RUN} (--evaluate {shown_path(run_dir)} on the GPU machine)"


def record_command(wl: OptimizeWorkload) -> str:
    """How to record a report of ``wl`` on the GPU machine, for ``--report``."""
    return wl.report_command(shown_path)


def need_a_diagnosis(wl: OptimizeWorkload) -> None:
    """Raise unless this machine can diagnose ``wl`` without running it (static analysis of a .cu)."""
    if wl.statically_analysable and shutil.which("nvcc") is not None:
        return
    why = (
        "no --report, and static analysis of the .cu needs nvcc, which is not on PATH"
        if wl.statically_analysable
        else f"no --report, and a {wl.kind} target cannot be analysed without running it"
    )
    raise BadInput(
        f"--propose-only has no diagnosis to plan from: {why}",
        hint=f"record a report on the GPU machine ({record_command(wl)}) and pass --report base.ncu-rep, "
        "or name the transforms with --transform ID",
    )


def load_optimize_run(path: Path, option: str) -> RunRecord:
    if not path.is_dir():
        raise BadInput(
            f"{option} {shown_path(path)}: not a run folder",
            hint="pass the folder --propose-only wrote (its --out), copied whole to this machine",
        )
    if not (path / RECORD_FILE).is_file():
        raise BadInput(
            f"{shown_path(path)} is not a run folder (no {RECORD_FILE})",
            hint="pass the folder --propose-only wrote (its --out), copied whole to this machine",
        )
    record = load_record(path)
    if record.kind != "optimize" or record.optimize is None:
        raise BadInput(
            f"{shown_path(path)} holds a {record.kind} run, not an optimize run",
            hint="make proposals with: perfagent optimize TARGET --propose-only --report REPORT --out RUN",
        )
    return record


def _find(*paths: str | Path | None) -> Path | None:
    for p in paths:
        if p and Path(p).is_file():
            return Path(p)
    return None


def run_target(
    record: RunRecord,
    run_dir: Path,
    target: str | Path | None,
    problem: str | Path | None,
    spec: str | Path | None,
    describe: Callable[..., TargetDescription],
) -> OptimizeWorkload:
    """The run's target on this machine: as given, else where it was (absolute, then as typed), resolved
    once by ``describe`` (the run's ``Services.describe``)."""
    assert record.optimize is not None
    info = record.optimize.phases
    stored_file = info.file if info is not None else record.optimize.baseline.file
    stored_typed = info.target if info is not None else record.optimize.target
    name = Path(stored_file).name
    file = Path(target) if target is not None else _find(stored_file, stored_typed)
    if file is None:
        raise BadInput(
            f"the target of {shown_path(run_dir)} is not here: neither {stored_typed} nor {stored_file} exists",
            hint=f"pass its path: perfagent optimize PATH/{name} --evaluate {shown_path(run_dir)} "
            f"(the file as proposed from is {shown_path(run_dir / 'original' / name)})",
        )
    prob: Path | None = Path(problem) if problem is not None else None
    sp: Path | None = Path(spec) if spec is not None else None
    if info is not None and prob is None and info.problem_file:
        prob = _find(info.problem_file, info.problem, file.parent / Path(info.problem_file).name)
        if prob is None:
            raise BadInput(
                f"the KernelBench problem of {shown_path(run_dir)} is not here: {info.problem}",
                hint="pass it with --problem PATH",
            )
    if info is not None and sp is None and info.spec:
        sp = _find(info.spec_file, info.spec, file.parent / Path(info.spec).name)
        if sp is None:
            raise BadInput(
                f"the launch spec of {shown_path(run_dir)} is not here: {info.spec}",
                hint="pass it with --spec PATH",
            )
    return optimize_workload(describe(file, problem=prob, spec=sp))


def check_unchanged(wl: OptimizeWorkload, info: PhasesInfo, run_dir: Path) -> list[str]:
    """Raise when the target changed since the proposals were made; notes for a changed problem or spec."""
    described = wl.description  # hashed when this round resolved the target
    digest = described.sha256(FileRole.PRIMARY) or ""
    if digest != info.file_sha256:
        raise BadInput(
            f"{shown_path(wl.file)} changed since the proposals in {shown_path(run_dir)} were made "
            f"(sha256 {digest[:12]}, proposed from {info.file_sha256[:12]}): they rewrite the file as it was",
            hint=f"restore it (the file as proposed from is {shown_path(run_dir / 'original' / wl.file.name)}) "
            "or make new proposals from the current file with --propose-only",
        )
    notes = []
    if info.problem_sha256 and wl.problem and described.sha256(FileRole.PROBLEM) != info.problem_sha256:
        notes.append(
            f"the problem {wl.problem.name} changed since the proposals were made: verified against the current one"
        )
    if info.spec_sha256 and wl.spec_path and described.sha256(FileRole.SPEC) != info.spec_sha256:
        notes.append(
            f"the launch spec {wl.spec_path.name} changed since the proposals were made: launched with the current one"
        )
    return notes


def continue_into(src: Path, out: str | Path | None, force: bool) -> Path:
    """Where a later phase writes: ``src`` itself, or a copy of it at ``out``."""
    if out is None:
        return src
    dest = Path(out).absolute()
    if dest == src:
        return src
    if dest.exists() and not dest.is_dir():
        raise BadInput(f"{dest} exists and is not a folder", hint="--out takes a folder for the run")
    if dest.exists() and any(dest.iterdir()) and not force:
        raise BadInput(
            f"{shown_path(dest)} is not empty"
            + (" (it holds a run)" if (dest / RECORD_FILE).exists() else ""),
            hint="choose another --out folder, or pass --force to write into it",
        )
    shutil.copytree(src, dest, dirs_exist_ok=True)
    return dest


def _moved(path: str | None, run_dir: Path) -> str | None:
    """A path recorded inside a run folder (possibly on another machine), inside ``run_dir`` now."""
    if path is None:
        return None
    parts = Path(path).parts
    for marker in ("candidates", PROPOSALS):
        if marker in parts:
            i = len(parts) - 1 - parts[::-1].index(marker)
            return str(run_dir.joinpath(*parts[i:]))
    return path


def relocated_candidates(record: RunRecord, run_dir: Path, wl: OptimizeWorkload) -> list[CandidateOutcome]:
    """The record's evaluated candidates with their files in ``run_dir`` and the target where it is now."""
    return [
        c.model_copy(
            update={
                "source_path": _moved(c.source_path, run_dir),
                "diff_path": _moved(c.diff_path, run_dir),
                "file": str(wl.file),
            }
        )
        for c in record.candidates
        if c.verdict != "proposed"
    ]


def candidate_profile(cand: CandidateOutcome, kernel_name: str | None) -> KernelProfile | None:
    """The profile saved beside a candidate (profile.json), its targeted kernel; None when not profiled."""
    if cand.source_path is None:
        return None
    try:
        prof = Profile.model_validate_json((Path(cand.source_path).parent / "profile.json").read_text())
    except (OSError, ValidationError, ValueError):
        return None
    return reprofile.pick_kernel(prof.kernels, kernel_name) if prof.kernels else None


def best_kernel(
    record: RunRecord, run_dir: Path, wl: OptimizeWorkload, kernel_name: str | None
) -> KernelProfile | None:
    """The profile of ``record``'s best accepted candidate (None: nothing accepted, or not profiled)."""
    best = next(
        (c for c in relocated_candidates(record, run_dir, wl) if c.id == record.best and c.accepted), None
    )
    return candidate_profile(best, kernel_name) if best is not None else None


def restore(
    st: LoopState, kernel_name: str | None, record: RunRecord, run_dir: Path, wl: OptimizeWorkload
) -> KernelDiagnosis | None:
    """Give the loop state ``st`` what the run measured before: candidates (numbering, duplicates), rejections
    (fed back), the best (source, macros, launch, and its profile of ``kernel_name``, the targeted kernel).
    Returns the best's diagnosis when it was profiled."""
    earlier = relocated_candidates(record, run_dir, wl)
    st.outcomes = list(earlier)
    for c in earlier:
        if c.verdict == "duplicate":
            continue
        source = c.source
        if source is not None:
            st.seen.setdefault(
                candidate_key(source, dict(c.defines), dict(c.launch), language=wl.language), c.id
            )
        st.remember_rejection(c)
    best = next((c for c in earlier if c.id == record.best and c.accepted), None)
    if best is None or best.source is None or best.source_path is None:
        return None
    st.best_id, st.best_speedup = best.id, best.speedup
    st.source, st.source_file = best.source, Path(best.source_path)
    st.defines, st.launch, st.parent = dict(best.defines), dict(best.launch), best.id
    kernel = candidate_profile(best, kernel_name)
    if kernel is None:
        return None
    st.before = kernel
    st.diagnosis = diagnose_one(kernel)
    return st.diagnosis


def load_proposal(run_dir: Path, outcome: CandidateOutcome) -> StoredProposal:
    folder = run_dir / (outcome.proposal_dir or f"{PROPOSALS}/?")
    hint = "copy the run folder whole (proposals/ included), or make the proposals again with --propose-only"
    try:
        stored = StoredProposal.model_validate_json((folder / PROPOSAL_FILE).read_text(encoding="utf-8"))
        source = (folder / stored.source_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"proposal {outcome.id} cannot be read from {shown_path(folder)}: {exc.strerror or exc}",
            hint=hint,
        ) from None
    except ValidationError as exc:
        raise BadInput(
            f"proposal {outcome.id} in {shown_path(folder)} is not a perfagent proposal ({exc.errors()[0].get('msg')})",
            hint=hint,
        ) from None
    cand = stored.candidate
    if source != cand.source:  # edited by hand between the machines: evaluated as it is now
        diff = cand.diff
        try:
            request = RewriteRequest.model_validate_json(
                (folder / stored.request_file).read_text(encoding="utf-8")
            )
            diff = unified_diff(request.source, source, request.path)
        except (OSError, ValidationError):
            pass
        cand = cand.model_copy(
            update={
                "source": source,
                "diff": diff,
                "notes": [*cand.notes, "edited after it was proposed (evaluated as edited)"],
            }
        )
    return stored.model_copy(update={"candidate": cand})


def stored_settings(stored: dict[str, Any], **budget: int) -> OptimizeSettings:
    """The verification, timing and profiling settings a proposals run stored (``SETTING_KEYS``), with the
    budget of this phase (``iterations``, ``max_candidates``) and the defaults for the rest."""
    values = {k: v for k, v in stored.items() if k in SETTING_KEYS}
    return OptimizeSettings.build(None, **values, **budget)
