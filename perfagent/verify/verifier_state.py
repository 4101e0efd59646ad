"""State and reporting shared by the worker-side verification protocols (CUDA launch specs, KernelBench)."""

from __future__ import annotations

import torch

from perfagent.sandbox.harness import Harness
from perfagent.sandbox.wire import WorkerResult
from perfagent.verify import checks as C
from perfagent.verify.accuracy import AccuracyTracker
from perfagent.verify.jobs import VerifyRequest


class VerifierState:
    """What every protocol accumulates while it runs, and how it becomes a ``WorkerResult``."""

    #: Noun for the thing verified, used in the degenerate-reference message ('kernel', 'problem').
    subject = "kernel"

    def __init__(self, h: Harness[VerifyRequest]) -> None:
        self.h = h
        self.book = C.CheckBook()
        self.errors = C.ErrorTracker()
        self.accuracy = AccuracyTracker()
        """Comparisons the float64 accuracy rule judged."""
        self.notes: list[str] = []
        self.ref_samples: list[torch.Tensor] = []
        self.distributions: list[str] = []
        self.sets = 0

    def extra_reference_sample(self, k: int) -> torch.Tensor | None:
        """The reference's output on one more input set (the ``k``-th), drawn for it alone, as a sample
        like ``ref_samples``'; None where the protocol cannot draw one."""
        return None

    def _confirm_identical(self) -> None:
        """Draw reference-only input sets until the outputs differ or ``IDENTICAL_CONFIRM_SETS`` agree:
        two input sets of an integral extreme (a maximum, a count) can give one output by chance."""
        while C.identical_outputs(self.ref_samples) and len(self.ref_samples) < C.IDENTICAL_CONFIRM_SETS:
            extra = self.extra_reference_sample(len(self.ref_samples))
            if extra is None:
                return
            self.ref_samples.append(extra)

    def _record_informative(self) -> None:
        """The reference must vary with its inputs, or no candidate can be told right from wrong."""
        self._confirm_identical()
        shapes = {s.shape for s in self.ref_samples}
        reason = C.degenerate_reason(self.ref_samples) if len(shapes) == 1 else None
        self.book.record(
            "reference-informative",
            reason and f"{reason}; a speed-up on this {self.subject} is not meaningful",
            f"the reference output varies with its inputs over {len(self.ref_samples)} input sets",
            severity="inconclusive",
        )

    def result(self) -> WorkerResult:
        detail = self.accuracy.pass_detail()
        if detail:  # a pass the dtype tolerance alone would have failed says why it passed
            self.book.pass_detail("correctness", detail)
        return WorkerResult(
            nonce=self.h.nonce,
            checks=self.book.checks(),
            device=self.h.device,
            device_name=self.h.device_name,
            seeds=[self.h.request.base_seed + i for i in range(self.h.request.seeds)],
            distributions=self.distributions,
            input_sets=self.sets,
            errors=self.errors.summary().model_copy(update=self.accuracy.summary_fields()),
            notes=self.notes + self.h.notes,
        )
