"""Judging a candidate's outputs against the reference's (KernelBench, worker side): structure, type,
shape, dtype, device, contiguity, aliasing, NaN/Inf and values within tolerance, with the float64 accuracy
rule (``accuracy.py``) for a float output outside the dtype tolerance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from perfagent.verify import accuracy as A
from perfagent.verify import checks as C
from perfagent.verify.verifier_state import VerifierState

Precise = Callable[[], Any]
"""The float64 output of the reference on one input set, computed on first call (None: unavailable)."""


class OutputJudge:
    """Compares outputs and records the verdicts in ``state``'s check book (and its error and accuracy
    trackers); a separate ``VerifierState`` gives a comparison whose checks are read, not kept."""

    def __init__(self, state: VerifierState) -> None:
        self.state = state

    def compare(
        self,
        got: Any,
        expected: Any,
        where: str,
        *,
        name: str = "correctness",
        cand_inputs: list[Any] | None = None,
        ref_inputs: list[Any] | None = None,
        precise: Precise | None = None,
    ) -> bool:
        """Compare every output with the reference's; ``precise``: the float64 run of the
        reference on the same inputs (on demand), for the accuracy rule."""
        problem = C.structure_problem(expected, got)
        self.state.book.record("output-structure", problem and f"{problem} on {where}")
        if problem:
            return False
        all_ok = True
        ref_input_ptrs = {C.storage_ptr(t) for t in C.all_tensors(ref_inputs or [])}
        cand_input_ptrs = {C.storage_ptr(t) for t in C.all_tensors(cand_inputs or [])}
        for (path, e), (_, g) in zip(C.flatten_outputs(expected), C.flatten_outputs(got), strict=True):
            if not isinstance(e, torch.Tensor):
                ok = scalar_close(g, e, self.state.h.request.tolerance)
                self.state.book.record(name, None if ok else f"{path}: got {g!r}, expected {e!r} on {where}")
                all_ok &= ok
                continue
            problems = C.contract_problems(path, e, g)
            for check in (
                "output-type",
                "output-shape",
                "output-dtype",
                "output-device",
                "output-contiguity",
            ):
                self.state.book.record(check, problems.get(check) and f"{problems[check]} on {where}")
            if any(k in problems for k in ("output-type", "output-shape", "output-device")):
                all_ok = False
                continue
            g_ptr, e_ptr = C.storage_ptr(g), C.storage_ptr(e)
            alias = None
            if g_ptr is not None and g_ptr == e_ptr:
                alias = f"{path} shares storage with the reference's output"
            elif g_ptr in cand_input_ptrs and e_ptr not in ref_input_ptrs:
                alias = f"{path} is (a view of) one of the candidate's inputs while the reference returns new memory"
            self.state.book.record("output-aliasing", alias and f"{alias} on {where}")
            atol, rtol = C.tolerance_for(e.dtype, self.state.h.request.tolerance)
            cmp = C.compare_tensors(g, e, atol, rtol)
            self.state.errors.add(cmp)
            self.state.book.record(
                "no-nan-inf", C.describe_nonfinite(path, cmp, where) if cmp.nonfinite else None
            )
            all_ok &= self._judge(name, path, g, e, cmp, where, precise)
        return all_ok

    def _judge(
        self,
        name: str,
        path: str,
        got: torch.Tensor,
        expected: torch.Tensor,
        cmp: C.Comparison,
        where: str,
        precise: Precise | None,
    ) -> bool:
        """Record ``name`` for one output: within the dtype tolerance of the original, or else (with
        the default tolerance) no less accurate than the original against its float64 run."""
        if cmp.ok:
            self.state.book.ok(name)
            return True
        detail = C.describe_mismatch(path, cmp, where)
        # NaN/Inf where the original is finite is never as accurate: no float64 run for it.
        fp64 = None if cmp.nonfinite else self._precise_output(precise, path, expected)
        if fp64 is not None:
            acc = A.compare_accuracy(got, expected, fp64, cmp.atol, cmp.rtol)
            self.state.accuracy.add(acc)
            if acc.ok:
                self.state.book.ok(name)
                return True
            detail = f"{detail}; {A.describe_accuracy(acc)}"
        self.state.book.fail(name, detail)
        return False

    def _precise_output(self, precise: Precise | None, path: str, expected: torch.Tensor) -> Any | None:
        # An explicit --tolerance/--atol/--rtol is the user's own bound: it alone decides.
        if precise is None or not self.state.h.request.tolerance.is_default():
            return None
        if not expected.is_floating_point() or expected.dtype == torch.float64:
            return None  # integers are exact; float64 outputs have no higher precision to run
        out = precise()
        if out is None:
            return None
        leaf = dict(C.flatten_outputs(out)).get(path)
        return leaf if A.applies(expected, leaf) else None


def scalar_close(got: Any, expected: Any, tolerance: Any) -> bool:
    if isinstance(expected, bool | str | type(None)):
        return bool(got == expected)
    if isinstance(expected, int | float) and isinstance(got, int | float) and not isinstance(got, bool):
        atol = tolerance.atol if tolerance.atol is not None else 1e-4
        rtol = tolerance.rtol if tolerance.rtol is not None else 1e-4
        return abs(got - expected) <= atol + rtol * abs(expected)
    return bool(got == expected)
