"""``perfagent.verify.verify``: is a candidate correct against its reference? (library API)"""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from perfagent.sandbox.runner import run_worker
from perfagent.sandbox.wire import WorkerResult
from perfagent.sandbox.worker_outcome import WorkerOutcome
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.models import Check, ErrorSummary, Tolerance, VerificationResult
from perfagent.verify.static_checks import static_checks
from perfagent.verify.verdict import decide
from perfagent.workloads.describe import Describe, describe_target
from perfagent.workloads.detect import detect_candidate
from perfagent.workloads.launch_checks import preflight_launch_spec
from perfagent.workloads.model import RunnableWorkload
from perfagent.workloads.registry import reference_workload
from profilers.core_errors import BadInput, NotOnThisMachine
from profilers.errors import ProfilerUnavailable, ToolTimeout
from profilers.process import run_command
from profilers.settings import TIMEOUTS, Device

CHECK_CMD_NOTE = (
    "correctness here is only what the check command tests: perfagent did not run or compare "
    "the kernels itself (no seeds, poisoning, input-mutation or degenerate-reference checks)"
)


def verify(
    reference: str | Path | RunnableWorkload,
    candidate: str | Path | RunnableWorkload | None = None,
    *,
    device: Device = "auto",
    seeds: int = 5,
    timeout_s: float = TIMEOUTS.call_s,
    tolerance: float | Tolerance | None = None,
    sanitizer: bool = False,
    check_cmd: str | Sequence[str] | None = None,
    spec: str | Path | None = None,
    kernel: str | None = None,
    seed: int | None = None,
    compile_timeout_s: float = TIMEOUTS.compile_s,
    progress: Callable[[str], None] | None = None,
    describe: Describe = describe_target,
) -> VerificationResult:
    """Check ``candidate`` against ``reference`` (the oracle) and return the verdict with every check.

    Args:
        reference: a KernelBench problem (.py with ``Model``/``get_inputs``), a launch spec (.launch.toml),
            a .cu kernel file with a spec beside it, or a .cu program / script (then only ``check_cmd`` can
            verify it).
        candidate: the rewrite: a .py with ``ModelNew`` or a .cu file; None = the reference file's own
            ``ModelNew``.
        device: 'cpu' (Triton via its interpreter), 'cuda', or 'auto' (CUDA when torch sees a GPU).
        seeds: fresh seeds (each gives two input sets: ``get_inputs()`` and a re-drawn distribution).
        timeout_s: limit for each candidate call, s (the first call and the import/build get
            ``compile_timeout_s``).
        tolerance: one number (atol = rtol) or a ``Tolerance``; default per dtype.
        sanitizer: also run under ``compute-sanitizer --tool memcheck`` (CUDA).
        check_cmd: a command whose exit status decides correctness (``{reference}`` and ``{candidate}``
            are replaced by the paths); the only way to verify .cu programs.
        spec: launch spec for a .cu reference (default: found beside it).
        kernel: entry point of a .cu candidate (default: from the spec's variants / the file).
        seed: first seed (default: random; recorded in the result for reproduction).
        compile_timeout_s: limit for import, build and the first call, s.
        progress: receives progress lines (the CLI prints them on stderr).
        describe: classifies a ``reference`` path, once (``describe_target``).

    Returns:
        The ``VerificationResult``: verdict 'pass', 'fail' or 'inconclusive' (degenerate or nondeterministic
        reference), the checks, errors, seeds and notes.

    Raises:
        BadInput: unusable paths, options or reference (missing file, no ``Model``, bad spec, reference that
            raises or crashes, a .cu program without ``check_cmd``).
    """
    started = time.monotonic()
    _check_limits(seeds, timeout_s)
    ref, cand = _workloads(reference, candidate, spec=spec, kernel=kernel, describe=describe)
    tol = _tolerance(tolerance)
    command = _split(check_cmd)
    if ref.verified_by == "check-command":
        return _verify_by_command(command, ref, cand, timeout_s, started)
    _check_device(ref, cand, device, sanitizer)
    timeout_s, compile_timeout_s, notes = _limits(timeout_s, compile_timeout_s, sanitizer)
    request = _request(ref, cand, device, seeds, seed, tol, timeout_s, compile_timeout_s)
    return _verify_in_worker(request, ref, cand, command, notes, sanitizer, progress, started)


