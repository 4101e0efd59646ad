"""Where an entry ran and whether the GPU held its clock: nvidia-smi queries, versions, host.

nvidia-smi does not honour ``CUDA_VISIBLE_DEVICES``, so the GPU is named by the index the worker was
pinned to. Everything here degrades to ``None`` when there is no NVIDIA GPU or no nvidia-smi: the CPU
suite records the host and versions only.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
from importlib import metadata

from perfagent.suite.models import GpuClock
from profilers.errors import ProfilerError
from profilers.process import run_command
from profilers.settings import TIMEOUTS

THROTTLE_DROP = 0.10
"""An SM clock this much lower after the measurements than before is flagged as throttling."""
_QUERY = "name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active"


def _smi(index: str | None) -> list[str] | None:
    if shutil.which("nvidia-smi") is None:
        return None
    argv = ["nvidia-smi", f"--query-gpu={_QUERY}", "--format=csv,noheader,nounits"]
    if index:
        argv += ["-i", index.split(",")[0]]
    try:
        done = run_command(argv, timeout_s=TIMEOUTS.probe_s)
    except ProfilerError:
        return None
    if not done.ok or not done.stdout.strip():
        return None
    return [f.strip() for f in done.stdout.strip().splitlines()[0].split(",")]


def _mhz(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


class GpuProbe:
    """nvidia-smi readings of one GPU (the worker's pinned index), taken before and after an entry."""

    def __init__(self, index: str | None) -> None:
        self.index = index
        self.name: str | None = None
        self.driver: str | None = None
        self._before: float | None = None
        self._max: float | None = None

    def start(self) -> None:
        fields = _smi(self.index)
        if fields and len(fields) >= 4:
            self.name, self.driver = fields[0], fields[1]
            self._before, self._max = _mhz(fields[2]), _mhz(fields[3])

    def finish(self) -> GpuClock | None:
        fields = _smi(self.index)
        if self.name is None or not fields or len(fields) < 4:
            return None
        after = _mhz(fields[2])
        return GpuClock(
            before_mhz=self._before,
            after_mhz=after,
            max_mhz=self._max,
            throttled=throttled(self._before, after),
            reasons=fields[4] if len(fields) > 4 else None,
        )


def throttled(before: float | None, after: float | None) -> bool:
    """True when the SM clock fell by more than ``THROTTLE_DROP`` across the measurements."""
    if not before or after is None:
        return False
    return after < before * (1.0 - THROTTLE_DROP)


def versions() -> dict[str, str]:
    """Versions that decide what a row means: python, perfagent, torch, triton (when installed)."""
    found = {"python": platform.python_version()}
    for dist in ("perfagent", "torch", "triton", "cuda-core"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def host() -> str:
    """This machine's host name."""
    return socket.gethostname()


def pinned_gpu() -> str | None:
    """The GPU index this process was pinned to (``CUDA_VISIBLE_DEVICES``), if any."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    return value if value not in (None, "", "-1") else None
