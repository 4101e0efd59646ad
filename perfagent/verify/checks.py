"""Pure comparison functions on outputs and inputs (torch tensors), used by the worker.

Each function looks at values and returns findings; none runs user code. The worker aggregates
findings over every input set into one ``Check`` per check name with ``CheckBook``.
Imports torch at module import: only the worker process (and tests) import this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from perfagent.verify.models import Check, ErrorSummary, Severity, Tolerance
from perfagent.workloads.inputs import (
    flatten_outputs as flatten_outputs,  # re-exported: the protocols use C.flatten_outputs
)

# Default tolerances by dtype (evaluation reference §1.2: fp32 1e-4, fp16/bf16 1e-2).
_DTYPE_TOL: dict[Any, float] = {
    torch.float32: 1e-4,
    torch.float16: 1e-2,
    torch.bfloat16: 1e-2,
    torch.float64: 1e-7,
}
REL_FLOOR = 1e-6
"""Relative errors are reported only where |expected| is at least this."""
DEGENERATE_BOUND = 0.01
"""Reference outputs all within ±this, or varying by less than this across inputs, are degenerate."""
IDENTICAL_CONFIRM_SETS = 4
"""Input sets the reference must give one output for before it is called input-independent. Two sets of an
integral extreme coincide by chance: the maximum of 4 M int32 draws from [-1e9, 1e9) was the same for two
seeds 3 times in 3000 on an H200 (scripts/gpu_max_int_probe.py), so 2 sets misjudge ~0.1 % of such
verifications; 4 sets all alike by chance is ~1e-9."""
EXTRA_SET_SEED_OFFSET = 900_001
"""Seed offset of the reference-only input sets drawn to confirm an identical output (apart from the
seeds the candidate runs on)."""


def tolerance_for(dtype: Any, override: Tolerance | None = None) -> tuple[float, float]:
    """(atol, rtol) for an expected output of ``dtype``; explicit values in ``override`` win."""
    default = _DTYPE_TOL.get(dtype, 0.0)  # integers, bool: exact
    if dtype not in _DTYPE_TOL and getattr(dtype, "is_floating_point", False):
        default = 1e-2  # float8 and friends
    atol = override.atol if override is not None and override.atol is not None else default
    rtol = override.rtol if override is not None and override.rtol is not None else default
    return float(atol), float(rtol)


def describe_leaf(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{type(value).__name__}{tuple(value.shape)} {str(value.dtype).replace('torch.', '')}"
    return type(value).__name__


def structure_problem(expected: Any, got: Any) -> str | None:
    """Why the output structures differ (number/kind of leaves), or None."""
    e, g = flatten_outputs(expected), flatten_outputs(got)
    if len(e) != len(g):
        return f"expected {len(e)} output(s) ({', '.join(describe_leaf(v) for _, v in e)}), got {len(g)} ({', '.join(describe_leaf(v) for _, v in g)})"
    for (path, ev), (_, gv) in zip(e, g, strict=True):
        if isinstance(ev, torch.Tensor) != isinstance(gv, torch.Tensor):
            return f"{path}: expected {describe_leaf(ev)}, got {describe_leaf(gv)}"
    return None


def contract_problems(path: str, expected: torch.Tensor, got: Any) -> dict[str, str]:
    """Output-contract violations of one output, keyed by check name.

    Checks: exact type ``torch.Tensor`` (no subclass, no lazy wrapper), strided layout with real
    storage, shape, dtype, device, and contiguity when the reference output is contiguous.
    """
    problems: dict[str, str] = {}
    if type(got) is not torch.Tensor:
        problems["output-type"] = (
            f"{path} is a {type(got).__module__}.{type(got).__qualname__}, not exactly torch.Tensor "
            "(tensor subclasses and lazy wrappers can compute inside the checker)"
        )
        return problems
    if got.layout != torch.strided:
        problems["output-type"] = f"{path} has layout {got.layout}, expected torch.strided"
        return problems
    try:
        got.untyped_storage().data_ptr()
    except Exception as exc:  # fake / meta / functional tensors have no real storage
        problems["output-type"] = f"{path} has no real storage ({type(exc).__name__}: {exc})"
        return problems
    if tuple(got.shape) != tuple(expected.shape):
        problems["output-shape"] = f"{path}: expected shape {tuple(expected.shape)}, got {tuple(got.shape)}"
    if got.dtype != expected.dtype:
        problems["output-dtype"] = f"{path}: expected dtype {expected.dtype}, got {got.dtype}"
    if got.device != expected.device:
        problems["output-device"] = f"{path}: expected device {expected.device}, got {got.device}"
    if got.device.type == "meta":
        problems["output-device"] = f"{path} is on the meta device (no data)"
    if expected.is_contiguous() and not got.is_contiguous() and tuple(got.shape) == tuple(expected.shape):
        problems["output-contiguity"] = (
            f"{path} is not contiguous (strides {got.stride()}) while the reference output is"
        )
    return problems


@dataclass
class Comparison:
    """Elementwise comparison of a candidate output with the reference output."""

    ok: bool
    numel: int
    bad: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    mean_abs: float = 0.0
    first_bad: tuple[int, ...] | None = None
    got_at_first_bad: float | None = None
    expected_at_first_bad: float | None = None
    nonfinite: int = 0
    """Elements that are NaN/Inf in the candidate but finite in the reference."""
    first_nonfinite: tuple[int, ...] | None = None
    atol: float = 0.0
    rtol: float = 0.0


def unravel(flat_index: int, shape: Sequence[int]) -> tuple[int, ...]:
    idx: list[int] = []
    for dim in reversed(list(shape)):
        idx.append(flat_index % dim if dim else 0)
        flat_index = flat_index // dim if dim else 0
    return tuple(reversed(idx))


def compare_tensors(got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Compare same-shape tensors: |got - expected| <= atol + rtol·|expected|; NaN matches NaN, Inf matches Inf."""
    numel = expected.numel()
    if numel == 0:
        return Comparison(ok=True, numel=0, atol=atol, rtol=rtol)
    with torch.no_grad():
        g = got.detach().reshape(-1).to(device=expected.device)
        e = expected.detach().reshape(-1)
        if e.dtype == torch.bool or g.dtype == torch.bool:
            g, e = g.to(torch.int64), e.to(torch.int64)
        if e.is_complex() or g.is_complex():
            g, e = (
                torch.view_as_real(g.to(torch.complex128)).reshape(-1),
                torch.view_as_real(e.to(torch.complex128)).reshape(-1),
            )
        g = g.to(torch.float64)
        e = e.to(torch.float64)
        same = g == e  # covers equal infinities
        both_nan = torch.isnan(g) & torch.isnan(e)
        diff = (g - e).abs()
        within = diff <= (atol + rtol * e.abs())
        good = same | both_nan | within
        bad_mask = ~good
        finite_both = torch.isfinite(g) & torch.isfinite(e)
        nonfinite_mask = ~torch.isfinite(g) & torch.isfinite(e)
        fd = torch.where(finite_both, diff, torch.zeros_like(diff))
        max_abs = float(fd.max().item()) if numel else 0.0
        mean_abs = float(fd.sum().item() / max(1, int(finite_both.sum().item())))
        rel_mask = finite_both & (e.abs() >= REL_FLOOR)
        rel = torch.where(rel_mask, diff / e.abs().clamp_min(REL_FLOOR), torch.zeros_like(diff))
        max_rel = float(rel.max().item())
        n_bad = int(bad_mask.sum().item())
        n_nonfinite = int(nonfinite_mask.sum().item())
        shape = tuple(expected.shape) if expected.numel() == got.numel() else (numel,)
        cmp = Comparison(
            ok=n_bad == 0,
            numel=numel,
            bad=n_bad,
            max_abs=max_abs if math.isfinite(max_abs) else float("inf"),
            max_rel=max_rel,
            mean_abs=mean_abs,
            nonfinite=n_nonfinite,
            atol=atol,
            rtol=rtol,
        )
        if n_bad:
            first = int(torch.nonzero(bad_mask)[0].item())
            cmp.first_bad = unravel(first, shape)
            cmp.got_at_first_bad = float(g[first].item())
            cmp.expected_at_first_bad = float(e[first].item())
        if n_nonfinite:
            cmp.first_nonfinite = unravel(int(torch.nonzero(nonfinite_mask)[0].item()), shape)
    return cmp


