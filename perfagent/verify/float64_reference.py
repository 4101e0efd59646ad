"""Float64 runs of a KernelBench reference: the yardstick of the accuracy rule (worker side).

The reference model is deep-copied and cast with ``.double()``; floating-point inputs are cast to
float64 (complex to complex128; integer and bool inputs are kept). A run happens only when an
output falls outside the dtype tolerance, so a candidate that matches the original costs nothing
extra. When the reference does not run in float64 (an op without a double kernel on the device, a
model that cannot be copied, an internal cast back to float32), a note says so and the dtype
tolerance decides alone; that is never a reference failure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch

from perfagent.sandbox.harness import Harness, ReferenceFailure
from perfagent.verify import checks as C
from perfagent.verify.jobs import VerifyRequest
from perfagent.workloads.inputs import seed_everything

FLOAT64_CALL_BUDGET = 20
"""A float64 call may take this many per-call time limits: consumer GPUs run fp64 at 1/32 to
1/64 of the fp32 rate, and a timeout here would end the whole verification as bad input."""


def to_float64(values: Sequence[Any]) -> list[Any]:
    """Copies of the inputs with every real floating tensor as float64 and complex as complex128."""
    out: list[Any] = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            out.append(v.detach().to(torch.float64, copy=True))
        elif isinstance(v, torch.Tensor) and v.is_complex():
            out.append(v.detach().to(torch.complex128, copy=True))
        elif isinstance(v, torch.Tensor):
            out.append(v.clone())
        else:
            out.append(v)
    return out


class Float64Reference:
    """Builds the float64 copy of the reference on first need and runs it on an input set."""

    def __init__(self, h: Harness[VerifyRequest], notes: list[str]) -> None:
        self.h = h
        self.notes = notes
        self.unavailable: str | None = None
        """Why no float64 run is possible (set once; never retried)."""
        # One copy at a time: the fp32 model pair stays alive too, and float64 doubles its memory.
        self._model: tuple[int, Any] | None = None

    def runner(self, ref_model: Any, x: Sequence[Any], seed: int, where: str) -> Callable[[], Any | None]:
        """A memoised thunk: the float64 output on ``x`` (None when unavailable)."""
        memo: list[Any] = []

        def get() -> Any | None:
            if not memo:
                memo.append(self._run(ref_model, x, seed, where))
            return memo[0]

        return get

    def _give_up(self, why: str) -> None:
        self.unavailable = why
        self._model = None
        self.notes.append(
            f"no float64 run of the reference ({why}): outputs outside the dtype tolerance were "
            "judged by it alone, without the accuracy rule"
        )

    def _double_model(self, ref_model: Any) -> Any | None:
        if self._model is not None and self._model[0] == id(ref_model):
            return self._model[1]
        self._model = None

        def build() -> Any:
            if isinstance(ref_model, torch.nn.Module):
                return copy.deepcopy(ref_model).double()
            return ref_model  # a plain callable has no parameters to cast

        try:
            model = self.h.reference("float64 copy of Model (accuracy rule)", build, phase="build")
        except ReferenceFailure as exc:
            self._give_up(str(exc))
            return None
        self._model = (id(ref_model), model)
        return model

    def _run(self, ref_model: Any, x: Sequence[Any], seed: int, where: str) -> Any | None:
        if self.unavailable is not None:
            return None
        model = self._double_model(ref_model)
        if model is None:
            return None
        args = to_float64(x)
        seed_everything(seed)

        def call() -> Any:
            with torch.no_grad():
                return model(*args)

        try:
            out = self.h.reference(f"float64 run on {where} (accuracy rule)", call, calls=FLOAT64_CALL_BUDGET)
        except ReferenceFailure as exc:
            self._give_up(str(exc))
            return None
        narrow = [
            f"{path} is {str(v.dtype).replace('torch.', '')}"
            for path, v in C.flatten_outputs(out)
            if isinstance(v, torch.Tensor) and v.is_floating_point() and v.dtype != torch.float64
        ]
        if narrow:
            self._give_up(f"in the float64 run {', '.join(narrow[:3])}: the reference casts internally")
            return None
        return out
