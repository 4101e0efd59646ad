"""Which harness ncu starts for a launch-spec kernel: the torch-free one when it can serve the spec, else torch's.

``torch_free_harness`` saves the torch import (3-5 s on a GPU host) of every ncu application start; it
draws the spec's inputs with NumPy and launches through ``cuda.core``. ``choose_harness`` sends a spec to
it when ``cuda.core`` and ``cuda.bindings`` are installed and every tensor argument's dtype and init is one
it draws (``numpy_inputs.unserved``); otherwise, or when ``PERFAGENT_PROFILE_HARNESS=torch``, to
``run_spec`` as before, with the reason. Parent side: nothing here imports torch or cuda.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from perfagent.workloads import numpy_inputs
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.core_errors import PerfAgentError
from profilers.model import Frozen

TORCH_HARNESS = "perfagent.workloads.run_spec"
TORCH_FREE_HARNESS = "perfagent.workloads.torch_free_harness"
HARNESS_ENV = "PERFAGENT_PROFILE_HARNESS"
"""``torch``: every profile through ``run_spec``; unset or ``auto``: the torch-free harness where it serves."""
HarnessName = Literal["torch-free", "torch"]


class HarnessChoice(Frozen):
    """The harness a profile runs, and why."""

    module: str
    """The module ncu starts (``python -m MODULE ...``)."""
    name: HarnessName
    reason: str = ""
    """Why the torch harness (empty for the torch-free one)."""

    def describe(self) -> str:
        """'harness: torch-free (perfagent.workloads.torch_free_harness)' or the torch one with its reason."""
        why = f": {self.reason}" if self.reason else ""
        return f"harness: {self.name} ({self.module}){why}"


TORCH_FREE = HarnessChoice(module=TORCH_FREE_HARNESS, name="torch-free")


def torch_harness(reason: str) -> HarnessChoice:
    return HarnessChoice(module=TORCH_HARNESS, name="torch", reason=reason)


def _missing_package() -> str | None:
    for package in ("numpy", "cuda.core", "cuda.bindings"):
        try:
            if importlib.util.find_spec(package) is None:
                return package
        except (ImportError, ValueError):  # a parent package missing or broken
            return package
    return None


def choose_harness(spec_path: str | Path) -> HarnessChoice:
    """The harness for profiling a kernel file through ``spec_path`` (the spec's arguments decide, the same
    for the original and every candidate)."""
    setting = os.environ.get(HARNESS_ENV, "auto").strip().lower()
    if setting == "torch":
        return torch_harness(f"{HARNESS_ENV}=torch")
    missing = _missing_package()
    if missing is not None:
        return torch_harness(f"{missing} is not installed")
    try:  # dtypes and inits are literals of the spec: nothing is resolved or read but the spec
        spec = load_launch_spec(spec_path)
    except (PerfAgentError, OSError, ValueError) as exc:  # the torch harness reports it as it always has
        return torch_harness(f"the spec does not load here ({getattr(exc, 'message', exc)})")
    for arg in spec.args:
        why = None if arg.is_scalar else numpy_inputs.unserved(arg)
        if why is not None:
            return torch_harness(f"the torch-free harness cannot draw {why}")
    return TORCH_FREE
