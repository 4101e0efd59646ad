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
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knowledge.transforms import catalog
from perfagent.optimize import reprofile
from perfagent.optimize.events import Info
from perfagent.optimize.loop_state import Origin, diagnose_one
from perfagent.optimize.plan import PlannedTransform
from perfagent.records import CandidateOutcome
from perfagent.rewrite.base import WRITE_KERNEL
from perfagent.workloads.kernelbench import describe_inputs, inspect_python
from profilers.core_errors import LLMError

if TYPE_CHECKING:
    from perfagent.optimize.loop import OptimizeLoop

KernelLanguage = Literal["cuda", "triton"]
ATTEMPTS = 2
"""write-kernel requests (iterations) before the run gives up on a first kernel."""


def target_file(problem: Path, language: KernelLanguage) -> Path:
    """Where ``--apply`` writes a ModelNew written for ``problem``: beside it, never over it."""
    return problem.with_name(f"{problem.stem}_perfagent_{language}.py")


def write(loop: OptimizeLoop, language: KernelLanguage) -> str | None:
    """Run the write-kernel step; None when a correct first kernel is the working source, else why not."""
    st = loop.state
    entry = catalog()[WRITE_KERNEL]
    step = PlannedTransform(entry, None, "write-kernel", ())
    [index] = loop.log_plan([step])
    reference = loop.display_path()
    loop.wl = dataclasses.replace(loop.wl, file=target_file(loop.wl.file, language))
    inputs = describe_inputs(loop.wl.problem or st.source_file)
    loop.tell(
        Info,
        f"plain PyTorch: asking the model for a first ModelNew with {language} kernel(s), then optimizing it",
        transform=WRITE_KERNEL,
    )
    errors = 0
    machine = language == "cuda" and not loop.gpu  # a CUDA ModelNew cannot be built here: ask once
    for _ in range(1 if machine else ATTEMPTS):
        if loop.step >= loop.settings.iterations:
            break
        loop.step += 1
        loop.tried.add(index)
        loop.tell(Info, f"iteration {loop.step}: {WRITE_KERNEL} ({language}, llm)", transform=WRITE_KERNEL)
        request = loop.request_for(WRITE_KERNEL, None).model_copy(
            update={
                "kernel_language": language,
                "inputs": inputs,
                "path": reference,
                "reference_profile": loop.reference_profile,
            }
        )
        try:
            candidates = loop.rewriter.propose(request)
        except LLMError as exc:
            st.llm_errors.append(str(exc))
            loop.tell(Info, f"LLM error: {exc}", transform=WRITE_KERNEL)
            errors += 1
            if errors >= 2:
                return f"the LLM failed {errors} times in a row: {exc}"
            continue
        errors = 0
        origin = Origin({}, {}, None)
        outcomes = [o for c in candidates for o in loop.evaluate_and_repair(c, step, origin, request)]
        proposed = [o.id for o in outcomes if o.verdict == "proposed"]
        if proposed:  # --propose-only: measured on the GPU machine, continued with --from RUN
            return (
                f"first kernel proposed ({', '.join(proposed)}, {language}): evaluate it on the GPU machine, "
                "then `--propose-only --from RUN` optimizes it"
            )
        correct = [o for o in outcomes if o.accepted] or [
            o for o in outcomes if o.verification.verdict == "pass"
        ]
        if correct:
            adopt(loop, correct[0], language)
            return None
    if st.llm_errors and not st.outcomes:
        return f"write-kernel: no first kernel ({st.llm_errors[-1]})"
    if machine:
        return "write-kernel: the CUDA ModelNew could not be verified here (no GPU); --language triton runs on the CPU"
    return (
        "write-kernel: no correct first kernel"
        + (f" in {loop.step} iteration(s)" if loop.step else "")
        + " (the budget or the attempts ran out): nothing to optimize further"
    )


def adopt(loop: OptimizeLoop, outcome: CandidateOutcome, language: KernelLanguage) -> None:
    """Make ``outcome`` the working source: the loop's later requests rewrite it, and plan from its profile."""
    st = loop.state
    source_file = Path(str(outcome.source_path))
    st.source_file = source_file
    st.source = source_file.read_text(encoding="utf-8")
    st.parent = outcome.id
    jits = loop.wl.jit_kernels
    if language == "triton":
        jits = tuple(inspect_python(source_file).jit_kernels)
    loop.wl = dataclasses.replace(
        loop.wl, language="triton" if jits else "python", has_model_new=True, jit_kernels=jits
    )
    if not outcome.metrics_after:  # not re-profiled while judged (not faster, or no GPU)
        st.before, st.diagnosis = None, None
        if loop.baseline.can_profile:
            rp = reprofile.reprofile(
                loop.wl,
                source_file,
                None,
                workdir=source_file.parent / "profile",
                target_kernel=None,
                arch=loop.settings.arch,
                timeout_s=loop.settings.profile_timeout_s,
                candidate=True,
            )
            if rp.kernel is not None:
                st.before, st.diagnosis = rp.kernel, diagnose_one(rp.kernel)
    verdict = (
        "accepted" if outcome.accepted else f"correct ({outcome.verdict}), adopted as the starting point"
    )
    loop.tell(Info, f"{outcome.id}: first kernel {verdict}; optimizing it next", candidate=outcome.id)
