"""Launch hooks on the candidate's own Triton kernels: was the kernel the candidate wrote seen to run?

A candidate can define a correct ``@triton.jit`` kernel and return the PyTorch expression from
``forward`` (about 10 % of one published system's outputs); the static check follows calls in the
source, which a never-taken branch or an indirection defeats. This counts real launches instead:
every Triton kernel object at the candidate module's top level (``JITFunction`` on a GPU, the
interpreter's ``InterpretedFunction`` on the CPU, through ``Autotuner``/``Heuristics`` wrappers)
gets its ``run`` wrapped on the instance, the one method every ``kernel[grid](...)`` launch calls in
both. CUDA C++ kernels (``load_inline``) have no such hook: on a GPU, torch.profiler's kernel list
is their evidence (``kernelbench_protocol._kernel_evidence``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from types import ModuleType
from typing import Any

OWN_KERNEL_CHECK = "own-kernel-not-run"
"""The check a candidate fails when it defines kernels but none of them ran during its calls."""


def _kernel_objects(module: ModuleType) -> dict[str, Any]:
    """Top-level Triton kernels of ``module`` by name: objects with a ``run`` and a Python ``fn``,
    unwrapped through autotuner/heuristics layers (which hold the kernel in ``fn``)."""
    found: dict[str, Any] = {}
    for name, value in vars(module).items():
        inner = value
        for _ in range(4):  # Autotuner(Heuristics(JITFunction)): each layer keeps the next in .fn
            nxt = getattr(inner, "fn", None)
            if nxt is None or not hasattr(nxt, "run"):
                break
            inner = nxt
        kind = type(inner).__name__
        if kind in ("JITFunction", "InterpretedFunction") and hasattr(inner, "run"):
            found[name] = inner
    return found


class LaunchCounter:
    """Counts launches of one module's Triton kernels (``install`` once, read ``counts``)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.kernels: list[str] = []

    def install(self, module: ModuleType) -> LaunchCounter:
        """Wrap the ``run`` of every top-level Triton kernel of ``module`` (on the instance only)."""
        for name, kernel in _kernel_objects(module).items():
            if name in self.kernels:
                continue
            self.kernels.append(name)
            kernel.run = self._counting(name, kernel.run)
        return self

    def _counting(self, name: str, run: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("warmup", False):
                self.counts[name] += 1
            return run(*args, **kwargs)

        return counted

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> str:
        """'add_kernel ×6, relu_kernel ×6' (launches so far)."""
        return ", ".join(f"{k} ×{n}" for k, n in self.counts.most_common())
