"""A KernelBench model and its inputs, built the one way every job builds them (worker side).

Profiling (``run_spec``) and timing (``timing.runners``) used to build them each in their own order:
one re-seeded before constructing the model and one did not, so when ``get_init_inputs()`` drew
random numbers the two jobs ran models with different weights. The order here is the verifier's:
seed, ``get_init_inputs()``; seed, construct, ``.to(device)``; seed, ``get_inputs()`` on the device.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from perfagent.workloads.inputs import seed_everything, to_device

Guard = Callable[[str, Callable[[], Any]], Any]
"""Runs one named step (e.g. to attribute its failure to the reference or the candidate)."""


def _unguarded(_label: str, step: Callable[[], Any]) -> Any:
    return step()


def init_inputs(problem: ModuleType) -> list[Any]:
    """``get_init_inputs()`` of the problem, or no arguments when it defines none."""
    return list(problem.get_init_inputs()) if hasattr(problem, "get_init_inputs") else []


def build_model(
    problem: ModuleType, impl: ModuleType, cls_name: str, *, seed: int, device: str, guard: Guard = _unguarded
) -> tuple[Any, list[Any]]:
    """(``impl.<cls_name>(*get_init_inputs())`` on ``device``, ``problem.get_inputs()`` on ``device``)."""
    seed_everything(seed)
    init = init_inputs(problem)
    seed_everything(seed)
    model = guard(f"{cls_name}(*get_init_inputs())", lambda: getattr(impl, cls_name)(*init))
    if isinstance(model, torch.nn.Module):
        model = guard(f"{cls_name}.to(device)", lambda: model.to(device))
    seed_everything(seed)
    return model, to_device(list(problem.get_inputs()), device)
