"""The build step: each distinct Python file's JIT extensions built once, confined, before any worker runs it.

``prebuild(files)`` runs one build worker per file that builds a ``load_inline``/``load`` extension and
has no build yet (``extension_builds``: folders keyed by the file's bytes and the toolchain), several at
once. A build worker is candidate code like any other: a fresh process under bubblewrap (no network,
scrubbed environment, hidden credentials) whose only writable folders are its own temporary folder and
**its file's build folder**. Every later worker (verification, timing, the ncu-profiled run) sees the
builds read-only and loads the ``.so`` directly. A failed build is written to the folder once and
raised again by every worker that loads the file, never rebuilt.

``build_environment()`` makes every process of this run agree on the build settings: the build root
and ``TORCH_CUDA_ARCH_LIST`` = the visible GPUs' own architectures (torch's default adds PTX for the
newest one, which costs build time and nothing else here), both put into ``os.environ`` once unless the
user set them.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from perfagent.sandbox.confinement import require, worker_env
from perfagent.workloads import extension_builds as eb
from perfagent.workloads.cuda_toolkit import load_inline_gap
from profilers.confine import Confinement, bwrap_argv, hidden_secrets
from profilers.errors import ProfilerError, ToolTimeout
from profilers.process import run_command
from profilers.settings import TIMEOUTS

BUILD_WORKER = "perfagent.sandbox.extension_build_worker"
DEFAULT_BUILD_TIMEOUT_S = TIMEOUTS.compile_s
"""A ``load_inline`` build of a torch extension takes 20-60 s; ten times that is a hung compiler."""
ARCH_QUERY_TIMEOUT_S = TIMEOUTS.probe_s
_REPO_ROOT = Path(__file__).resolve().parents[2]
_FOLDER_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class BuildStep:
    """What the build step did for one file."""

    file: str
    folder: str
    state: str
    """'built' (now), 'cached' (built before), 'failed' (now or before: ``detail`` says why),
    'not-built' (this machine lacks what the build needs: nothing kept, the worker reports the gap)."""
    seconds: float
    detail: str = ""


def _visible_indices(visible: str | None, count: int) -> list[int]:
    """The GPU indices ``CUDA_VISIBLE_DEVICES`` leaves visible (all when unset; UUIDs: all)."""
    if visible is None:
        return list(range(count))
    wanted = [v.strip() for v in visible.split(",") if v.strip()]
    if not all(v.isdigit() for v in wanted):
        return list(range(count))
    return [int(v) for v in wanted if int(v) < count]


@functools.cache
def device_arch_list() -> str | None:
    """``TORCH_CUDA_ARCH_LIST`` for the visible GPUs ('9.0'), or None (no GPU, no nvidia-smi)."""
    try:
        done = run_command(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            timeout_s=ARCH_QUERY_TIMEOUT_S,
        )
    except ProfilerError:
        return None
    caps = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
    if done.returncode != 0 or not caps:
        return None
    picked = {caps[i] for i in _visible_indices(os.environ.get("CUDA_VISIBLE_DEVICES"), len(caps))}
    return ";".join(sorted(picked)) or None


def build_environment() -> None:
    """Put the build root and the device's architectures into ``os.environ`` (where not set), so that
    the build step, the workers and the profiled run compute the same build folders."""
    os.environ.setdefault(eb.BUILDS_ENV, str(eb.builds_root()))
    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        arch = device_arch_list()
        if arch:
            os.environ["TORCH_CUDA_ARCH_LIST"] = arch


def _folder_lock(folder: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _FOLDER_LOCKS.setdefault(folder, threading.Lock())


def build_jobs(files: int) -> int:
    """How many builds run at once: one per 4 CPU cores (nvcc and g++ of torch's headers are heavy)."""
    return max(1, min(files, (os.cpu_count() or 1) // 4))


def prebuild(
    files: Sequence[Path | str],
    *,
    timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[BuildStep]:
    """Build the extensions of every distinct file in ``files`` that has none yet, ``jobs`` at once.

    Files that build no extension are skipped. Never raises for a build failure: it is recorded in the
    file's folder (and returned), and the worker that loads the file reports it.

    Raises:
        BadInput: bubblewrap cannot confine here and ``--unconfined`` was not given.
    """
    todo = list(dict.fromkeys(Path(f).resolve() for f in files))
    todo = [f for f in todo if eb.builds_extensions(f)]
    if todo and load_inline_gap() is not None:  # the worker says what is missing, as before
        todo = [f for f in todo if not eb.needs_cuda(f)]
    if not todo:
        return []
    require()
    build_environment()
    n = jobs or build_jobs(len(todo))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="perfagent-build") as pool:
        return list(pool.map(lambda f: _build_once(f, timeout_s, progress), todo))


def _build_once(file: Path, timeout_s: float, progress: Callable[[str], None] | None) -> BuildStep:
    """The file's build: found, or made now by one build worker (one per folder at a time)."""
    folder = eb.file_folder(file)
    with _folder_lock(folder):
        started = time.monotonic()
        failure = eb.recorded_failure(folder)
        if failure is not None:
            return BuildStep(str(file), str(folder), "failed", 0.0, failure.splitlines()[0])
        if (folder / eb.FILE_BUILT).is_file():
            return BuildStep(str(file), str(folder), "cached", 0.0)
        if progress:
            progress(f"building the extensions of {file.name} (confined build step) …")
        folder.mkdir(parents=True, exist_ok=True)
        rc, detail = _run_build_worker(file, folder, timeout_s)
        spent = round(time.monotonic() - started, 3)
        if (folder / eb.FILE_BUILT).is_file():
            return BuildStep(str(file), str(folder), "built", spent)
        if rc == eb.ENVIRONMENT_EXIT:  # this machine cannot build it: not the file's fault, not kept
            return BuildStep(str(file), str(folder), "not-built", spent, detail)
        failure = eb.recorded_failure(folder)
        if failure is None:  # the worker died before writing anything: record why, once
            failure = f"the build step of {file.name} failed: {detail}"
            (folder / eb.FAILED).write_text(failure + "\n", encoding="utf-8")
        return BuildStep(str(file), str(folder), "failed", spent, failure.splitlines()[0])


def _run_build_worker(file: Path, folder: Path, timeout_s: float) -> tuple[int | None, str]:
    """Run the build worker on ``file`` (confined where possible): its exit status and how it ended."""
    sandbox = require()
    base = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="perfagent-build-") as own:
        env = worker_env(base, Path(own))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env[eb.BUILDS_ENV] = str(eb.builds_root())
        prefix: list[str] = []
        if sandbox.confined:
            home = os.path.abspath(base.get("HOME") or str(Path.home()))
            policy = Confinement(writable=(str(folder), own), hidden=hidden_secrets(home))
            prefix = bwrap_argv(policy)
        argv = [*prefix, sys.executable, "-m", BUILD_WORKER, str(file), str(folder)]
        try:
            done = run_command(argv, timeout_s=timeout_s, env=env, cwd=Path(own))
        except ToolTimeout:
            return None, f"it ran past {timeout_s:g} s"
        except ProfilerError as exc:
            return None, exc.message
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return done.returncode, f"exit status {done.returncode}: {' | '.join(tail)}"[:400]
