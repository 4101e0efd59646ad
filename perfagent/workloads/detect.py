"""Turn the user's paths into ``Workload`` objects (reference and candidate), or say why not.

``detect_reference`` / ``detect_candidate`` give what verification and timing run; ``describe_source``
describes a source for ``describe.describe_target`` (``resolve``: the description's ``OptimizeWorkload``).
Rules (all errors are ``BadInput`` with the next step):

- ``*.py`` with ``class Model`` and ``get_inputs``: a KernelBench problem. Its candidate is a
  ``.py`` with ``class ModelNew`` (or the problem file itself, when it defines ``ModelNew``).
- ``*.toml``: a launch spec; the reference is the spec's ``source``.
- ``*.cu``: a kernel file launched from a spec: ``--spec``, else ``<stem>.launch.toml`` beside
  it, else the one ``*.launch.toml`` in its folder that names the file (as ``source`` or a
  variant). Without a spec, a file with ``main()`` is a CUDA program (check-command only).
- any other ``*.py``: a Triton or Python script (check-command only).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from perfagent.target import (
    CHECK_COMMAND_ONLY,
    YES,
    Capability,
    FileRole,
    TargetDescription,
    TargetKind,
    hashed,
)
from perfagent.workloads.describe import describe_target, source_text
from perfagent.workloads.kernelbench import PythonInfo, inspect_python
from perfagent.workloads.launch_spec import LaunchSpec, choose_entry, load_launch_spec, override_for
from perfagent.workloads.model import (
    KernelBenchModel,
    RunnableWorkload,
)
from perfagent.workloads.optimizable import OptimizeWorkload
from perfagent.workloads.registry import optimize_workload, reference_workload
from profilers.core_errors import BadInput

_MAIN = re.compile(r"\bint\s+main\s*\(")
_GLOBAL = re.compile(r"__global__")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"', re.M)
_CUDA_SUFFIXES = (".cu", ".cuh")


def detect_reference(path: str | Path, *, spec: str | Path | None = None) -> RunnableWorkload:
    """The reference (the oracle, or the program a check command judges) of ``path``: its one description
    (``describe_target``), then the registry's choice.

    Raises:
        BadInput: the file is missing, of no supported kind, or cannot be a reference (its ``can_verify``).
    """
    return reference_workload(describe_target(path, spec=spec))


def detect_candidate(
    path: str | Path | None, reference: RunnableWorkload, *, kernel: str | None = None
) -> RunnableWorkload:
    """Resolve the candidate (a rewrite) against its reference.

    Args:
        path: the candidate file; None means "the reference file's own ModelNew".
        reference: the resolved reference.
        kernel: explicit entry point of a ``.cu`` candidate.

    Raises:
        BadInput: missing file, wrong kind for this reference, or no ``ModelNew``.
    """
    if isinstance(reference, KernelBenchModel):
        return _model_new(path, reference)
    if path is None:
        raise BadInput("no CANDIDATE given", hint="pass the rewritten file after the reference")
    return reference.candidate_for(_existing(path), kernel=kernel)


def _model_new(path: str | Path | None, reference: KernelBenchModel) -> KernelBenchModel:
    """The ``ModelNew`` of ``path`` (None: of the reference's own file)."""
    p = _existing(path) if path is not None else Path(reference.path)
    info = inspect_python(p)
    if "ModelNew" not in info.classes:
        where = "the candidate" if path is not None else f"{p.name} (no CANDIDATE was given)"
        raise BadInput(
            f"{where} defines no class ModelNew",
            hint="a KernelBench candidate is `class ModelNew(nn.Module)`",
        )
    return KernelBenchModel(path=str(p), class_name="ModelNew", backend=info.backend)


def find_spec_for(kernel_file: Path) -> Path | None:
    """The launch spec that serves ``kernel_file``: ``<stem>.launch.toml`` or the one in its folder naming it."""
    own = kernel_file.with_name(kernel_file.stem + ".launch.toml")
    if own.is_file():
        return own.resolve()
    naming: list[Path] = []
    broken: list[str] = []
    for candidate in sorted(kernel_file.parent.glob("*.launch.toml")):
        try:
            data = tomllib.loads(candidate.read_text())
        except tomllib.TOMLDecodeError as exc:
            broken.append(f"{candidate.name} ({exc})")  # said if no other spec serves the file
            continue
        except OSError:
            continue
        variants = data.get("variants", {})
        if data.get("source") == kernel_file.name or (
            isinstance(variants, dict) and kernel_file.name in variants
        ):
            naming.append(candidate)
    if len(naming) == 1:
        return naming[0].resolve()
    if len(naming) > 1:
        raise BadInput(
            f"several launch specs name {kernel_file.name}: {', '.join(p.name for p in naming)}",
            hint="choose one with --spec PATH",
        )
    if broken:  # a spec that may name this file cannot be read: say so, not "no launch spec"
        raise BadInput(
            f"the launch spec beside {kernel_file.name} is not valid TOML: {'; '.join(broken)}",
            hint="fix the spec's syntax (format: docs/verify.md)",
        )
    return None


def resolve(
    target: str | Path,
    *,
    problem: str | Path | None = None,
    spec: str | Path | None = None,
    report: str | Path | None = None,
) -> OptimizeWorkload:
    """The optimize loop's workload for ``target``: ``describe_target``, then the registry's choice.

    Raises:
        BadInput: as ``describe_target``, or the target cannot be rewritten (its ``can_rewrite``).
    """
    return optimize_workload(describe_target(target, problem=problem, spec=spec, report=report))


def describe_source(
    path: Path, *, problem: str | Path | None = None, spec: str | Path | None = None
) -> TargetDescription:
    """Describe a source file (``describe.describe_target``'s sources: ``.cu``/``.cuh``, a launch spec, ``.py``).

    Args:
        path: an existing file: a ``.cu`` kernel file (launch spec beside it or ``spec``), a launch spec
            ``.toml``, a KernelBench problem ``.py``, a ``ModelNew`` file (with ``problem``), or a script.
        problem: the KernelBench problem (oracle) for a ``ModelNew`` target.
        spec: the launch spec of a ``.cu`` target when it is not found beside it.

    Returns:
        The description; what the loop cannot rewrite (a program with ``main()``, a kernel file without a
        launch spec, a plain Python script) says why in ``can_rewrite`` and the next step.

    Raises:
        BadInput: the file is unreadable, binary or empty, a given ``spec`` or ``problem`` is invalid.
    """
    suffix = path.suffix.lower()
    if suffix == ".toml":
        described = _spec_target(path, load_launch_spec(path))
    elif suffix in _CUDA_SUFFIXES:
        described = _cuda_target(path, spec)
    elif problem is not None:
        described = _model_new_target(path, Path(problem))
    else:
        described = _python_target(path)
    if not described.can_rewrite.able:
        return described
    # the kernel filter is the kind's answer (a launch spec's entry, a script's Triton kernels)
    return described.model_copy(update={"kernel_filter": optimize_workload(described).kernel_regex()})


def _spec_target(spec_file: Path, loaded: LaunchSpec, kernel_file: Path | None = None) -> TargetDescription:
    """The kernel a launch spec launches: its ``source``, or ``kernel_file`` (one of its variants)."""
    source = (spec_file.parent / loaded.source).resolve()
    file = kernel_file.resolve() if kernel_file is not None else source
    own_variant = override_for(loaded, file) if file != source else None
    return TargetDescription(
        kind=TargetKind.CUDA_KERNEL,
        language="cuda",
        backend="cuda",
        files=(hashed(FileRole.PRIMARY, file), hashed(FileRole.SPEC, spec_file.resolve())),
        entry=choose_entry(loaded, file, own_variant, None),
    )


def _cuda_target(path: Path, spec: str | Path | None) -> TargetDescription:
    """A ``.cu`` file: a launch-spec kernel, a program with ``main()``, or a kernel file analysed statically.

    A spec beside it that cannot be read does not stop ``diagnose`` (it reads the source alone); it is why
    the file cannot be verified or rewritten. A spec given with ``--spec`` must be valid.
    """
    text = source_text(path)
    no_spec = Capability(
        able=False,
        reason=f"{path.name} is a kernel file without a launch spec",
        hint=f"write {path.stem}.launch.toml beside it (format: docs/verify.md) or pass --spec PATH",
    )
    try:
        spec_file = Path(spec).resolve() if spec is not None else find_spec_for(path.resolve())
        if spec_file is not None:
            return _spec_target(spec_file, load_launch_spec(spec_file), path)
    except BadInput as exc:
        if spec is not None:
            raise
        no_spec = Capability(able=False, reason=exc.message, hint=exc.hint)
    if _MAIN.search(text):
        return _program(path)
    # a file that includes local sources may get its kernels from them: nvcc decides (static analysis)
    if not _GLOBAL.search(text) and not _LOCAL_INCLUDE.search(text):
        raise BadInput(
            f"{path} defines no __global__ kernel and no main()",
            hint="point at the .cu file that defines the kernels (or a program with main() that launches them)",
        )
    return TargetDescription(
        kind=TargetKind.CUDA_KERNEL,
        language="cuda",
        backend="cuda",
        files=(hashed(FileRole.PRIMARY, path.resolve()),),
        can_verify=no_spec,
        can_time=no_spec,
        can_rewrite=no_spec,
    )


def _program(path: Path) -> TargetDescription:
    return TargetDescription(
        kind=TargetKind.CUDA_PROGRAM,
        language="cuda",
        backend="cuda",
        files=(hashed(FileRole.PRIMARY, path.resolve()),),
        can_verify=CHECK_COMMAND_ONLY,
        can_time=_NOT_TIMED,
        can_rewrite=Capability(
            able=False,
            reason=f"{path.name} is a CUDA program with main(): perfagent cannot launch and verify its "
            "kernels itself",
            hint="optimize a kernel file with a launch spec (e.g. examples/cuda/02_*/slow.cu), see docs/verify.md",
        ),
    )


def _model_new_target(path: Path, problem: Path) -> TargetDescription:
    """A ``ModelNew`` file optimized against the KernelBench ``problem`` (its ``Model`` is the oracle)."""
    info = inspect_python(path)
    if not inspect_python(problem).is_problem:
        raise BadInput(
            f"{problem.name} is not a KernelBench problem (no Model / get_inputs)",
            hint="--problem takes the problem file",
        )
    if "ModelNew" not in info.classes:
        raise BadInput(
            f"{path.name} defines no ModelNew",
            hint="the file to optimize is a KernelBench candidate (class ModelNew)",
        )
    return _kernelbench(path, problem, info, has_model_new=True)


def _kernelbench(path: Path, problem: Path, info: PythonInfo, *, has_model_new: bool) -> TargetDescription:
    # a problem that is its own file is both: the file the loop rewrites and its oracle
    files = (hashed(FileRole.PRIMARY, path.resolve()), hashed(FileRole.PROBLEM, problem.resolve()))
    jits = tuple(info.jit_kernels)
    return TargetDescription(
        kind=TargetKind.KERNELBENCH,
        language="triton" if jits else "python",
        backend=info.backend,
        files=files,
        jit_kernels=jits,
        has_model_new=has_model_new,
    )


def _python_target(path: Path) -> TargetDescription:
    """A KernelBench problem (its own oracle), a Triton script (its own check), or a script that is only run.

    A file Python cannot parse, or a KernelBench file without its oracle, is still a script ``diagnose`` runs;
    its capabilities say, in each command's words, why it cannot be verified, timed or rewritten.
    """
    source_text(path)  # readable, text, not empty
    try:
        info = inspect_python(path)
    except BadInput as exc:
        unparsed = Capability(able=False, reason=exc.message, hint=exc.hint)
        return _script(path, "unknown", unparsed, unparsed)
    if info.is_problem:
        return _kernelbench(path, path, info, has_model_new="ModelNew" in info.classes)
    if "ModelNew" in info.classes and "Model" not in info.classes:
        no_oracle = Capability(
            able=False,
            reason=f"{path.name} defines ModelNew but no Model: the loop needs the problem as the oracle",
            hint="pass the KernelBench problem with --problem PROBLEM.py",
        )
        not_a_reference = Capability(
            able=False,
            reason=f"{path.name} defines ModelNew but no Model: it is a candidate, not a reference",
            hint="the reference comes first: perfagent verify PROBLEM.py CANDIDATE.py",
        )
        return _script(path, info.backend, no_oracle, not_a_reference)
    no_inputs = YES
    if "Model" in info.classes:  # a KernelBench problem without its inputs cannot be the oracle
        no_inputs = Capability(
            able=False,
            reason=f"{path.name} defines Model but no get_inputs()",
            hint="a KernelBench problem needs get_inputs() (and get_init_inputs() when Model takes arguments)",
        )
    if info.jit_kernels:
        return TargetDescription(
            kind=TargetKind.TRITON_SCRIPT,
            language="triton",
            backend=info.backend,
            files=(hashed(FileRole.PRIMARY, path.resolve()),),
            jit_kernels=tuple(info.jit_kernels),
            can_verify=no_inputs,
            can_time=no_inputs,
        )
    plain = Capability(
        able=False,
        reason=f"{path.name} is a Python script with no Triton kernel and no KernelBench interface",
        hint="wrap it as a KernelBench problem (Model, get_inputs) so that candidates can be verified",
    )
    return _script(path, info.backend, plain, no_inputs if not no_inputs.able else CHECK_COMMAND_ONLY)


def _script(path: Path, backend: str, cannot_rewrite: Capability, verify: Capability) -> TargetDescription:
    """A Python script perfagent runs (under a profiler) but has no oracle for: a check command judges it
    (``verify`` is ``CHECK_COMMAND_ONLY``), unless ``verify`` says why nothing can."""
    return TargetDescription(
        kind=TargetKind.PYTHON_SCRIPT,
        language="python",
        backend=backend,
        files=(hashed(FileRole.PRIMARY, path.resolve()),),
        can_verify=verify,
        can_time=_NOT_TIMED if verify == CHECK_COMMAND_ONLY else verify,
        can_rewrite=cannot_rewrite,
    )


_NOT_TIMED = Capability(
    able=False,
    reason="perfagent cannot launch its kernels itself",
    hint="profile it: perfagent diagnose FILE",
)


def _existing(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise BadInput(f"{p} does not exist", hint="check the path")
    if p.is_dir():
        raise BadInput(f"{p} is a folder", hint="pass a file")
    return p.resolve()