def describe_mismatch(path: str, c: Comparison, where: str) -> str:
    """One line: max abs/rel error, bad count, first bad index with got/expected, tolerance, input set."""
    idx = (
        ""
        if c.first_bad is None
        else f"; first at {path}{list(c.first_bad)}: got {c.got_at_first_bad:.6g}, expected {c.expected_at_first_bad:.6g}"
    )
    nan = f"{c.nonfinite} of them NaN/Inf; finite " if c.nonfinite else ""
    return (
        f"{path}: {c.bad}/{c.numel} elements outside atol={c.atol:g} rtol={c.rtol:g} "
        f"({nan}max abs err {c.max_abs:.3g}, max rel err {c.max_rel:.3g}{idx}) on {where}"
    )


def describe_nonfinite(path: str, c: Comparison, where: str) -> str:
    return (
        f"{path}: {c.nonfinite}/{c.numel} elements are NaN/Inf where the reference is finite "
        f"(first at {path}{list(c.first_nonfinite or ())}; unwritten poisoned memory reads as NaN) on {where}"
    )


def changed_inputs(saved: Sequence[Any], after: Sequence[Any]) -> list[str]:
    """Descriptions of inputs whose values changed (NaN equals NaN): 'input[0] (x): 512 elements changed, first at [3]'."""
    changes: list[str] = []
    for i, (before, now) in enumerate(zip(saved, after, strict=True)):
        if not isinstance(before, torch.Tensor):
            continue
        if not isinstance(now, torch.Tensor) or now.shape != before.shape:
            changes.append(f"input[{i}] was replaced or reshaped")
            continue
        b = before.detach().reshape(-1)
        n = now.detach().reshape(-1).to(b.device)
        if b.dtype != n.dtype:
            changes.append(f"input[{i}] dtype changed from {b.dtype} to {n.dtype}")
            continue
        diff = n != b
        if b.is_floating_point() or b.is_complex():
            diff &= ~(torch.isnan(n) & torch.isnan(b))
        count = int(diff.sum().item())
        if count:
            first = unravel(int(torch.nonzero(diff)[0].item()), tuple(before.shape))
            changes.append(f"input[{i}]: {count}/{b.numel()} elements changed, first at {list(first)}")
    return changes


