"""Float64 runs of a launch-spec kernel's original: the yardstick of the accuracy rule (worker side).

The original's source is promoted to double (``perfagent.workloads.double_promotion``), written to a
scratch file, compiled once per parameter set, and launched with the same grid and block on the seed's
inputs cast to float64 (integer inputs as they are). A run happens only when a written output falls
outside the dtype tolerance, once per seed and parameter set, so a candidate that matches the original
costs nothing extra. When the original cannot be promoted, compiled or launched in double, a note says
why and the dtype tolerance decides alone: never a reference failure.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfagent.sandbox.harness import Harness, ReferenceFailure
from perfagent.verify.float64_reference import FLOAT64_CALL_BUDGET, to_float64
from perfagent.verify.jobs import VerifyRequest
from perfagent.workloads.cuda_launch import CompiledKernel
from perfagent.workloads.double_promotion import PromotionRefused, promote_launch, promote_source
from perfagent.workloads.launch_prep import compile_launch, prepare_launch
from perfagent.workloads.launch_resolve import ResolvedLaunch

Outputs = dict[str, Any]
"""The float64 run's written arguments (outputs and inouts), by name."""


class Float64Launches:
    """Builds the promoted original per parameter set on first need and runs it on a seed's inputs."""

    def __init__(self, h: Harness[VerifyRequest], notes: list[str]) -> None:
        self.h = h
        self.notes = notes
        self.unavailable: str | None = None
        """Why no float64 run is possible (set once; never retried)."""
        self._built: dict[int, tuple[ResolvedLaunch, CompiledKernel]] = {}

    def runner(
        self, index: int, ref: ResolvedLaunch, masters: dict[str, Any], written: list[str], where: str
    ) -> Callable[[], Outputs | None]:
        """A memoised thunk: the float64 run's ``written`` arguments on ``masters`` (None: unavailable)."""
        memo: list[Outputs | None] = []

        def get() -> Outputs | None:
            if not memo:
                memo.append(self._run(index, ref, masters, written, where))
            return memo[0]

        return get

    def _give_up(self, why: str) -> None:
        self.unavailable = why
        self._built.clear()
        self.notes.append(
            f"no float64 run of the original kernel ({why}): outputs outside the dtype tolerance were "
            "judged by it alone, without the accuracy rule"
        )

    def _build(self, index: int, ref: ResolvedLaunch) -> tuple[ResolvedLaunch, CompiledKernel] | None:
        if index in self._built:
            return self._built[index]
        try:
            promoted = promote_source(Path(ref.source).read_text(), ref.kernel)
            launch = promote_launch(ref, promoted, str(_scratch_file(ref.source, promoted.text)))
        except (PromotionRefused, OSError) as exc:
            self._give_up(f"its source cannot be promoted to double: {exc}")
            return None
        try:
            kernel = compile_launch(
                launch,
                lambda label, step: self.h.reference(f"float64 {label} (accuracy rule)", step, phase="build"),
            )
        except ReferenceFailure as exc:
            self._give_up(f"the promoted source does not build: {exc}")
            return None
        self._built[index] = (launch, kernel)
        return self._built[index]

    def _run(
        self, index: int, ref: ResolvedLaunch, masters: dict[str, Any], written: list[str], where: str
    ) -> Outputs | None:
        if self.unavailable is not None:
            return None
        built = self._build(index, ref)
        if built is None:
            return None
        launch, kernel = built
        names = list(masters)
        inputs = dict(zip(names, to_float64([masters[n] for n in names]), strict=True))
        prepared = prepare_launch(launch, kernel, inputs=inputs, poison=1, device=self.h.device)
        try:
            self.h.reference(
                f"float64 launch on {where} (accuracy rule)", prepared.launch, calls=FLOAT64_CALL_BUDGET
            )
        except ReferenceFailure as exc:
            self._give_up(f"the promoted kernel failed: {exc}")
            return None
        return {name: prepared.buffers[name] for name in written}


def _scratch_file(original: str, text: str) -> Path:
    """The promoted source in a file named by its content: the verifications of one worker (a batch of
    candidates against the same original) then hit NVRTC's per-process build cache, which keys on the path."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / "perfagent-f64" / f"{Path(original).stem}_{digest}.cu"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)  # atomic: two workers writing the same text never leave half a file
    return path
