"""The launch-spec verification protocol for bare ``__global__`` kernels (worker side, CUDA only).

For every parameter set (``params``, then each ``check_params`` shape) and seed:

1. inputs/inouts are drawn (first seed: the declared init; later seeds: other distributions for
   float inputs with ``vary``) and copied into the candidate's input buffers, which are reused
   across seeds (same pointers, new contents: results cached on the device show);
2. candidate launch 1 with outputs poisoned by NaN (floats) / 0xFF bytes (integers);
3. reference launch (outputs poisoned the same way);
4. candidate launch 2 with outputs poisoned by a second pattern;
5. every written argument (outputs and inouts) of both candidate launches is compared with the
   reference; an element that still holds poison 1 after launch 1 *and* poison 2 after launch 2
   was never written; inputs must be unchanged; CUDA errors after each launch fail the run;
6. a float output outside the dtype tolerance is judged by the accuracy rule (``accuracy.py``) against
   a float64 run of the original (``float64_launch``: its source promoted to double), launched only
   then, once per seed and parameter set.

Every launch is prepared by ``perfagent.workloads.launch_prep`` (as timing and profiling prepare theirs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from perfagent.sandbox.harness import CandidateFailure, Harness, ReferenceFailure
from perfagent.sandbox.wire import WorkerResult
from perfagent.verify import accuracy as A
from perfagent.verify import checks as C
from perfagent.verify.float64_launch import Float64Launches, Outputs
from perfagent.verify.jobs import VerifyRequest
from perfagent.verify.models import Check, Tolerance
from perfagent.verify.verifier_state import VerifierState
from perfagent.workloads import cuda_launch
from perfagent.workloads.cuda_launch import CompiledKernel, is_poison
from perfagent.workloads.inputs import DISTRIBUTIONS, enable_uninitialized_fill
from perfagent.workloads.launch_prep import (
    PreparedLaunch,
    compile_launch,
    input_buffers,
    prepare_launch,
    seeded_inputs,
)
from perfagent.workloads.launch_resolve import ResolvedArg, ResolvedLaunch, param_sets, resolve_launch
from perfagent.workloads.launch_spec import LaunchSpec, load_launch_spec
from perfagent.workloads.model import RunnableWorkload
from profilers.core_errors import BadInput

DECLARED = "declared init"


@dataclass
class ParamSet:
    """One parameter set of the spec, resolved and compiled for the reference and the candidate."""

    index: int
    """0 for ``params``, then one per ``check_params`` entry."""
    label: str
    """'width=64, height=64': how messages name the shape."""
    ref: ResolvedLaunch
    cand: ResolvedLaunch
    ref_kernel: CompiledKernel
    cand_kernel: CompiledKernel
    cand_inputs: dict[str, Any]
    """The candidate's input buffers, which live across seeds: same pointers, new contents."""
    tolerance: Tolerance

    @property
    def in_args(self) -> list[ResolvedArg]:
        return [a for a in self.ref.args if not a.is_scalar and a.role in ("input", "inout")]

    @property
    def written(self) -> list[ResolvedArg]:
        return [a for a in self.ref.args if not a.is_scalar and a.role in ("output", "inout")]


def _clones(tensors: dict[str, Any]) -> dict[str, Any]:
    return {k: v.clone() for k, v in tensors.items()}