def storage_ptr(t: torch.Tensor) -> int | None:
    try:
        return int(t.untyped_storage().data_ptr())
    except Exception:
        return None


def degenerate_reason(samples: Sequence[torch.Tensor]) -> str | None:
    """Why reference outputs over several input sets cannot discriminate candidates, or None.

    ``samples``: the same flattened (sub-sampled) float64 output for each input set.
    Degenerate when every value lies within ±0.01, when the output is the same for every input set
    (equal for integral values, within 1e-6 of the largest for others),
    or when no element varies by more than 0.01 (std) across input sets.
    """
    if not samples:
        return None
    stacked = torch.stack([s.reshape(-1).to(torch.float64) for s in samples])
    finite = torch.isfinite(stacked)
    if not bool(finite.any()):
        return "every reference output is NaN/Inf"
    vals = torch.where(finite, stacked, torch.zeros_like(stacked))
    peak = float(vals.abs().max().item())
    if peak <= DEGENERATE_BOUND:
        return f"every reference output over {len(samples)} input sets lies within ±{DEGENERATE_BOUND} (max |value| {peak:.3g}): a constant would pass"
    if len(samples) >= 2:
        if _identical(vals, peak):
            return f"the reference output is identical for {len(samples)} different input sets (it does not depend on the inputs)"
        std = float(vals.std(dim=0).max().item())
        if std < DEGENERATE_BOUND:
            return f"no reference output element varies by more than {std:.3g} (std) across {len(samples)} input sets"
    return None


def identical_outputs(samples: Sequence[torch.Tensor]) -> bool:
    """Whether two or more same-shaped samples are all the same output (``degenerate_reason``'s test)."""
    if len(samples) < 2 or len({s.shape for s in samples}) != 1:
        return False
    stacked = torch.stack([s.reshape(-1).to(torch.float64) for s in samples])
    vals = torch.where(torch.isfinite(stacked), stacked, torch.zeros_like(stacked))
    return _identical(vals, float(vals.abs().max().item()))


