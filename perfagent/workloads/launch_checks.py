"""Checks of a resolved launch that need no GPU: the kernel takes as many arguments as the spec gives,
and the buffers fit in GPU memory (this GPU's when one is visible, else the largest GPU perfagent knows).

Run by ``preflight_launch_spec`` (here, so that resolving a launch and checking it import in one
direction) — so ``verify``, ``bench`` and ``optimize --propose-only`` refuse the
same specs with the same messages (exit 2) before any worker, build or proposal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from knowledge.gpus import all_gpus
from perfagent.workloads.launch_resolve import ResolvedLaunch, param_sets, resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from perfagent.workloads.model import RunnableWorkload
from profilers.core_errors import BadInput

_ITEM_BYTES = {"bool": 1, "bfloat16": 2}
_GIB = 1024**3


def _item_bytes(dtype: str) -> int:
    bits = re.search(r"\d+", dtype)
    return _ITEM_BYTES.get(dtype, int(bits.group()) // 8 if bits else 4)


def kernel_arity(source: str, kernel: str) -> int | None:
    """How many parameters ``__global__ ... kernel(...)`` declares in ``source`` (None: not found)."""
    match = re.search(r"__global__[^;{]*?\b" + re.escape(kernel) + r"\s*\(", source)
    if match is None:
        return None
    depth, start, commas = 1, match.end(), 0
    for i in range(start, len(source)):
        ch = source[i]
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
            if depth == 0:
                return 0 if not source[start:i].strip() or source[start:i].strip() == "void" else commas + 1
        elif ch == "," and depth == 1:
            commas += 1
    return None


def memory_limit() -> tuple[float, str]:
    """(bytes, what it is): the visible GPU's memory, else the largest GPU memory perfagent knows."""
    # torch is optional here: without it the largest GPU perfagent knows is assumed
    try:
        import torch

        if torch.cuda.is_available():
            total = float(torch.cuda.get_device_properties(0).total_memory)
            return total, f"{torch.cuda.get_device_name(0)}'s {total / _GIB:.0f} GiB"
    except ImportError:
        pass
    largest = max((g for g in all_gpus() if g.memory_gib), key=lambda g: g.memory_gib or 0.0, default=None)
    if largest is None or largest.memory_gib is None:
        return float("inf"), "no known GPU"
    return (
        largest.memory_gib * _GIB,
        f"the largest GPU perfagent knows ({largest.name}, {largest.memory_gib:g} GiB)",
    )


def check_resolved(resolved: ResolvedLaunch, spec_path: str | Path) -> None:
    """Raise ``BadInput`` when the kernel's parameter count differs from the spec's arguments, or the
    spec's buffers cannot fit in GPU memory."""
    try:
        source = Path(resolved.source).read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    arity = kernel_arity(source, resolved.kernel)
    if arity is not None and arity != len(resolved.args):
        raise BadInput(
            f"launch spec {spec_path}: {resolved.kernel} takes {arity} argument(s) but the spec gives "
            f"{len(resolved.args)} ({', '.join(a.name for a in resolved.args)})",
            hint="list every kernel parameter as an [[args]] entry, in order (see docs/verify.md)",
        )
    total = sum(a.numel * _item_bytes(a.dtype) for a in resolved.args if not a.is_scalar)
    limit, what = memory_limit()
    if total > limit:
        raise BadInput(
            f"launch spec {spec_path}: the buffers need {total / _GIB:,.1f} GiB at params "
            f"{resolved.params}, more than {what}",
            hint="use smaller [params] (timing needs only enough work to fill the GPU)",
        )


def preflight_launch_spec(ref: RunnableWorkload, cand: RunnableWorkload | None) -> None:
    """Resolve the spec for the reference and the candidate here, so that a bad spec, a bad
    expression or an ambiguous entry point is bad input (exit 2) before any worker starts.

    Raises:
        BadInput: as ``preflight_files``.
    """
    assert ref.spec_path is not None
    preflight_files(ref.spec_path, [(w.path, w.kernel) for w in (ref, cand) if w is not None])


def preflight_files(spec_path: str | Path, files: Sequence[tuple[str | Path, str | None]]) -> None:
    """Resolve the spec for each (kernel file, entry point) at every parameter set, and check what needs
    no GPU (argument count, buffers that fit in GPU memory): what ``verify`` refuses before any worker,
    ``optimize --propose-only`` refuses before any proposal.

    Raises:
        BadInput: as ``resolve_launch``, or ``check_resolved``.
    """
    spec = load_launch_spec(spec_path)
    for path, kernel in files:
        for params in param_sets(spec):
            resolved = resolve_launch(spec, spec_path, source=path, kernel=kernel, params=params)
            check_resolved(resolved, spec_path)