class KernelVerifier(VerifierState):
    def __init__(self, h: Harness[VerifyRequest]) -> None:
        super().__init__(h)
        self.launches = 0
        self._compiled: dict[tuple[str, str, tuple[tuple[str, str], ...]], CompiledKernel] = {}
        self.fp64 = Float64Launches(h, self.notes)
        self._first: ParamSet | None = None
        """The first parameter set (the one ``ref_samples`` come from), for reference-only input sets."""

    def compiled(self, resolved: ResolvedLaunch, *, reference: bool) -> CompiledKernel:
        key = (resolved.source, resolved.kernel, tuple(sorted(resolved.defines.items())))
        if key not in self._compiled:
            guard = self.h.reference if reference else self.h.candidate
            self._compiled[key] = compile_launch(
                resolved, lambda label, step: guard(label, step, phase="build")
            )
        return self._compiled[key]

    def tolerance(self, resolved: ResolvedLaunch) -> Tolerance:
        asked = self.h.request.tolerance
        return Tolerance(
            atol=asked.atol if asked.atol is not None else resolved.atol,
            rtol=asked.rtol if asked.rtol is not None else resolved.rtol,
        )

    def run_launch(self, who: str, launch: PreparedLaunch, label: str) -> None:
        if who == "reference":
            self.h.reference(label, launch.launch)
        else:
            self.h.candidate(label, launch.launch, phase="first" if self.launches == 0 else "call")
            self.launches += 1

    def run(self) -> None:
        req = self.h.request
        assert req.candidate is not None and req.reference.spec_path is not None
        spec_path = req.reference.spec_path
        try:
            spec = load_launch_spec(spec_path)
        except BadInput as exc:
            raise ReferenceFailure(str(exc)) from None
        attrs = cuda_launch.device_attributes()
        for pi, params in enumerate(param_sets(spec)):
            self.run_params(spec, spec_path, pi, params, attrs)
        self._degenerate()

    def run_params(
        self,
        spec: LaunchSpec,
        spec_path: str,
        pi: int,
        params: dict[str, float | int],
        attrs: dict[str, float | int],
    ) -> None:
        def resolve(workload: RunnableWorkload) -> ResolvedLaunch:
            return resolve_launch(
                spec,
                spec_path,
                source=workload.path,
                kernel=workload.kernel,
                params=params,
                device_attrs=attrs,
            )

        ps = self._param_set(pi, params, resolve)
        if pi == 0:
            self._first = ps
        req = self.h.request
        n_seeds = req.seeds if pi == 0 else max(1, min(2, req.seeds))
        for i in range(n_seeds):
            self._run_seed(ps, i)

    def _param_set(
        self, pi: int, params: dict[str, float | int], resolve: Callable[[RunnableWorkload], ResolvedLaunch]
    ) -> ParamSet:
        """Resolve and compile both kernels for ``params`` (a spec that does not resolve is the
        reference's fault, an entry the spec cannot launch the candidate's)."""
        req = self.h.request
        assert req.candidate is not None
        try:
            ref_l = resolve(req.reference)
        except BadInput as exc:
            raise ReferenceFailure(str(exc)) from None
        try:
            cand_l = resolve(req.candidate)
        except BadInput as exc:
            raise CandidateFailure(
                Check(
                    name="candidate-runs", passed=False, detail=f"cannot launch the candidate: {exc.message}"
                )
            ) from None
        return ParamSet(
            index=pi,
            label=", ".join(f"{k}={v}" for k, v in params.items()),
            ref=ref_l,
            cand=cand_l,
            ref_kernel=self.compiled(ref_l, reference=True),
            cand_kernel=self.compiled(cand_l, reference=False),
            cand_inputs=input_buffers(ref_l, self.h.device),
            tolerance=self.tolerance(ref_l),
        )

    def _run_seed(self, ps: ParamSet, i: int) -> None:
        """Candidate, reference, candidate again on one seed's inputs; then compare what they wrote."""
        device = self.h.device
        seed = self.h.request.base_seed + i + 1000 * ps.index
        dist = None if i == 0 else DISTRIBUTIONS[(i - 1) % len(DISTRIBUTIONS)]
        tag = dist or DECLARED
        where = f"{ps.label} / seed {seed} / {tag} inputs"
        masters = seeded_inputs(ps.ref, seed=seed, device=device, dist=dist)
        # 1. candidate, first poison, before the reference
        c1 = self._candidate_launch(ps, masters, 1, f"launch on {where} (before the reference)")
        self._inputs_unchanged(ps.in_args, masters, c1, f"candidate launch on {where}")
        # 2. reference
        ref_launch = prepare_launch(ps.ref, ps.ref_kernel, inputs=_clones(masters), poison=1, device=device)
        self.run_launch("reference", ref_launch, f"launch on {where}")
        ref_out = {a.name: ref_launch.buffers[a.name].clone() for a in ps.written}
        if ps.index == 0 and i == 0:
            self._reference_writes(ps, masters, ref_out, where)
        # 3. candidate, second poison, after the reference
        c2 = self._candidate_launch(ps, masters, 2, f"second launch on {where} (after the reference)")
        self._inputs_unchanged(ps.in_args, masters, c2, f"second candidate launch on {where}")

        self.sets += 1
        if tag not in self.distributions:
            self.distributions.append(tag)
        if ps.index == 0:
            self.ref_samples.append(torch.cat([C.subsample(t) for t in ref_out.values()]))
        precise = self.fp64.runner(ps.index, ps.ref, masters, [a.name for a in ps.written], where)
        for a in ps.written:
            self._compare_written(
                a,
                ps.tolerance,
                ref_out[a.name],
                (c1[a.name], c2[a.name]),
                where,
                partial(_leaf, precise, a.name),
            )

    def _candidate_launch(
        self, ps: ParamSet, masters: dict[str, Any], poison: int, label: str
    ) -> dict[str, Any]:
        """Launch the candidate on ``masters`` copied into its own input buffers, outputs holding
        ``poison``; returns its buffers after the launch (written arguments cloned)."""
        launch = prepare_launch(
            ps.cand, ps.cand_kernel, inputs=masters, poison=poison, device=self.h.device, into=ps.cand_inputs
        )
        self.run_launch("candidate", launch, label)
        written = {a.name for a in ps.written}
        return {k: v.clone() if k in written else v for k, v in launch.buffers.items()}

    def _compare_written(
        self,
        a: ResolvedArg,
        tol: Tolerance,
        expected: Any,
        got: tuple[Any, Any],
        where: str,
        precise: Callable[[], Any | None] = lambda: None,
    ) -> None:
        """Both candidate launches' ``a`` against the reference's, and (outputs) every element written;
        ``precise``: the float64 run's ``a`` on the same inputs (on demand), for the accuracy rule."""
        atol, rtol = C.tolerance_for(expected.dtype, tol)
        for run_label, value in (("launch 1", got[0]), ("launch 2", got[1])):
            cmp = C.compare_tensors(value, expected, atol, rtol)
            self.errors.add(cmp)
            fp64 = None if cmp.ok or not self._rule_applies(cmp, expected) else precise()
            verdict = judge_output(value, expected, fp64, cmp)
            if verdict.accuracy is not None:
                self.accuracy.add(verdict.accuracy)
            if verdict.ok:
                self.book.ok("correctness")
            else:
                self.book.fail("correctness", verdict.detail(a.name, f"{where} ({run_label})"))
            self.book.record(
                "no-nan-inf",
                C.describe_nonfinite(a.name, cmp, f"{where} ({run_label})") if cmp.nonfinite else None,
            )
        if a.role != "output":
            return
        unwritten = is_poison(got[0], 1) & is_poison(got[1], 2) & ~is_poison(expected, 1)
        count = int(unwritten.sum().item())
        if count:
            first = C.unravel(int(torch.nonzero(unwritten.reshape(-1))[0].item()), a.shape)
            self.book.fail(
                "all-outputs-written",
                f"{a.name}: {count}/{expected.numel()} elements never written by the candidate (still poisoned after both launches), first at {a.name}{list(first)} on {where}",
            )
        else:
            self.book.ok("all-outputs-written", "every output element is written by every launch")

    def _rule_applies(self, cmp: C.Comparison, expected: Any) -> bool:
        """Whether a failed comparison goes to the accuracy rule: a float output below float64 with no
        NaN/Inf where the original is finite, under the spec's own tolerance (an explicit --atol/--rtol
        is the user's bound: it alone decides)."""
        return (
            not cmp.nonfinite
            and expected.is_floating_point()
            and expected.dtype != torch.float64
            and self.h.request.tolerance.is_default()
        )

    def _inputs_unchanged(
        self, in_args: list[ResolvedArg], masters: dict[str, Any], bufs: dict[str, Any], label: str
    ) -> None:
        changes: list[str] = []
        for a in in_args:
            if a.role != "input":
                continue
            diff = C.changed_inputs([masters[a.name]], [bufs[a.name]])
            changes.extend(d.replace("input[0]", a.name) for d in diff)
        self.book.record(
            "inputs-unchanged",
            f"{'; '.join(changes)} after the {label} (the kernel writes to an input)" if changes else None,
        )

    def _reference_writes(
        self, ps: ParamSet, masters: dict[str, Any], ref_out: dict[str, Any], where: str
    ) -> None:
        """A second reference launch with the second poison: elements poisoned in both were never written."""
        launch = prepare_launch(
            ps.ref, ps.ref_kernel, inputs=_clones(masters), poison=2, device=self.h.device
        )
        self.run_launch("reference", launch, f"second launch on {where}")
        problems = []
        for a in ps.written:
            if a.role != "output":
                continue
            gap = is_poison(ref_out[a.name], 1) & is_poison(launch.buffers[a.name], 2)
            count = int(gap.sum().item())
            if count:
                problems.append(f"{a.name}: {count}/{gap.numel()} elements")
        self.book.record(
            "reference-writes-outputs",
            (
                "the reference leaves "
                + "; ".join(problems)
                + ' unwritten: declare such arguments role = "inout" with an init'
            )
            if problems
            else None,
            "the reference writes every output element",
            severity="inconclusive",
        )

    def _degenerate(self) -> None:
        self._record_informative()

    def extra_reference_sample(self, k: int) -> torch.Tensor | None:
        ps = self._first
        if ps is None:
            return None
        seed = self.h.request.base_seed + C.EXTRA_SET_SEED_OFFSET + k
        masters = seeded_inputs(ps.ref, seed=seed, device=self.h.device)
        launch = prepare_launch(
            ps.ref, ps.ref_kernel, inputs=_clones(masters), poison=1, device=self.h.device
        )
        where = f"{ps.label} / seed {seed} / {DECLARED} inputs"
        self.run_launch("reference", launch, f"launch on {where} (reference only: do its outputs vary?)")
        return torch.cat([C.subsample(launch.buffers[a.name]) for a in ps.written])