def _identical(vals: torch.Tensor, peak: float) -> bool:
    spread = float((vals - vals[0]).abs().max().item())
    # Integral outputs (counts, indices, integer maxima) are identical only when equal: the maximum of
    # 4 M draws from [-1e9, 1e9) moves by ~500 between input sets, under 1e-6 of its size.
    integral = bool(torch.equal(vals, vals.round()))
    return spread <= (0.0 if integral else 1e-6 * max(1.0, peak))


def subsample(t: torch.Tensor, limit: int = 1 << 20) -> torch.Tensor:
    """A deterministic strided sample of at most ``limit`` elements, as float64 on the CPU."""
    flat = t.detach().reshape(-1)
    if flat.numel() > limit:
        step = -(-flat.numel() // limit)
        flat = flat[::step]
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    return flat.to(device="cpu", dtype=torch.float64)


CHECK_ORDER: tuple[str, ...] = (
    "candidate-runs",
    "correctness",
    "no-nan-inf",
    "all-outputs-written",
    "output-structure",
    "output-type",
    "output-shape",
    "output-dtype",
    "output-device",
    "output-contiguity",
    "output-aliasing",
    "inputs-unchanged",
    "fresh-results",
    "stream-sync",
    "kernel-launched",
    "own-kernel-not-run",
    "strict-state-dict",
    "cuda-errors",
    "runtime:no-thread-injection",
    "runtime:harness-intact",
    "reference-deterministic",
    "reference-writes-outputs",
    "reference-informative",
)


@dataclass
class CheckBook:
    """Aggregates per-input-set findings into one ``Check`` per name (first failure + count)."""

    order: list[str] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=dict)
    passes: dict[str, str] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)

    def _touch(self, name: str, severity: Severity) -> None:
        if name not in self.runs:
            self.order.append(name)
            self.runs[name] = 0
            self.severity[name] = severity
        self.runs[name] += 1

    def ok(self, name: str, detail: str = "", severity: Severity = "error") -> None:
        self._touch(name, severity)
        if detail:
            self.passes[name] = detail

    def fail(self, name: str, detail: str, severity: Severity = "error") -> None:
        self._touch(name, severity)
        self.failures.setdefault(name, []).append(detail)

    def record(
        self, name: str, problem: str | None, ok_detail: str = "", severity: Severity = "error"
    ) -> None:
        if problem:
            self.fail(name, problem, severity)
        else:
            self.ok(name, ok_detail, severity)

    def pass_detail(self, name: str, detail: str) -> None:
        """Set the detail shown when ``name`` passes (without counting another run)."""
        if name in self.runs:
            self.passes[name] = detail

    def failed(self, name: str) -> bool:
        return bool(self.failures.get(name))

    def checks(self) -> list[Check]:
        out: list[Check] = []
        rank = {name: i for i, name in enumerate(CHECK_ORDER)}
        for name in sorted(self.order, key=lambda n: rank.get(n, len(rank))):
            fails = self.failures.get(name, [])
            if fails:
                extra = f" [failed {len(fails)} of {self.runs[name]} times]" if self.runs[name] > 1 else ""
                out.append(
                    Check(name=name, passed=False, detail=fails[0] + extra, severity=self.severity[name])
                )
            else:
                out.append(
                    Check(
                        name=name, passed=True, detail=self.passes.get(name, ""), severity=self.severity[name]
                    )
                )
        return out


@dataclass
class ErrorTracker:
    """Worst errors over all comparisons."""

    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None

    def add(self, c: Comparison) -> None:
        if c.numel == 0:
            return
        if self.max_abs is None or c.max_abs > self.max_abs:
            self.max_abs = c.max_abs
            self.mean_abs = c.mean_abs
        if self.max_rel is None or c.max_rel > self.max_rel:
            self.max_rel = c.max_rel

    def merge(self, other: ErrorTracker) -> None:
        for value, rel in ((other.max_abs, None), (None, other.max_rel)):
            if value is not None and (self.max_abs is None or value > self.max_abs):
                self.max_abs, self.mean_abs = value, other.mean_abs
            if rel is not None and (self.max_rel is None or rel > self.max_rel):
                self.max_rel = rel

    def summary(self) -> ErrorSummary:
        return ErrorSummary(
            max_abs_error=self.max_abs, max_rel_error=self.max_rel, mean_abs_error=self.mean_abs
        )


def all_tensors(values: Iterable[Any]) -> list[torch.Tensor]:
    return [v for v in values if isinstance(v, torch.Tensor)]
