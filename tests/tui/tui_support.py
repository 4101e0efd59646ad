"""Helpers shared by the TUI tests (a uniquely named module: ``conftest`` is taken by tests/conftest.py).

Records: ``data/*.json`` are perfagent's own ``diagnose --format json`` output on the public Nsight Compute
reports in ``../shared/fixtures/ncu-public`` (the reports themselves are not copied into the repo). They keep
the snapshots stable while the classifier's wording evolves; regenerate with::

    python3 -m perfagent diagnose ../shared/fixtures/ncu-public/a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep \\
        --format json -o tests/tui/data/a10g_sgemm_4kernels.json --force
    python3 -m perfagent diagnose ../shared/fixtures/ncu-public/a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep \\
        --format json -o tests/tui/data/a100_memcpyasync.json --force
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import perfagent
from perfagent.optimize.events import Info, LoopEvent
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import (
    CandidateOutcome,
    CheckRecord,
    OptimizeBaseline,
    OptimizeResult,
    RunRecord,
    VerificationSummary,
)
from tui.optimize_bridge import Capabilities, OptimizeBridge, source_reason

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO.parent / "shared" / "fixtures" / "ncu-public"
SGEMM_REPORT = FIXTURES / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep"
MEMCPY_REPORT = FIXTURES / "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep"
SUITE_REPORT = REPO / "examples" / "reports" / "suite.ncu-rep"
"""The examples' 20 kernels recorded on an H200 (in the repo): shares down to 0.1 %, an L1-bound SGEMM."""
SGEMM_JSON = DATA / "a10g_sgemm_4kernels.json"
MEMCPY_JSON = DATA / "a100_memcpyasync.json"


