"""A first kernel across two machines: ``--propose-only`` on a plain-PyTorch problem, ``--evaluate``, ``--from``.

``--propose-only`` on a KernelBench problem with no ``ModelNew`` asks the model for a first one
(``perfagent.optimize.first_kernel``), with no report needed: the inputs come from ``get_inputs()`` on the
meta device, the GPU from the report or ``--gpu``. ``--evaluate RUN`` measures it as any proposal, with
``<problem stem>_perfagent_<language>.py`` as the file it would be applied to (never the problem).
``--propose-only --from RUN`` then starts from the first kernel that passed verification (accepted, or
correct and adopted: the targeted transforms need a kernel), from its profile when it was re-profiled.
"""

from __future__ import annotations

from pathlib import Path

from perfagent.optimize import measure
from perfagent.optimize.context import RunContext
from perfagent.optimize.first_kernel import KernelLanguage, target_file
from perfagent.optimize.loop_state import diagnose_one
from perfagent.optimize.phase_files import candidate_profile, relocated_candidates
from perfagent.records import CandidateOutcome, RunRecord
from perfagent.rewrite.base import WRITE_KERNEL
from perfagent.workloads.kernelbench import inspect_python
from perfagent.workloads.optimizable import OptimizeWorkload
from profilers.core_errors import BadInput
from profilers.model import KernelDiagnosis

__all__ = [
    "adopt_recorded",
    "profile_first_kernel",
    "language_of",
    "no_first_kernel_writer",
    "proposal_language",
    "recorded_first_kernel",
    "replay_workload",
]


def proposal_language(
    wl: OptimizeWorkload, backend: str, transforms: tuple[str, ...], language: str, prior: RunRecord | None
) -> KernelLanguage | None:
    """The language of a first kernel to propose (None: the target has a kernel, or RUN has a correct one).

    Raises:
        BadInput: ``write-kernel`` asked for on a target that has a kernel.
    """
    if not wl.is_plain_pytorch:
        if WRITE_KERNEL in transforms:
            raise BadInput(
                f"write-kernel writes a first kernel for a plain-PyTorch KernelBench problem; {wl.file.name} has one",
                hint="leave out --transform write-kernel",
            )
        return None
    if prior is not None and recorded_first_kernel(prior) is not None:
        return None
    if backend not in ("llm", "auto"):
        return None
    return "triton" if language == "triton" else "cuda"


def no_first_kernel_writer(wl: OptimizeWorkload) -> BadInput:
    """Why ``--propose-only`` cannot start on a plain-PyTorch problem with the recipes alone."""
    return BadInput(
        f"{wl.file.name} is plain PyTorch (no ModelNew): a first kernel is written by the model, and the "
        "backend is recipes",
        hint="configure an endpoint (--llm-base-url and --llm-model, or PERFAGENT_LLM_BASE_URL / "
        "PERFAGENT_LLM_MODEL) and give --language cuda|triton, or write a ModelNew and pass --problem",
    )


def recorded_first_kernel(record: RunRecord) -> CandidateOutcome | None:
    """RUN's first kernel to continue from: an accepted write-kernel candidate, else the fastest correct one."""
    found = [c for c in record.candidates if c.transform == WRITE_KERNEL and c.verification.verdict == "pass"]
    if not found:
        return None
    return max(found, key=lambda c: (c.accepted, c.speedup or 0.0))


def language_of(source: str) -> KernelLanguage:
    """A ModelNew's kernel language: Triton when it defines a ``@triton.jit`` kernel, else CUDA (load_inline)."""
    return "triton" if "triton.jit" in source else "cuda"


def replay_workload(wl: OptimizeWorkload, sources: list[str]) -> OptimizeWorkload:
    """The workload ``--evaluate`` measures first-kernel proposals with: the problem stays the oracle, and
    the file a candidate would be applied to is ``<stem>_perfagent_<language>.py`` beside it."""
    if not wl.is_plain_pytorch or not sources:
        return wl
    return wl.retargeted(target_file(wl.file, language_of(sources[0])))


def adopt_recorded(
    record: RunRecord, run_dir: Path, wl: OptimizeWorkload, kernel_name: str | None
) -> tuple[OptimizeWorkload, CandidateOutcome, KernelDiagnosis | None] | None:
    """RUN's first kernel as the start of a ``--from`` round: the workload it is (Triton or load_inline
    ModelNew, applied beside the problem), the candidate, and its diagnosis when it was re-profiled."""
    if not wl.is_plain_pytorch:
        return None
    chosen = recorded_first_kernel(record)
    if chosen is None:
        return None
    cand = next((c for c in relocated_candidates(record, run_dir, wl) if c.id == chosen.id), None)
    if cand is None or cand.source is None or cand.source_path is None:
        return None
    language = language_of(cand.source)
    jits = tuple(inspect_python(Path(cand.source_path)).jit_kernels) if language == "triton" else ()
    adopted = wl.retargeted(
        target_file(wl.file, language),
        language="triton" if jits else "python",
        has_model_new=True,
        jit_kernels=jits,
    )
    kernel = candidate_profile(cand, kernel_name)
    return adopted, cand, diagnose_one(kernel) if kernel is not None else None


def profile_first_kernel(ctx: RunContext) -> None:
    """Re-profile the correct first kernel ``--evaluate`` did not (not faster than the reference), so
    that ``--from RUN`` plans from its profile as the one-machine loop does when it adopts it."""
    if not ctx.baseline.can_profile:
        return
    outcomes = [
        o for o in ctx.state.outcomes if o.transform == WRITE_KERNEL and o.verification.verdict == "pass"
    ]
    chosen = max(outcomes, key=lambda c: (c.accepted, c.speedup or 0.0), default=None)
    if chosen is None or chosen.metrics_after or chosen.source_path is None:
        return
    source = Path(chosen.source_path)
    rp = ctx.services.reprofile(
        ctx.wl,
        source,
        None,
        workdir=source.parent / "profile",
        target_kernel=None,
        arch=ctx.measuring.arch,
        timeout_s=ctx.measuring.profile_timeout_s,
        candidate=True,
    )
    if rp.profile is not None:
        measure.write_json(source.parent / "profile.json", rp.profile)
