"""Executors: how a suite's entries are spread over workers.

``local`` (default) keeps one slot per local GPU (``CUDA_VISIBLE_DEVICES`` pinned; ``--workers N`` CPU
slots with ``--device cpu``) on ``concurrent.futures``; each entry runs in a fresh worker process in its
slot, so a CUDA error or a timeout retires that process only, and because a slot runs one entry at a
time, ncu runs are serialised per GPU. ``ray`` (``perfagent.suite.ray_executor``, optional extra) puts
one ``num_gpus=1`` actor per GPU of a Ray cluster in front of the same worker process. Both produce the
same ``EntryResult`` rows.
"""

from __future__ import annotations

import importlib
import os
import queue
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from perfagent.suite.hygiene import host
from perfagent.suite.manifest import SuiteEntry
from perfagent.suite.models import EntryResult, FailureCause, SuiteSettings
from perfagent.suite.worker import PARENT_ENV, WorkerRequest
from perfagent.workloads.extension_builds import BUILDS_ENV
from profilers.core_errors import BadInput
from profilers.errors import ProfilerError, ToolTimeout
from profilers.live_groups import stop_all
from profilers.process import run_command
from profilers.settings import TIMEOUTS

ResultSink = Callable[[EntryResult], None]
"""Receives each entry's row as soon as it finishes (in completion order)."""

EXECUTORS: dict[str, str] = {
    "local": "perfagent.suite.executors:LocalExecutor",
    "ray": "perfagent.suite.ray_executor:RayExecutor",
}


class Executor(Protocol):
    """Runs entries on workers and hands every row to ``on_result``."""

    name: str
    workers: int
    """How many entries run at once."""

    def run(
        self, entries: Sequence[SuiteEntry], settings: SuiteSettings, out: Path, on_result: ResultSink
    ) -> None:
        """Run every entry; return when all rows were handed over."""
        ...


def slot_env(out: Path, slot: str, gpu: str | None) -> dict[str, str]:
    """A worker's environment: the pinned GPU and build caches of its own (kept across its entries)."""
    cache = out / "cache" / slot
    env = dict(os.environ)
    env |= {
        "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "PERFAGENT_CACHE_DIR": str(cache / "perfagent"),
        BUILDS_ENV: str(cache / "extension_builds"),  # read-only in confined workers
        "PYTHONUNBUFFERED": "1",
        PARENT_ENV: str(os.getpid()),
    }
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    return env


def _failed_row(
    entry: SuiteEntry, cause: FailureCause, message: str, started: float, worker: str
) -> EntryResult:
    return EntryResult(
        name=entry.name,
        kind=entry.kind,
        target=str(entry.target),
        candidate=str(entry.candidate) if entry.candidate else None,
        failure=cause,
        flags=[message[:300]],
        host=host(),
        worker=worker,
        elapsed_s=time.monotonic() - started,
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def launch_worker(
    entry: SuiteEntry, settings: SuiteSettings, out: Path, *, slot: str, gpu: str | None, worker: str
) -> EntryResult:
    """Run ``entry`` in a fresh worker process (pinned to ``gpu``) and return its row, whatever happens."""
    started = time.monotonic()
    work = out / "work" / slot
    work.mkdir(parents=True, exist_ok=True)
    env = slot_env(out, slot, gpu)
    request = WorkerRequest(entry=entry.model_dump(mode="json"), settings=settings, out=str(out))
    req_path, res_path = work / "request.json", work / "result.json"
    res_path.unlink(missing_ok=True)
    req_path.write_text(request.model_dump_json(), encoding="utf-8")
    timeout = entry.options.timeout_s or settings.entry_timeout_s
    argv = [sys.executable, "-m", "perfagent.suite.worker", str(req_path), str(res_path)]
    try:
        done = run_command(argv, timeout_s=timeout, env=env, cwd=work)
    except ToolTimeout:
        return _failed_row(
            entry, "timeout", f"entry ran past its {timeout:g} s limit; worker killed", started, worker
        )
    except ProfilerError as exc:
        return _failed_row(entry, "crash", f"worker could not start: {exc}", started, worker)
    if not res_path.is_file():
        return _failed_row(
            entry,
            "crash",
            f"worker exited {done.returncode} without a result: {done.tail(3)}",
            started,
            worker,
        )
    row = EntryResult.model_validate_json(res_path.read_text(encoding="utf-8"))
    return row.model_copy(update={"worker": worker})


class LocalExecutor:
    """One slot per local GPU (or ``workers`` CPU slots), each running entries in fresh worker processes."""

    name = "local"

    def __init__(self, gpus: Sequence[str | None]) -> None:
        if not gpus:
            raise BadInput("no worker slots", hint="pass --workers N (CPU) or run where GPUs are visible")
        self.gpus = list(gpus)
        self.workers = len(self.gpus)

    def run(
        self, entries: Sequence[SuiteEntry], settings: SuiteSettings, out: Path, on_result: ResultSink
    ) -> None:
        free: queue.Queue[tuple[int, str | None]] = queue.Queue()
        for i, gpu in enumerate(self.gpus):
            free.put((i, gpu))

        def one(entry: SuiteEntry) -> EntryResult:
            i, gpu = free.get()
            try:
                label = f"local/{i}" + (f" (GPU {gpu})" if gpu is not None else " (cpu)")
                row = launch_worker(entry, settings, out, slot=f"slot{i}", gpu=gpu, worker=label)
                if settings.cooldown_s > 0 and any(j in settings.jobs for j in ("bench", "optimize")):
                    time.sleep(settings.cooldown_s)
                return row
            finally:
                free.put((i, gpu))

        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="suite-slot")
        futures = [pool.submit(one, e) for e in entries]
        try:
            for fut in as_completed(futures):
                on_result(fut.result())
        except BaseException:  # Ctrl-C, SIGTERM/SIGHUP (made KeyboardInterrupt by the CLI): stop now
            # Queued entries never start; running workers are asked to end (they remove their temporary
            # folders) and killed after a grace period; their rows, which would only say "killed", are
            # not recorded: --resume runs those entries again.
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise
        pool.shutdown()


def visible_gpus() -> list[str]:
    """Indices of the local NVIDIA GPUs (honouring an existing ``CUDA_VISIBLE_DEVICES``)."""
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    if pinned is not None:
        return [g.strip() for g in pinned.split(",") if g.strip() and g.strip() != "-1"]
    try:
        done = run_command(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], timeout_s=TIMEOUTS.probe_s
        )
    except ProfilerError:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.ok else []


def make_executor(
    name: str, *, device: str, workers: int | None, ray_address: str | None, allow_mixed: bool
) -> Executor:
    """The executor ``name`` with its workers: GPUs on ``cuda``/``auto`` (when visible), CPU slots otherwise."""
    if name not in EXECUTORS:
        raise BadInput(f"unknown executor {name!r}", hint="use --executor local or --executor ray")
    if name == "local":
        gpus: list[str | None] = [] if device == "cpu" else list(visible_gpus())
        if not gpus:
            if device == "cuda":
                raise BadInput(
                    "--device cuda but no NVIDIA GPU is visible", hint="use --device cpu --workers N"
                )
            gpus = [None] * (workers or 1)
        elif workers:
            gpus = gpus[:workers]
        return LocalExecutor(gpus)
    module_name, cls_name = EXECUTORS[name].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "ray":
            raise BadInput(
                "--executor ray needs Ray, which is not installed", hint='pip install "perfagent[ray]"'
            ) from exc
        raise
    executor: Executor = getattr(module, cls_name)(
        device=device, workers=workers, address=ray_address, allow_mixed=allow_mixed
    )
    return executor
