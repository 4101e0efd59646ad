"""The ``write-kernel`` step: a first custom kernel for a plain-PyTorch KernelBench problem.

A problem whose reference is plain PyTorch (``Model``, no ``ModelNew``, no Triton or CUDA kernel) has
nothing for a targeted transform to work on. With the llm backend the loop first asks for a ``ModelNew``
(CUDA through ``torch.utils.cpp_extension.load_inline`` or Triton, ``--language``) given the reference's
source and what its ``get_inputs()`` / ``get_init_inputs()`` give (dtypes and shapes, evaluated on PyTorch's
``meta`` device). Each candidate is built, verified against ``Model``, timed and re-profiled like any other
(``OptimizeLoop.evaluate``, repairs included) and counts as an iteration. The first one that passes
verification becomes the working source — accepted when it also beat the reference, adopted anyway
otherwise, since the targeted transforms need a kernel — and the loop plans from its profile (or, without
one, from the recipes that apply to it). ``--apply`` never writes over the problem: candidates carry
``<problem stem>_perfagent_<language>.py`` beside it as their file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from knowledge.transforms import catalog
from perfagent.optimize.context import RunContext
from perfagent.optimize.events import Info
from perfagent.optimize.loop_state import Origin, diagnose_one
from perfagent.optimize.plan import PlannedTransform
from perfagent.optimize.plan_log import PlanLog
from perfagent.records import CandidateOutcome
from perfagent.rewrite.base import WRITE_KERNEL, Candidate, RewriteRequest
from perfagent.workloads.kernelbench import describe_inputs, inspect_python
from profilers.core_errors import LLMError
from profilers.model import Finding

KernelLanguage = Literal["cuda", "triton"]
ATTEMPTS = 2
"""write-kernel requests (iterations) before the run gives up on a first kernel."""


@dataclasses.dataclass(frozen=True)
class Ask:
    """How the write-kernel step reaches the loop's parts: its requests, its rewriter, its evaluate step."""

    request_for: Callable[[str, Finding | None], RewriteRequest]
    propose: Callable[[RewriteRequest], list[Candidate]]
    evaluate: Callable[[Candidate, PlannedTransform, Origin, RewriteRequest], list[CandidateOutcome]]
    """Evaluate one candidate, repairs included (``OptimizeLoop.evaluate_and_repair``)."""


def target_file(problem: Path, language: KernelLanguage) -> Path:
    """Where ``--apply`` writes a ModelNew written for ``problem``: beside it, never over it."""
    return problem.with_name(f"{problem.stem}_perfagent_{language}.py")


def write(
    ctx: RunContext, plan: PlanLog, ask: Ask, language: KernelLanguage, reference_profile: list[str]
) -> str | None:
    """Run the write-kernel step; None when a correct first kernel is the working source, else why not."""
    st = ctx.state
    step = PlannedTransform(catalog()[WRITE_KERNEL], None, "write-kernel", ())
    [index] = plan.log([step])
    update = {
        "kernel_language": language,
        "inputs": describe_inputs(ctx.wl.problem or st.source_file),
        "path": ctx.display_path(),
        "reference_profile": reference_profile,
    }
    ctx.wl = ctx.wl.retargeted(target_file(ctx.wl.file, language))
    ctx.tell(
        Info,
        f"plain PyTorch: asking the model for a first ModelNew with {language} kernel(s), then optimizing it",
        transform=WRITE_KERNEL,
    )
    errors = 0
    machine = language == "cuda" and not ctx.gpu  # a CUDA ModelNew cannot be built here: ask once
    for _ in range(1 if machine else ATTEMPTS):
        if ctx.tally.step >= ctx.limits.iterations:
            break
        ctx.tally.step += 1
        plan.tried.add(index)
        ctx.tell(
            Info, f"iteration {ctx.tally.step}: {WRITE_KERNEL} ({language}, llm)", transform=WRITE_KERNEL
        )
        request = ask.request_for(WRITE_KERNEL, None).model_copy(update=update)
        try:
            candidates = ask.propose(request)
        except LLMError as exc:
            st.llm_errors.append(str(exc))
            ctx.tell(Info, f"LLM error: {exc}", transform=WRITE_KERNEL)
            errors += 1
            if errors >= 2:
                return f"the LLM failed {errors} times in a row: {exc}"
            continue
        errors = 0
        outcomes = [o for c in candidates for o in ask.evaluate(c, step, Origin({}, {}, None), request)]
        done, why = _settled(ctx, outcomes, language)
        if done:
            return why
    return _no_first_kernel(ctx, machine)


def _settled(
    ctx: RunContext, outcomes: list[CandidateOutcome], language: KernelLanguage
) -> tuple[bool, str | None]:
    """After one write-kernel request: (the step is over, why it ends: None when a correct first kernel
    is adopted). Not over: no correct one, ask again."""
    proposed = [o.id for o in outcomes if o.verdict == "proposed"]
    if proposed:  # --propose-only: measured on the GPU machine, continued with --from RUN
        return True, (
            f"first kernel proposed ({', '.join(proposed)}, {language}): evaluate it on the GPU machine, "
            "then `--propose-only --from RUN` optimizes it"
        )
    correct = [o for o in outcomes if o.accepted] or [o for o in outcomes if o.verification.verdict == "pass"]
    if correct:
        adopt(ctx, correct[0], language)
        return True, None
    return False, None


def _no_first_kernel(ctx: RunContext, machine: bool) -> str:
    st = ctx.state
    if st.llm_errors and not st.outcomes:
        return f"write-kernel: no first kernel ({st.llm_errors[-1]})"
    if machine:
        return "write-kernel: the CUDA ModelNew could not be verified here (no GPU); --language triton runs on the CPU"
    return (
        "write-kernel: no correct first kernel"
        + (f" in {ctx.tally.step} iteration(s)" if ctx.tally.step else "")
        + " (the budget or the attempts ran out): nothing to optimize further"
    )


def adopt(ctx: RunContext, outcome: CandidateOutcome, language: KernelLanguage) -> None:
    """Make ``outcome`` the working source: the loop's later requests rewrite it, and plan from its profile."""
    st = ctx.state
    source_file = Path(str(outcome.source_path))
    st.source_file = source_file
    st.source = source_file.read_text(encoding="utf-8")
    st.parent = outcome.id
    jits = ctx.wl.jit_kernels
    if language == "triton":
        jits = tuple(inspect_python(source_file).jit_kernels)
    ctx.wl = ctx.wl.retargeted(language="triton" if jits else "python", has_model_new=True, jit_kernels=jits)
    if not outcome.metrics_after:  # not re-profiled while judged (not faster, or no GPU)
        st.before, st.diagnosis = None, None
        if ctx.baseline.can_profile:
            rp = ctx.services.reprofile(
                ctx.wl,
                source_file,
                None,
                workdir=source_file.parent / "profile",
                target_kernel=None,
                arch=ctx.measuring.arch,
                timeout_s=ctx.measuring.profile_timeout_s,
                candidate=True,
            )
            if rp.kernel is not None:
                st.before, st.diagnosis = rp.kernel, diagnose_one(rp.kernel)
    verdict = (
        "accepted" if outcome.accepted else f"correct ({outcome.verdict}), adopted as the starting point"
    )
    ctx.tell(Info, f"{outcome.id}: first kernel {verdict}; optimizing it next", candidate=outcome.id)