def run_async(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on a fresh event loop (no pytest-asyncio/anyio plugin needed); fixtures still apply."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))  # type: ignore[arg-type]

    return wrapper


def load(path: Path) -> RunRecord:
    """A saved record."""
    return RunRecord.model_validate_json(path.read_text(encoding="utf-8"))


class PinnedBridge(OptimizeBridge):
    """The real bridge with the machine probe pinned (no GPU, no LLM), so tests do not depend on the host;
    built without the loop when the ``no_loop`` fixture removed ``perfagent.optimize``."""

    def __init__(self) -> None:
        super().__init__(loop=hasattr(perfagent, "optimize"))

    def probe(self, record: RunRecord) -> Capabilities:
        return Capabilities(
            loop=self.unavailable_reason(),
            source=source_reason(record),
            gpu="none here (pinned by the test) — CPU correctness checks only, no timings",
            llm="no endpoint (PERFAGENT_LLM_BASE_URL unset) — recipes backend only",
        )


ORIGINAL = "__global__ void k(float* x) { x[threadIdx.x * 32] += 1.0f; }\n"
CANDIDATE = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"


LONG_LOG_LINE = (
    "c1: `env TRITON_INTERPRET=1 CUDA_VISIBLE_DEVICES= /usr/bin/python3 "
    "/home/user/project/.perfagent/runs/20261124-043401-eb1cf9/candidates/01_launch-config/source.py` "
    "exited 0 (correctness is only what it checks)"
)
"""A progress line as long as the real loop's check-command lines (wider than any pane)."""
LONG_CHECK_DETAIL = (
    "mismatch at index 7: got 3.0, expected 1.0 (max abs err 2.0 > atol 1e-05 + rtol 1e-05 × |expected|); "
    "1 of 32 outputs differ, first at index 7"
)


class FakeLoop:
    """A stand-in for ``perfagent.optimize`` (its public signature: target, settings, progress).

    It records its calls (the settings' fields flattened) and returns a record with one candidate the
    loop accepted and one it rejected, their sources written into a folder of its own.
    """

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(
        self, target: str | Path, *, settings: OptimizeSettings | None = None, progress: Any = None
    ) -> RunRecord:
        chosen = settings or OptimizeSettings()
        self.calls.append(
            {
                "target": target,
                "settings": chosen,
                "backend": chosen.backend,
                "kernel": chosen.kernel,
                "finding": chosen.finding,
                "transforms": list(chosen.transforms),
            }
        )
        tell: Callable[[LoopEvent], None] = progress or (lambda _e: None)
        tell(Info(message="proposing candidates with the recipes backend"))
        tell(Info(message="verifying c1", step=1, total=2))
        tell(Info(message=LONG_LOG_LINE))
        tell(Info(message="verifying c2", step=2, total=2))
        return self._record(str(target), chosen)

    def _record(self, target: str, settings: OptimizeSettings) -> RunRecord:
        run = Path(tempfile.mkdtemp(prefix="perfagent-fake-run-"))
        transform = settings.transforms[0]
        diff = "--- k.cu\n+++ k.cu\n@@ -1 +1 @@\n-" + ORIGINAL + "+" + CANDIDATE
        common = {
            "rewrite_id": "r",
            "backend": settings.backend,
            "transform": transform,
            "iteration": 1,
            "file": target,
        }
        (run / "c1.cu").write_text(CANDIDATE, encoding="utf-8")
        (run / "c2.cu").write_text("broken\n", encoding="utf-8")
        c1 = CandidateOutcome(
            id="c1",
            diff=diff,
            verdict="accepted",
            checks=[
                CheckRecord(name="correctness", passed=True, detail="max abs err 0 vs reference"),
                CheckRecord(
                    name="faster beyond noise", passed=True, detail="median 1.9× over 30 interleaved runs"
                ),
            ],
            time_s_before=4.0e-4,
            time_s=2.1e-4,
            accepted=True,
            reason="correct and 1.9× faster; global_load_bytes_per_sector rose",
            source_path=str(run / "c1.cu"),
            metrics_before={"dram_throughput_pct": 80.0, "global_load_bytes_per_sector": 8.0},
            metrics_after={"dram_throughput_pct": 62.0, "global_load_bytes_per_sector": 32.0},
            verification=VerificationSummary(verdict="pass", reason="correct"),
            **common,
        )
        c2 = CandidateOutcome(
            id="c2",
            diff="--- k.cu\n+++ k.cu\n",
            verdict="incorrect",
            checks=[CheckRecord(name="correctness", passed=False, detail=LONG_CHECK_DETAIL)],
            time_s_before=4.0e-4,
            accepted=False,
            reason="output differs from the reference",
            source_path=str(run / "c2.cu"),
            verification=VerificationSummary(verdict="fail", reason="output differs"),
            **common,
        )
        result = OptimizeResult(
            target=target,
            workload="cuda-kernel",
            language="cuda",
            backend=settings.backend,
            device="cpu",
            gpu=False,
            iterations=1,
            baseline=OptimizeBaseline(file=target),
            candidates=[c1, c2],
            notes=["no GPU: timings come from the recorded run"],
        )
        return RunRecord(kind="optimize", target=target, tool="none", optimize=result, candidates=[c1, c2])


async def screen_ready(pilot: Any, kind: type[Any], *, timeout_s: float = 120.0) -> Any:
    """The app's screen once it is a ``kind`` whose compose and ``on_mount`` have both run.

    ``isinstance(app.screen, kind)`` alone is a race: ``switch_screen``/``push_screen`` put the screen on
    the stack before its message loop composes and mounts it, so a query right then finds no widgets (and
    a test that fails there tears the app down while the Header's title watcher is pending: the
    ``NoMatches HeaderTitle`` seen under CPU load). This waits on the load worker's completion and the
    screen's own mounted event, never on a fixed delay.
    """
    app = pilot.app
    async with asyncio.timeout(timeout_s):
        while not isinstance(app.screen, kind):
            await settle(app)  # the load worker, when one runs: its completion posts the new screen
            await pilot.pause()  # the app handles the message that switches screens
        screen = app.screen
        await screen._mounted_event.wait()  # set after compose and on_mount (textual's MessagePump)
        await pilot.pause()  # what on_mount scheduled (call_after_refresh, reactive watchers)
    return screen


async def settle(app: Any) -> None:
    """Wait for the app's workers, tolerating ones the app cancelled itself.

    ``App.workers.wait_for_complete`` raises ``WorkerCancelled`` when an exclusive worker was superseded
    (seen once in CI on the saved-run load): the app's state, not the worker's fate, is what tests assert.
    """
    from textual.worker import WorkerCancelled

    for _ in range(3):
        try:
            await app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            await asyncio.sleep(0.05)