def _leaf(precise: Callable[[], Outputs | None], name: str) -> Any | None:
    out = precise()
    return None if out is None else out.get(name)


@dataclass
class OutputVerdict:
    """One written output judged: by the dtype tolerance, or else by the accuracy rule when it ran."""

    ok: bool
    cmp: C.Comparison
    accuracy: A.Accuracy | None = None

    def detail(self, name: str, where: str) -> str:
        text = C.describe_mismatch(name, self.cmp, where)
        return f"{text}; {A.describe_accuracy(self.accuracy)}" if self.accuracy is not None else text


def judge_output(got: Any, expected: Any, precise: Any | None, cmp: C.Comparison) -> OutputVerdict:
    """``got`` within the dtype tolerance of the original (``cmp``), or else no less accurate than the
    original against ``precise``, its float64 run (None: not available, the tolerance decides alone)."""
    if cmp.ok:
        return OutputVerdict(ok=True, cmp=cmp)
    if precise is None or not A.applies(expected, precise):
        return OutputVerdict(ok=False, cmp=cmp)
    acc = A.compare_accuracy(got, expected, precise, cmp.atol, cmp.rtol)
    return OutputVerdict(ok=acc.ok, cmp=cmp, accuracy=acc)


def run_cuda_kernel(h: Harness[VerifyRequest]) -> WorkerResult:
    """Verify a launch-spec kernel rewrite against the original; needs a CUDA device."""
    if not h.device.startswith("cuda"):
        raise ReferenceFailure("launch-spec kernels need a CUDA device and torch sees none")
    enable_uninitialized_fill()  # verification only: timing must not pay for a fill of every allocation
    v = KernelVerifier(h)
    try:
        v.run()
    except CandidateFailure as failure:
        v.book.fail(failure.check.name, failure.check.detail, failure.check.severity)
    return v.result()
