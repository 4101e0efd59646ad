"""The KernelBench verification protocol (worker side).

Per seed (``--seeds N``), two input sets of the problem's own shapes: ``get_inputs()`` drawn with
that seed, and the same tensors re-drawn from another distribution. Per input set:

1. poison the allocator, run the candidate on fresh clones (before the reference has seen the
   inputs), assert the clones are unchanged;
2. run the reference on fresh clones;
3. compare: output structure, type (exactly ``torch.Tensor``), shape, dtype, device, contiguity,
   NaN/Inf, values within tolerance; the output must not alias the inputs or the reference output.
   A float output outside the dtype tolerance still passes when it is no less accurate than the
   original against a float64 run of the reference (``accuracy.py``; default tolerance only).

Then, per seed, the candidate runs twice back to back on the *same* buffers with the two input
sets copied in (same ``data_ptr``, same ``id``): results cached by pointer/identity, or returned in
the same storage twice, fail ``fresh-results``. Two init seeds alternate for the models. After every
candidate call: no new live threads, no changed harness/timer functions, and on CUDA the output
must not change between a current-stream sync and a device-wide sync (work left on another stream).
The reference must be deterministic and must vary with its inputs (else: inconclusive).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

from perfagent.sandbox.harness import CandidateFailure, Harness
from perfagent.sandbox.integrity import new_threads
from perfagent.sandbox.wire import WorkerResult
from perfagent.verify import checks as C
from perfagent.verify.float64_reference import Float64Reference
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.kernelbench_problem import Problem, call_model
from perfagent.verify.launch_count import OWN_KERNEL_CHECK
from perfagent.verify.models import Check
from perfagent.verify.output_judge import OutputJudge, Precise
from perfagent.verify.verifier_state import VerifierState
from perfagent.workloads.inputs import (
    DISTRIBUTIONS,
    NATIVE,
    clone_all,
    copy_into,
    enable_uninitialized_fill,
    poison_allocator,
    redraw,
    seed_everything,
    to_device,
)
from perfagent.workloads.kernelbench import inspect_python
from perfagent.workloads.launch_spec import kernels_in_source

INIT_SEED_OFFSET = 7919
REDRAW_SEED_OFFSET = 1_000_003
SMOKE_SEED_OFFSET = 10_000_019


def _finite_everywhere(value: Any) -> bool:
    return all(
        bool(torch.isfinite(v).all().item())
        for _, v in C.flatten_outputs(value)
        if isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())
    )


class Verifier(VerifierState):
    """Runs the protocol and fills a ``CheckBook``."""

    subject = "problem"

    def __init__(self, h: Harness[VerifyRequest]) -> None:
        super().__init__(h)
        self.calls = 0
        self.forward_launches = 0
        """Launches of the candidate's own Triton kernels inside its forward() calls (launch hooks)."""
        self.fp64 = Float64Reference(h, self.notes)
        self.judge = OutputJudge(self)
        self._problem: Problem | None = None
        """The problem being verified, for reference-only input sets."""

    # -- candidate call with runtime checks --------------------------------------------------
    def cand(self, problem: Problem, model: Any, args: list[Any], label: str, *, first: bool = False) -> Any:
        """One candidate call on ``args`` (poisoned allocator before; thread, harness and stream checks after)."""
        poison_allocator(self.h.device)
        self.calls += 1
        stream_probe: list[Any] = []
        launched_before = problem.launches.total

        def run() -> Any:
            out = call_model(model, args)
            if self.h.device.startswith("cuda"):
                torch.cuda.current_stream().synchronize()
                stream_probe.extend(
                    v.clone() if isinstance(v, torch.Tensor) else v for _, v in C.flatten_outputs(out)
                )
            return out

        out = self.h.candidate(label, run, phase="first" if first else "call")
        self.forward_launches += problem.launches.total - launched_before
        if stream_probe:
            after = [v for _, v in C.flatten_outputs(out)]
            moved = C.changed_inputs(stream_probe, after)
            self.book.record(
                "stream-sync",
                f"output changed after a device-wide sync ({moved[0].replace('input', 'output')}): work still running on another stream when the current stream finished ({label})"
                if moved
                else None,
            )
        threads = new_threads(problem.threads_before, {self.h.watchdog.thread} if self.h.watchdog else set())
        self.book.record(
            "runtime:no-thread-injection",
            f"thread(s) {', '.join(threads)} still running after {label}: work deferred to a thread escapes timing"
            if threads
            else None,
        )
        changed = problem.snapshot.changed()
        self.book.record(
            "runtime:harness-intact",
            f"replaced after {label}: {', '.join(changed[:8])}{' ...' if len(changed) > 8 else ''} (monkey-patching of torch/time/timer functions)"
            if changed
            else None,
        )
        if changed:
            raise CandidateFailure(
                Check(
                    name="runtime:harness-intact",
                    passed=False,
                    detail=f"harness functions replaced ({', '.join(changed[:8])}); comparisons cannot be trusted",
                )
            )
        return out

    def inputs_unchanged(self, saved: list[Any], used: list[Any], label: str) -> None:
        changes = C.changed_inputs(saved, used)
        self.book.record(
            "inputs-unchanged",
            f"{'; '.join(changes)} after {label} (the candidate mutates its inputs)" if changes else None,
        )

    # -- the protocol ----------------------------------------------------------------------------
    def run(self) -> None:
        h = self.h
        req = h.request
        problem = Problem(h)
        self._problem = problem
        self._reference_smoke_run(problem)
        for i in range(req.seeds):
            seed = req.base_seed + i
            init_seed = req.base_seed + INIT_SEED_OFFSET * (i % 2)
            ref_model, cand_model = problem.models(init_seed)
            dist = DISTRIBUTIONS[i % len(DISTRIBUTIONS)]
            seed_everything(seed)
            xa = to_device(h.reference("get_inputs()", lambda: list(problem.ref_mod.get_inputs())), h.device)
            # A seed of its own: with the problem's seed, a "normal" re-draw would repeat get_inputs()'s randn.
            xb = redraw(xa, dist, REDRAW_SEED_OFFSET + seed)
            results: dict[str, tuple[Any, Precise]] = {}
            for tag, x in ((NATIVE, xa), (dist, xb)):
                where = f"seed {seed} / {tag} inputs"
                c_in = clone_all(x)
                seed_everything(seed)
                c_out = self.cand(
                    problem,
                    cand_model,
                    c_in,
                    f"call on {where} (before the reference)",
                    first=self.calls == 0,
                )
                self.inputs_unchanged(x, c_in, f"the candidate call on {where}")
                r_in = clone_all(x)
                seed_everything(seed)
                r_out = h.reference(f"call on {where}", partial(call_model, ref_model, r_in))
                if tag != NATIVE and not _finite_everywhere(r_out):
                    self.notes.append(
                        f"the reference gives NaN/Inf on {dist} inputs (seed {seed}); that input set was skipped"
                    )
                    continue
                if i == 0 and tag == NATIVE:
                    self._reference_determinism(ref_model, x, r_out, where)
                self.sets += 1
                if tag not in self.distributions:
                    self.distributions.append(tag)
                precise = self.fp64.runner(ref_model, x, seed, where)
                results[tag] = (r_out, precise)
                self.ref_samples.append(_sample(r_out))
                self.judge.compare(c_out, r_out, where, cand_inputs=c_in, ref_inputs=r_in, precise=precise)
            if len(results) == 2:
                self._back_to_back(problem, cand_model, xa, xb, results[NATIVE], results[dist], seed, dist)
            if i == 0 and h.device.startswith("cuda"):
                self._kernel_evidence(problem, cand_model, xa)
        self._own_kernels_ran(problem)
        if problem.copied_note:  # known once the models are built (lazily, per init seed)
            self.notes.append(problem.copied_note)
        if problem.state_problems:
            self.book.fail("strict-state-dict", problem.state_problems[0])
        self._degenerate()

    def _own_kernels_ran(self, problem: Problem) -> None:
        """Fail ``own-kernel-not-run`` when the candidate defines Triton kernels and its forward() calls
        launched none of them (counted by launch hooks, ``launch_count``)."""
        kernels = problem.launches.kernels
        if not kernels or not self.calls:
            return
        if self.forward_launches == 0:
            self.book.fail(
                OWN_KERNEL_CHECK,
                f"the candidate defines Triton kernel(s) {', '.join(kernels)} but none was launched in its "
                f"{self.calls} forward() call(s): the output came from other code (e.g. the PyTorch expression)",
            )
        else:
            self.notes.append(
                f"launch hooks: {problem.launches.describe()} in {self.calls} candidate call(s)"
            )

    def _kernel_evidence(self, problem: Problem, model: Any, x: list[Any]) -> None:
        """On CUDA, profile one candidate call: a kernel the candidate defines must run
        (evaluation reference §4 check 7); library kernels seen are listed."""
        req = self.h.request
        assert req.candidate is not None
        info = inspect_python(req.candidate.path)
        expected = set(info.jit_kernels)
        for src in info.cuda_sources:
            expected.update(kernels_in_source(src))
        if not expected:
            return

        args = clone_all(x)

        def run() -> list[str]:
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                call_model(model, args)
                torch.cuda.synchronize()
            return [
                evt.name for evt in prof.events() if str(getattr(evt, "device_type", "")).endswith("CUDA")
            ]

        names = self.h.candidate("call under torch.profiler (kernel evidence)", run)
        if not names:
            self.book.ok(
                "kernel-launched",
                "torch.profiler recorded no GPU kernel at all: kernel evidence not available",
                severity="warning",
            )
            return
        ours = sorted({n for n in names if any(k in n for k in expected)})
        others = sorted({n for n in names if n not in ours})
        if ours:
            extra = f"; other kernels: {', '.join(o[:60] for o in others[:4])}" if others else ""
            self.book.ok("kernel-launched", f"ran: {', '.join(o[:80] for o in ours[:4])}{extra}")
        else:
            seen = ", ".join(o[:60] for o in others[:6]) or "no GPU kernel at all"
            self.book.fail(
                OWN_KERNEL_CHECK,
                f"none of the candidate's kernels ({', '.join(sorted(expected))}) ran during forward(); kernels seen: {seen}",
            )

    def _reference_smoke_run(self, problem: Problem) -> None:
        """Run the reference once on a throw-away input set first: a broken reference is bad input
        (exit 2), not a candidate failure. Its output is dropped before any candidate call."""
        req = self.h.request
        ref_model, _ = problem.models(req.base_seed)
        seed_everything(req.base_seed + SMOKE_SEED_OFFSET)
        x = to_device(
            self.h.reference("get_inputs()", lambda: list(problem.ref_mod.get_inputs())), self.h.device
        )
        seed_everything(req.base_seed + SMOKE_SEED_OFFSET)
        self.h.reference("call on a warm-up input set", lambda: call_model(ref_model, x), phase="first")

    def extra_reference_sample(self, k: int) -> torch.Tensor | None:
        problem = self._problem
        if problem is None:
            return None
        req = self.h.request
        seed = req.base_seed + C.EXTRA_SET_SEED_OFFSET + k
        ref_model, _ = problem.models(req.base_seed)
        seed_everything(seed)
        x = to_device(
            self.h.reference("get_inputs()", lambda: list(problem.ref_mod.get_inputs())), self.h.device
        )
        seed_everything(seed)
        out = self.h.reference(
            f"call on seed {seed} / {NATIVE} inputs (reference only: do its outputs vary?)",
            lambda: call_model(ref_model, x),
        )
        return _sample(out) if _finite_everywhere(out) else None

    def _reference_determinism(self, ref_model: Any, x: list[Any], first: Any, where: str) -> None:
        again = self.h.reference(f"second call on {where}", lambda: call_model(ref_model, clone_all(x)))
        ok = C.structure_problem(first, again) is None
        detail = None
        if ok:
            for (path, a), (_, b) in zip(C.flatten_outputs(first), C.flatten_outputs(again), strict=True):
                if isinstance(a, torch.Tensor):
                    atol, rtol = C.tolerance_for(a.dtype, self.h.request.tolerance)
                    cmp = C.compare_tensors(b, a, atol, rtol)
                    if not cmp.ok:
                        detail = f"two reference calls on the same inputs differ: {C.describe_mismatch(path, cmp, where)}"
                        break
        self.book.record(
            "reference-deterministic",
            detail,
            "the reference gives the same result twice",
            severity="inconclusive",
        )

    def _back_to_back(
        self,
        problem: Problem,
        model: Any,
        xa: list[Any],
        xb: list[Any],
        a: tuple[Any, Precise],
        b: tuple[Any, Precise],
        seed: int,
        dist: str,
    ) -> None:
        """``a``, ``b``: the reference output and its float64 run for ``xa`` and ``xb``."""
        (ra, precise_a), (rb, precise_b) = a, b
        buf = clone_all(xa)
        label_a = f"call on seed {seed} / {NATIVE} inputs (after the reference, reused buffers)"
        seed_everything(seed)
        out_a = self.cand(problem, model, buf, label_a)
        self.inputs_unchanged(xa, buf, label_a)
        self.judge.compare(
            out_a, ra, f"seed {seed} / {NATIVE} inputs (candidate after reference)", precise=precise_a
        )
        copy_into(buf, xb)
        label_b = f"call on seed {seed} / {dist} inputs copied into the same buffers"
        seed_everything(seed)
        out_b = self.cand(problem, model, buf, label_b)
        self.inputs_unchanged(xb, buf, label_b)
        where = f"seed {seed} / {dist} inputs in the buffers of the previous call (same data_ptr and id)"
        if _share_storage(out_a, out_b):
            self.book.fail(
                "fresh-results",
                f"two calls returned the same output storage (the first result is overwritten by the second) on {where}",
            )
            return
        self._fresh_results(out_b, ra, rb, where, precise_b)

    def _fresh_results(self, out: Any, previous: Any, expected: Any, where: str, precise: Precise) -> None:
        """Record whether ``out`` (new inputs in reused buffers) matches ``expected``; a mismatch that matches
        ``previous`` (the reference for the old inputs) is named as a stale cache."""
        sub = VerifierState(self.h)  # its checks are read below, not kept
        if OutputJudge(sub).compare(out, expected, where, name="fresh-results", precise=precise):
            self.book.ok("fresh-results", "new inputs in reused buffers give new results")
            self.errors.merge(sub.errors)
            self.accuracy.merge(sub.accuracy)
            return
        detail = next((c.detail for c in sub.book.checks() if not c.passed), "mismatch")
        if self._matches(out, previous):
            detail = f"returned the previous call's result for new inputs in the same buffers (a cache keyed by data_ptr/id/shape): {detail}"
        self.book.fail("fresh-results", detail)

    def _matches(self, got: Any, expected: Any) -> bool:
        """``got`` has ``expected``'s structure, and each of its tensors matches within tolerance."""
        return C.structure_problem(expected, got) is None and all(
            not isinstance(e, torch.Tensor)
            or (
                isinstance(g, torch.Tensor)
                and g.shape == e.shape
                and C.compare_tensors(g, e, *C.tolerance_for(e.dtype, self.h.request.tolerance)).ok
            )
            for (_, e), (_, g) in zip(C.flatten_outputs(expected), C.flatten_outputs(got), strict=True)
        )

    def _degenerate(self) -> None:
        if not self.ref_samples:
            self.book.fail(
                "reference-informative",
                "no input set gave a finite reference output",
                severity="inconclusive",
            )
            return
        self._record_informative()


def _sample(out: Any) -> torch.Tensor:
    parts = [C.subsample(v) for _, v in C.flatten_outputs(out) if isinstance(v, torch.Tensor)]
    parts += [
        torch.tensor([float(v)], dtype=torch.float64)
        for _, v in C.flatten_outputs(out)
        if isinstance(v, int | float)
    ]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.float64)


def run_kernelbench(h: Harness[VerifyRequest]) -> WorkerResult:
    """Verify a KernelBench candidate; a candidate failure stops the run and is reported with the checks so far."""
    enable_uninitialized_fill()  # verification only: timing must not pay for a fill of every allocation
    v = Verifier(h)
    try:
        v.run()
    except CandidateFailure as failure:
        v.book.fail(failure.check.name, failure.check.detail, failure.check.severity)
    return v.result()


def _share_storage(first: Any, second: Any) -> bool:
    """Some non-empty tensor of ``second`` lives in the storage of the tensor at the same place in ``first``."""
    return any(
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.numel() > 0
        and C.storage_ptr(a) is not None
        and C.storage_ptr(a) == C.storage_ptr(b)
        for (_, a), (_, b) in zip(C.flatten_outputs(first), C.flatten_outputs(second), strict=False)
    )
