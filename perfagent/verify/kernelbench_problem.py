"""A KernelBench problem loaded for verification (worker side): the reference and candidate modules, and
the (reference, candidate) model pair built for each init seed."""

from __future__ import annotations

import threading
from typing import Any

import torch

from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure
from perfagent.sandbox.integrity import HarnessSnapshot
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.launch_count import LaunchCounter
from perfagent.verify.model_state import load_reference_state
from perfagent.verify.models import Check
from perfagent.workloads.inputs import clone_all, seed_everything
from perfagent.workloads.kernelbench import load_module


class Problem:
    """The loaded reference and candidate modules, and model pairs per init seed."""

    def __init__(self, h: Harness[VerifyRequest]) -> None:
        self.h = h
        req = h.request
        assert req.candidate is not None
        self.ref_mod = h.reference(
            "import", lambda: load_module(req.reference.path, "perfagent_reference"), phase="build"
        )
        for attr in ("Model", "get_inputs"):
            if not hasattr(self.ref_mod, attr):
                raise ReferenceFailure(f"{req.reference.path} defines no {attr}")
        self.snapshot = HarnessSnapshot.take()
        self.threads_before = set(threading.enumerate())
        candidate = req.candidate
        assert candidate is not None  # a KernelBench verification always has a candidate
        if candidate.path == req.reference.path:
            self.cand_mod = self.ref_mod
        else:
            self.cand_mod = h.candidate(
                "import", lambda: load_module(candidate.path, "perfagent_candidate"), phase="build"
            )
        if not hasattr(self.cand_mod, "ModelNew"):
            raise CandidateFailure(
                Check(name="candidate-runs", passed=False, detail="the candidate module defines no ModelNew")
            )
        self.launches = LaunchCounter().install(self.cand_mod)
        self._pairs: dict[int, tuple[Any, Any]] = {}
        self.copied_note = ""
        self.state_problems: list[str] = []

    def init_inputs(self) -> list[Any]:
        fn = getattr(self.ref_mod, "get_init_inputs", None)
        return list(fn()) if fn is not None else []

    def models(self, init_seed: int) -> tuple[Any, Any]:
        if init_seed in self._pairs:
            return self._pairs[init_seed]
        h, device = self.h, self.h.device
        seed_everything(init_seed)
        init = self.h.reference("get_init_inputs()", self.init_inputs)
        seed_everything(init_seed)
        ref = h.reference(
            "Model(*get_init_inputs())",
            lambda: self.ref_mod.Model(*clone_all(init)).to(device),
            phase="build",
        )
        seed_everything(init_seed)
        cand = h.candidate(
            "ModelNew(*get_init_inputs())", lambda: self.cand_mod.ModelNew(*clone_all(init)), phase="build"
        )
        if isinstance(cand, torch.nn.Module):
            cand = h.candidate("ModelNew.to(device)", lambda: cand.to(device), phase="build")
            copied, problem = load_reference_state(ref, cand, init_seed)
            self.copied_note = copied or self.copied_note
            if problem:
                self.state_problems.append(problem)
        self._pairs[init_seed] = (ref, cand)
        return ref, cand


def call_model(model: Any, args: list[Any]) -> Any:
    with torch.no_grad():
        return model(*args)
