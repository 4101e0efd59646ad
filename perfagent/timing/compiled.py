"""The torch.compile baseline: how fast the reference runs under ``torch.compile(Model)`` (default mode).

The strongest 2026 kernel-writing systems report their speed-ups over ``torch.compile``, not only over eager
PyTorch. For a KernelBench problem the reference is wrapped in a generated ``ModelNew`` whose constructor
builds ``torch.compile(Model(*init_inputs))`` and times it against the eager ``Model`` like any candidate
(same worker, same interleaved rounds, same L2 flush). Compilation happens in the untimed warm-up calls:
compile time is excluded, warm-up included. A candidate's speed-up over torch.compile is then its speed-up
over eager divided by torch.compile's, each measured against its own run's eager baseline (so the two runs'
drift cancels). On a CPU the compiled model is timed on the CPU like the rest; where it cannot compile
(no C compiler for inductor, an unsupported op) the baseline is said to be unavailable, with the reason.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from perfagent.timing.bench import bench
from perfagent.timing.models import BenchResult, CompileBaseline
from perfagent.workloads.kernelbench import inspect_python
from profilers.core_errors import PerfAgentError
from profilers.settings import TIMEOUTS

__all__ = [
    "compile_baseline",
    "compiled_source",
    "is_kernelbench_problem",
    "over_compile",
    "with_compile_baseline",
]

WRAPPER = '''

# --- perfagent: the torch.compile baseline (generated; the reference above is unchanged) ---
import torch as _perfagent_torch


class ModelNew(_perfagent_torch.nn.Module):
    """The reference under torch.compile (default mode): compiled in the first (warm-up) call."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.compiled = _perfagent_torch.compile(Model(*args, **kwargs))

    def forward(self, *args):
        return self.compiled(*args)
'''


def compiled_source(problem_source: str) -> str:
    """The problem's source with a ``ModelNew`` that runs its ``Model`` under ``torch.compile``."""
    return problem_source.rstrip() + "\n" + WRAPPER


def compile_baseline(
    problem: str | Path,
    *,
    device: str,
    runs: int,
    warmup: int,
    timeout_s: float,
    compile_timeout_s: float,
    progress: Callable[[str], None] | None = None,
) -> CompileBaseline:
    """Time ``torch.compile(Model)`` against the eager ``Model`` of ``problem``; never raises for a
    compile that fails (the result says why it is unavailable)."""

    path = Path(problem)
    with tempfile.TemporaryDirectory(prefix="perfagent-compile-") as tmp:
        wrapped = Path(tmp) / f"{path.stem}_torch_compile.py"
        wrapped.write_text(compiled_source(path.read_text(encoding="utf-8")), encoding="utf-8")
        try:
            result = bench(
                path,
                wrapped,
                device=device,  # type: ignore[arg-type]
                runs=runs,
                warmup=max(warmup, 1),  # the first call compiles: never timed
                timeout_s=max(timeout_s, compile_timeout_s),  # a warm-up call may be the compile
                compile_timeout_s=compile_timeout_s,
                progress=progress,
            )
        except PerfAgentError as exc:
            return CompileBaseline(unavailable=f"torch.compile could not run here: {exc.message}")
    if result.candidate is None or result.comparison is None:
        return CompileBaseline(unavailable="torch.compile was not timed")
    return CompileBaseline(
        time_s=result.candidate.timing.median_s,
        eager_time_s=result.baseline.timing.median_s,
        speedup_over_eager=result.comparison.speedup,
        timer=result.timer,
        device=result.device,
    )


def over_compile(speedup_over_eager: float | None, compiled: CompileBaseline | None) -> float | None:
    """A candidate's speed-up over torch.compile from its speed-up over eager (None: either unknown)."""
    if speedup_over_eager is None or compiled is None or not compiled.speedup_over_eager:
        return None
    return speedup_over_eager / compiled.speedup_over_eager


def is_kernelbench_problem(target: str | Path) -> bool:
    """Whether ``target`` is a KernelBench problem file (a ``Model`` and ``get_inputs``)."""

    path = Path(target)
    return path.suffix == ".py" and path.is_file() and inspect_python(path).is_problem


def with_compile_baseline(
    result: BenchResult, problem: str | Path, *, progress: Callable[[str], None] | None = None
) -> BenchResult:
    """``result`` with the torch.compile baseline of ``problem`` timed on the same device, and the
    candidate's speed-up over it."""
    if progress is not None:
        progress("timing torch.compile(Model) (default mode; compile time excluded) …")
    compiled = compile_baseline(
        problem,
        device=result.device.split(":")[0],
        runs=result.runs_asked or result.runs,
        warmup=result.warmup,
        timeout_s=TIMEOUTS.call_s,
        compile_timeout_s=TIMEOUTS.compile_s,
        progress=progress,
    )
    speedup = result.comparison.speedup if result.comparison is not None else None
    return result.model_copy(
        update={"compiled": compiled, "speedup_over_compile": over_compile(speedup, compiled)}
    )
