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
   was never written; inputs must be unchanged; CUDA errors after each launch fail the run.
"""

from __future__ import annotations

from typing import Any

import torch

from perfagent.errors import BadInput
from perfagent.verify import checks as C
from perfagent.verify.harness import CandidateFailure, Harness, ReferenceFailure
from perfagent.verify.inputs import DISTRIBUTIONS
from perfagent.verify.models import Check, Tolerance
from perfagent.verify.protocol import WorkerResult
from perfagent.verify.verifier_state import VerifierState
from perfagent.workloads.cuda_launch import (
    CompiledKernel,
    compile_kernel,
    current_stream,
    device_attributes,
    is_poison,
    kernel_args,
    launch,
    make_arg_tensor,
    poison_,
    torch_dtype,
)
from perfagent.workloads.launch_spec import (
    LaunchSpec,
    ResolvedLaunch,
    load_launch_spec,
    param_sets,
    resolve_launch,
)

DECLARED = "declared init"


class KernelVerifier(VerifierState):
    def __init__(self, h: Harness) -> None:
        super().__init__(h)
        self.launches = 0
        self._compiled: dict[tuple[str, str, tuple[tuple[str, str], ...]], CompiledKernel] = {}

    def compiled(self, resolved: ResolvedLaunch, *, reference: bool) -> CompiledKernel:
        key = (resolved.source, resolved.kernel, tuple(sorted(resolved.defines.items())))
        if key not in self._compiled:
            label = f"NVRTC build of {resolved.source.rsplit('/', 1)[-1]}:{resolved.kernel}"

            def build() -> CompiledKernel:
                return compile_kernel(resolved.source, resolved.kernel, resolved.defines)

            guard = self.h.reference if reference else self.h.candidate
            self._compiled[key] = guard(label, build, phase="build")
        return self._compiled[key]

    def tolerance(self, resolved: ResolvedLaunch) -> Tolerance:
        asked = self.h.request.tolerance
        return Tolerance(
            atol=asked.atol if asked.atol is not None else resolved.atol,
            rtol=asked.rtol if asked.rtol is not None else resolved.rtol,
        )

    def run_launch(
        self, who: str, kernel: CompiledKernel, resolved: ResolvedLaunch, buffers: dict[str, Any], label: str
    ) -> None:
        args = kernel_args(resolved, buffers)
        stream = current_stream()

        def go() -> None:
            launch(kernel, resolved, args, stream)

        if who == "reference":
            self.h.reference(label, go)
        else:
            self.h.candidate(label, go, phase="first" if self.launches == 0 else "call")
            self.launches += 1

    def run(self) -> None:
        req = self.h.request
        assert req.candidate is not None and req.reference.spec_path is not None
        spec_path = req.reference.spec_path
        try:
            spec = load_launch_spec(spec_path)
        except BadInput as exc:
            raise ReferenceFailure(str(exc)) from None
        attrs = device_attributes()
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
        req = self.h.request
        assert req.candidate is not None
        try:
            ref_l = resolve_launch(
                spec,
                spec_path,
                source=req.reference.path,
                kernel=req.reference.kernel,
                params=params,
                device_attrs=attrs,
            )
        except BadInput as exc:
            raise ReferenceFailure(str(exc)) from None
        try:
            cand_l = resolve_launch(
                spec,
                spec_path,
                source=req.candidate.path,
                kernel=req.candidate.kernel,
                params=params,
                device_attrs=attrs,
            )
        except BadInput as exc:
            raise CandidateFailure(
                Check(
                    name="candidate-runs", passed=False, detail=f"cannot launch the candidate: {exc.message}"
                )
            ) from None
        ref_k = self.compiled(ref_l, reference=True)
        cand_k = self.compiled(cand_l, reference=False)
        device = self.h.device
        tensor_args = [a for a in ref_l.args if not a.is_scalar]
        in_args = [a for a in tensor_args if a.role in ("input", "inout")]
        written = [a for a in tensor_args if a.role in ("output", "inout")]
        # The candidate's input buffers live across seeds: same pointers, new contents.
        cand_inputs = {
            a.name: torch.empty(a.shape, dtype=torch_dtype(a.dtype), device=device) for a in in_args
        }
        n_seeds = req.seeds if pi == 0 else max(1, min(2, req.seeds))
        shape_label = ", ".join(f"{k}={v}" for k, v in params.items())
        tol = self.tolerance(ref_l)
        for i in range(n_seeds):
            seed = req.base_seed + i + 1000 * pi
            dist = None if i == 0 else DISTRIBUTIONS[(i - 1) % len(DISTRIBUTIONS)]
            tag = dist or DECLARED
            where = f"{shape_label} / seed {seed} / {tag} inputs"
            masters = {a.name: make_arg_tensor(a, seed, dist, device) for a in in_args}

            def fresh_outputs(which: int) -> dict[str, Any]:
                return {
                    a.name: poison_(torch.empty(a.shape, dtype=torch_dtype(a.dtype), device=device), which)
                    for a in tensor_args
                    if a.role == "output"
                }

            # 1. candidate, first poison, before the reference
            for name, t in masters.items():
                cand_inputs[name].copy_(t)
            bufs1 = {**cand_inputs, **fresh_outputs(1)}
            self.run_launch("candidate", cand_k, cand_l, bufs1, f"launch on {where} (before the reference)")
            c1 = {a.name: bufs1[a.name].clone() for a in written}
            self._inputs_unchanged(in_args, masters, bufs1, f"candidate launch on {where}")
            # 2. reference
            ref_bufs = {**{k: v.clone() for k, v in masters.items()}, **fresh_outputs(1)}
            self.run_launch("reference", ref_k, ref_l, ref_bufs, f"launch on {where}")
            ref_out = {a.name: ref_bufs[a.name].clone() for a in written}
            if pi == 0 and i == 0:
                self._reference_writes(ref_k, ref_l, masters, tensor_args, written, ref_out, where)
            # 3. candidate, second poison, after the reference
            for name, t in masters.items():
                cand_inputs[name].copy_(t)
            bufs2 = {**cand_inputs, **fresh_outputs(2)}
            self.run_launch(
                "candidate", cand_k, cand_l, bufs2, f"second launch on {where} (after the reference)"
            )
            c2 = {a.name: bufs2[a.name].clone() for a in written}
            self._inputs_unchanged(in_args, masters, bufs2, f"second candidate launch on {where}")

            self.sets += 1
            if tag not in self.distributions:
                self.distributions.append(tag)
            if pi == 0:
                self.ref_samples.append(torch.cat([C.subsample(t) for t in ref_out.values()]))
            for a in written:
                expected = ref_out[a.name]
                # The dtype rule alone: the oracle is a CUDA kernel compiled for its declared dtypes
                # and a spec names no PyTorch reference, so there is no float64 run of the original
                # for the accuracy rule (accuracy.py); a spec sets [tolerance] for reordered sums.
                atol, rtol = C.tolerance_for(expected.dtype, tol)
                for run_label, got in (("launch 1", c1[a.name]), ("launch 2", c2[a.name])):
                    cmp = C.compare_tensors(got, expected, atol, rtol)
                    self.errors.add(cmp)
                    if cmp.ok:
                        self.book.ok("correctness")
                    else:
                        self.book.fail(
                            "correctness", C.describe_mismatch(a.name, cmp, f"{where} ({run_label})")
                        )
                    self.book.record(
                        "no-nan-inf",
                        C.describe_nonfinite(a.name, cmp, f"{where} ({run_label})")
                        if cmp.nonfinite
                        else None,
                    )
                if a.role == "output":
                    unwritten = is_poison(c1[a.name], 1) & is_poison(c2[a.name], 2) & ~is_poison(expected, 1)
                    count = int(unwritten.sum().item())
                    if count:
                        first = C.unravel(int(torch.nonzero(unwritten.reshape(-1))[0].item()), a.shape)
                        self.book.fail(
                            "all-outputs-written",
                            f"{a.name}: {count}/{expected.numel()} elements never written by the candidate (still poisoned after both launches), first at {a.name}{list(first)} on {where}",
                        )
                    else:
                        self.book.ok("all-outputs-written", "every output element is written by every launch")

    def _inputs_unchanged(
        self, in_args: list[Any], masters: dict[str, Any], bufs: dict[str, Any], label: str
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
        self,
        ref_k: CompiledKernel,
        ref_l: ResolvedLaunch,
        masters: dict[str, Any],
        tensor_args: list[Any],
        written: list[Any],
        ref_out: dict[str, Any],
        where: str,
    ) -> None:
        """A second reference launch with the second poison: elements poisoned in both were never written."""
        bufs = {k: v.clone() for k, v in masters.items()}
        bufs.update(
            {
                a.name: poison_(torch.empty(a.shape, dtype=torch_dtype(a.dtype), device=self.h.device), 2)
                for a in tensor_args
                if a.role == "output"
            }
        )
        self.run_launch("reference", ref_k, ref_l, bufs, f"second launch on {where}")
        problems = []
        for a in written:
            if a.role != "output":
                continue
            gap = is_poison(ref_out[a.name], 1) & is_poison(bufs[a.name], 2)
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


def run_cuda_kernel(h: Harness) -> WorkerResult:
    """Verify a launch-spec kernel rewrite against the original; needs a CUDA device."""
    if not h.device.startswith("cuda"):
        raise ReferenceFailure("launch-spec kernels need a CUDA device and torch sees none")
    v = KernelVerifier(h)
    try:
        v.run()
    except CandidateFailure as failure:
        v.book.fail(failure.check.name, failure.check.detail)
    return v.result()
