"""Which GPU a rewrite prompt is about: the measured device, the one named by ``--gpu``, or "unknown".

Never a default. A device is *hardware* only when something named it: a profiler that ran on it (a report
or ncu here: ``DeviceInfo.name``) or the user (``--gpu NAME``, any GPU in ``knowledge/data/gpus``, its name,
SM count, shared memory, compute capability and datasheet peaks filled in from the knowledge base). Static
analysis compiles for a *target* (``--arch``, default sm_90) on a machine that may have no GPU: its device
carries that target's limits and no name, and presenting it as the GPU put "sm_80, compute capability 8.0"
in front of a model for a kernel recorded on an H200. Such a device is dropped here; with nothing else the
prompt says "Hardware: unknown" and the run says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowledge import KnowledgeError
from knowledge.arch import limits_for
from knowledge.gpus import GpuSpec, all_gpus, spec_for
from profilers.core_errors import BadInput
from profilers.model import DeviceInfo

__all__ = ["PromptHardware", "described_hardware", "gpu_device", "known_gpu_names", "prompt_hardware"]

UNKNOWN_NOTE = (
    "the prompt's hardware is unknown (no report recorded on a GPU and no --gpu NAME): the model is not told "
    "which GPU to write for; pass --gpu (e.g. --gpu 'NVIDIA H100 80GB HBM3')"
)


@dataclass(frozen=True)
class PromptHardware:
    """The device the prompts describe (None: unknown) and what the run should say about it."""

    device: DeviceInfo | None
    source: str
    """'report' (a profiler ran on it), '--gpu' (named by the user) or 'unknown'."""
    note: str | None = None
    """A line for the run's notes (unknown hardware, or a --gpu that a report overrides)."""


def known_gpu_names() -> list[str]:
    return [spec.name for spec in all_gpus()]


def _find(name: str) -> GpuSpec | None:
    """The spec called ``name``: its id, its exact name, or a device name its patterns match."""
    wanted = name.strip().lower()
    for spec in all_gpus():
        if wanted in (spec.id.lower(), spec.name.lower()):
            return spec
    return spec_for(name)


def gpu_device(name: str) -> DeviceInfo:
    """The ``DeviceInfo`` of the GPU ``name`` from the knowledge base (datasheet peaks, arch limits).

    Raises:
        BadInput: no GPU of the knowledge base is called ``name`` (the message lists them).
    """
    spec = _find(name)
    if spec is None:
        raise BadInput(
            f"--gpu {name!r} is not a GPU perfagent knows",
            hint="use one of: " + "; ".join(known_gpu_names()) + " (or an id such as h100-sxm)",
        )
    cc, smem = None, None
    if spec.vendor == "nvidia":
        try:
            limits = limits_for(spec.arch)
            cc, smem = limits.compute_capability, limits.shared_memory_per_sm_bytes
        except KnowledgeError:
            cc = None
    return DeviceInfo(
        name=name if spec_for(name) is spec and name.lower() != spec.id else spec.name,
        vendor=spec.vendor,
        arch=spec.arch,
        compute_capability=cc,
        sm_count=spec.sm_count,
        l2_cache_bytes=int(spec.l2_cache_mib * 2**20) if spec.l2_cache_mib else None,
        max_shared_memory_per_sm_bytes=smem,
        xcd_count=spec.xcd_count,
    )  # peaks stay empty: the prompt completes them from the same datasheet entry and labels them so


def prompt_hardware(measured: DeviceInfo | None, gpu: str | None) -> PromptHardware:
    """The hardware of the prompts: ``measured`` when a profiler named it, else ``--gpu``, else unknown.

    Raises:
        BadInput: ``gpu`` is not in the knowledge base.
    """
    return described_hardware(measured, gpu_device(gpu) if gpu else None, gpu)


def described_hardware(
    measured: DeviceInfo | None, named: DeviceInfo | None, asked: str | None
) -> PromptHardware:
    """``prompt_hardware`` for a ``--gpu`` already looked up once (``named``, from ``asked``) at set-up."""
    if measured is not None and measured.name:
        note = None
        if named is not None and spec_for(measured.name) is not spec_for(named.name or ""):
            note = (
                f"--gpu {asked} ignored: the profile was recorded on {measured.name}, and the prompts say so"
            )
        return PromptHardware(measured, "report", note)
    if named is not None:
        return PromptHardware(named, "--gpu")
    return PromptHardware(None, "unknown", UNKNOWN_NOTE)