def _verify_in_worker(
    request: VerifyRequest,
    ref: RunnableWorkload,
    cand: RunnableWorkload,
    command: list[str],
    notes: list[str],
    sanitizer: bool,
    progress: Callable[[str], None] | None,
    started: float,
) -> VerificationResult:
    """Run the verification worker on ``request`` and decide on every check (see ``_checks_and_notes``)."""
    backstop = 3 * request.compile_timeout_s + request.timeout_s * (8 * request.seeds + 10) + 60
    outcome = run_worker(request, backstop_s=backstop, sanitizer=sanitizer, progress=progress)
    worker = outcome.result
    checks, notes = _checks_and_notes(outcome, ref, cand, command, request.timeout_s, notes)
    return _result(
        checks,
        notes,
        ref,
        cand,
        device=_device_label(
            worker.device if worker else request.device, worker.device_name if worker else None
        ),
        # A PyTorch reference is rerun in float64 by a cast, a launch-spec kernel by promoting its source.
        tolerance=request.tolerance.describe(accuracy_rule=ref.reruns_in_float64),
        started=started,
        worker=worker,
        sanitizer=sanitizer,
    )


def _limits(timeout_s: float, compile_timeout_s: float, sanitizer: bool) -> tuple[float, float, list[str]]:
    """The per-call and compile limits the worker gets, and a note when the sanitizer widened them."""
    if not sanitizer:
        return timeout_s, compile_timeout_s, []
    # memcheck slows kernels (and the Python around them) by one to two orders of magnitude
    note = "compute-sanitizer memcheck: per-call time limits were multiplied by 20"
    return timeout_s * 20, compile_timeout_s * 3, [note]


def _checks_and_notes(
    outcome: WorkerOutcome,
    ref: RunnableWorkload,
    cand: RunnableWorkload,
    command: list[str],
    timeout_s: float,
    notes: list[str],
) -> tuple[list[Check], list[str]]:
    """Every check (the worker's, the runner's, the static ones, the check command's) and the notes after ``notes``."""
    worker = outcome.result
    notes = [*notes, *(worker.notes if worker else []), *([outcome.sandbox] if outcome.sandbox else [])]
    checks = [*(worker.checks if worker else []), *outcome.checks, *static_checks(cand, ref)]
    if command:
        checks.append(_run_check_command(command, ref, cand, timeout_s))
        notes.append("the check command was run in addition to perfagent's own checks")
    if worker is not None and worker.device == "cpu":
        notes.append("ran on the CPU: CUDA-only checks (launch errors, stream sync, sanitizer) did not apply")
    return checks, notes


def _request(
    ref: RunnableWorkload,
    cand: RunnableWorkload,
    device: Device,
    seeds: int,
    seed: int | None,
    tol: Tolerance,
    timeout_s: float,
    compile_timeout_s: float,
) -> VerifyRequest:
    """The worker request for verifying ``cand`` against ``ref``."""
    return VerifyRequest(
        job="verify-cuda-kernel" if ref.runner == "launch-spec" else "verify-kernelbench",
        reference=ref,
        candidate=cand,
        device=device,
        seeds=seeds,
        base_seed=seed if seed is not None else secrets.randbelow(2**30),
        tolerance=tol,
        timeout_s=timeout_s,
        compile_timeout_s=compile_timeout_s,
    )


def _workloads(
    reference: str | Path | RunnableWorkload,
    candidate: str | Path | RunnableWorkload | None,
    *,
    spec: str | Path | None,
    kernel: str | None,
    describe: Describe,
) -> tuple[RunnableWorkload, RunnableWorkload]:
    """The reference and the candidate as workloads (paths detected; ``candidate`` None: the reference's own).

    Raises:
        BadInput: the reference's description says it cannot be one, or as ``detect_candidate``.
    """
    if isinstance(reference, (str, Path)):
        ref = reference_workload(describe(reference, spec=spec))
    else:
        ref = reference
    if candidate is None or isinstance(candidate, (str, Path)):
        return ref, detect_candidate(candidate, ref, kernel=kernel)
    return ref, candidate


def _check_limits(seeds: int, timeout_s: float) -> None:
    if seeds < 1:
        raise BadInput(f"--seeds must be at least 1 (got {seeds})", hint="use the default 5 or more")
    if timeout_s <= 0:
        raise BadInput(
            f"--timeout must be positive (got {timeout_s:g})", hint="give seconds, e.g. --timeout 60"
        )


