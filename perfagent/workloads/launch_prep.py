"""Launch preparation of a launch-spec kernel, written once for verification, timing and profiling.

``build_launch`` resolves the spec for one kernel file and compiles it; ``seeded_inputs`` draws the
input and inout tensors the spec declares; ``prepare_launch`` puts those contents into the buffers a
launch gets, fills every output with a poison, and lays out the arguments in kernel order.
Worker side (and the profiling harness): it imports torch. The calls go through the ``cuda_launch``
module (not names imported from it) so that tests stand in for NVRTC and the launch on the CPU in one
place for every caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfagent.workloads import cuda_launch
from perfagent.workloads.cuda_launch import CompiledKernel
from perfagent.workloads.launch_resolve import ResolvedLaunch, resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec

Build = Callable[[str, Callable[[], CompiledKernel]], CompiledKernel]
"""How the compile step runs, given its label: the worker passes its guard (a failure becomes the
reference's or the candidate's), everyone else calls it."""
INPUT_ROLES = ("input", "inout")


def _call(label: str, compile_step: Callable[[], CompiledKernel]) -> CompiledKernel:
    return compile_step()


def build_label(resolved: ResolvedLaunch) -> str:
    """How progress lines and failures name the compile step."""
    return f"NVRTC build of {Path(resolved.source).name}:{resolved.kernel}"


def compile_launch(resolved: ResolvedLaunch, build: Build = _call) -> CompiledKernel:
    """``resolved``'s kernel file compiled with its macros, through ``build``."""

    def compile_step() -> CompiledKernel:
        return cuda_launch.compile_kernel(resolved.source, resolved.kernel, resolved.defines)

    return build(build_label(resolved), compile_step)


def build_launch(
    spec_path: str | Path, *, source: str | Path | None, kernel: str | None = None, build: Build = _call
) -> tuple[ResolvedLaunch, CompiledKernel]:
    """The spec resolved for ``source`` with this GPU's attributes, and its kernel compiled.

    Raises:
        BadInput: the spec cannot be read or resolved (before anything is compiled).
    """
    spec = load_launch_spec(spec_path)
    resolved = resolve_launch(
        spec, spec_path, source=source, kernel=kernel, device_attrs=cuda_launch.device_attributes()
    )
    return resolved, compile_launch(resolved, build)


def seeded_inputs(
    resolved: ResolvedLaunch, *, seed: int, device: str, dist: str | None = None
) -> dict[str, Any]:
    """The input and inout tensors as the spec declares them, drawn with ``seed`` (float inputs with
    ``vary`` from distribution ``dist`` instead, when given)."""
    return {
        a.name: cuda_launch.make_arg_tensor(a, seed, dist, device)
        for a in resolved.args
        if not a.is_scalar and a.role in INPUT_ROLES
    }


def input_buffers(resolved: ResolvedLaunch, device: str) -> dict[str, Any]:
    """Uninitialised tensors for the input and inout arguments (filled by ``prepare_launch``)."""
    return {
        a.name: cuda_launch.empty_tensor(a, device)
        for a in resolved.args
        if not a.is_scalar and a.role in INPUT_ROLES
    }


@dataclass
class PreparedLaunch:
    """One launch ready to go: buffers in place, arguments laid out."""

    resolved: ResolvedLaunch
    kernel: CompiledKernel
    inputs: dict[str, Any]
    """The seeded contents of the input and inout arguments."""
    buffers: dict[str, Any]
    """Every tensor argument as the kernel gets it, by name."""
    args: list[Any]
    """Kernel arguments in order: device pointers and NumPy scalars."""
    stream: Any
    """torch's current stream as a ``cuda.core`` Stream."""

    def refill(self) -> None:
        """Copy the seeded contents back into the input buffers (resets inouts; same pointers)."""
        for name, values in self.inputs.items():
            if self.buffers[name] is not values:
                self.buffers[name].copy_(values)

    def launch(self) -> None:
        """Launch once, asynchronously."""
        cuda_launch.launch(self.kernel, self.resolved, self.args, self.stream)


def prepare_launch(
    resolved: ResolvedLaunch,
    kernel: CompiledKernel,
    *,
    inputs: Mapping[str, Any],
    poison: int,
    device: str,
    into: Mapping[str, Any] | None = None,
) -> PreparedLaunch:
    """Buffers and arguments for one launch of ``kernel``.

    Args:
        resolved: the launch (geometry and arguments).
        kernel: its compiled kernel.
        inputs: contents of the input and inout arguments (``seeded_inputs``).
        poison: which poison (1 or 2) fills the fresh output tensors, so that an element the
            kernel never writes shows.
        device: torch device of the outputs.
        into: buffers the inputs are copied into (the same pointers launch after launch); None: the
            ``inputs`` tensors themselves are the buffers.
    """
    buffers: dict[str, Any] = dict(into) if into is not None else dict(inputs)
    for a in resolved.args:
        if not a.is_scalar and a.role == "output":
            buffers[a.name] = cuda_launch.poison_(cuda_launch.empty_tensor(a, device), poison)
    prepared = PreparedLaunch(
        resolved=resolved,
        kernel=kernel,
        inputs=dict(inputs),
        buffers=buffers,
        args=cuda_launch.kernel_args(resolved, buffers),
        stream=cuda_launch.current_stream(),
    )
    prepared.refill()
    return prepared