def _check_device(ref: RunnableWorkload, cand: RunnableWorkload, device: Device, sanitizer: bool) -> None:
    """Launch-spec kernels and the sanitizer need CUDA; a launch spec must resolve (before a worker starts).

    Raises:
        BadInput: either needs CUDA but ``device`` is the CPU, or the spec does not resolve.
    """
    if ref.runner == "launch-spec":
        preflight_launch_spec(ref, cand)
        if device == "cpu":
            raise NotOnThisMachine(
                "launch-spec kernels run only on a CUDA GPU",
                hint="use --device cuda on a GPU machine (KernelBench problems verify on CPU)",
            )
    if sanitizer and device == "cpu":
        raise BadInput("--sanitizer needs a CUDA device", hint="drop --sanitizer or use --device cuda")


def _tolerance(tolerance: float | Tolerance | None) -> Tolerance:
    """One number means atol = rtol; None the per-dtype default.

    Raises:
        BadInput: a negative tolerance.
    """
    if isinstance(tolerance, Tolerance):
        tol = tolerance
    elif tolerance is not None:
        tol = Tolerance(atol=tolerance, rtol=tolerance)
    else:
        tol = Tolerance()
    if tol.atol is not None and tol.atol < 0 or tol.rtol is not None and tol.rtol < 0:
        raise BadInput("tolerances must be >= 0", hint="e.g. --tolerance 1e-3")
    return tol


def _verify_by_command(
    command: list[str], ref: RunnableWorkload, cand: RunnableWorkload, timeout_s: float, started: float
) -> VerificationResult:
    """A program or script perfagent cannot run itself: the check command's exit status decides.

    Raises:
        BadInput: there is no check command.
    """
    if not command:
        raise BadInput(
            f"{Path(ref.path).name} is a {ref.kind} (no launch spec / KernelBench interface): perfagent cannot run and compare it itself",
            hint='pass --check-cmd "..." (exit 0 = correct), write a launch spec, or wrap it as a KernelBench problem',
        )
    checks = [_run_check_command(command, ref, cand, timeout_s)]
    return _result(
        checks,
        [CHECK_CMD_NOTE],
        ref,
        cand,
        device="n/a (check command)",
        tolerance="decided by the check command",
        started=started,
    )


def _result(
    checks: list[Check],
    notes: list[str],
    ref: RunnableWorkload,
    cand: RunnableWorkload,
    *,
    device: str,
    tolerance: str,
    started: float,
    worker: WorkerResult | None = None,
    sanitizer: bool = False,
) -> VerificationResult:
    """The verdict on ``checks``, with what the worker reported (None: no worker ran, or it left no result)."""
    verdict, reason = decide(checks)
    return VerificationResult(
        verdict=verdict,
        reason=reason,
        checks=checks,
        reference=ref.describe(),
        candidate=cand.describe(),
        kind=ref.kind,
        device=device,
        seeds=worker.seeds if worker else [],
        distributions=worker.distributions if worker else [],
        input_sets=worker.input_sets if worker else 0,
        tolerance=tolerance,
        errors=worker.errors if worker else ErrorSummary(),
        sanitizer=sanitizer,
        notes=list(dict.fromkeys(notes)),
        elapsed_s=time.monotonic() - started,
    )


def _device_label(device: str, name: str | None) -> str:
    if device.startswith("cuda"):
        return f"cuda:0 ({name})" if name else "cuda:0"
    return device


def _split(check_cmd: str | Sequence[str] | None) -> list[str]:
    if check_cmd is None:
        return []
    if isinstance(check_cmd, str):
        try:
            return shlex.split(check_cmd)
        except ValueError as exc:
            raise BadInput(f"cannot parse --check-cmd: {exc}", hint="quote it as one shell word") from None
    return list(check_cmd)


def _run_check_command(
    command: list[str], ref: RunnableWorkload, cand: RunnableWorkload, timeout_s: float
) -> Check:
    argv = [a.replace("{reference}", ref.path).replace("{candidate}", cand.path) for a in command]
    shown = shlex.join(argv)
    try:
        done = run_command(argv, timeout_s=max(timeout_s, 1.0))
    except ProfilerUnavailable as exc:
        raise BadInput(f"--check-cmd: {exc.message}", hint=exc.hint) from None
    except ToolTimeout:
        return Check(
            name="check-command", passed=False, detail=f"`{shown}` did not finish within {timeout_s:g} s"
        )
    if done.ok:
        return Check(
            name="check-command",
            passed=True,
            detail=f"`{shown}` exited 0 (correctness is only what it checks)",
        )
    return Check(
        name="check-command",
        passed=False,
        detail=f"`{shown}` exited {done.returncode}: {done.tail(5)[-400:]}",
    )
