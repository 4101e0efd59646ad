"""Parent side of the worker: spawn, wait, and turn every way a child can end into data.

The worker is a new process per request. By default it is forked from a warm server that imported
torch and the worker's modules once (``profilers.process.run_forked``: 3-5 s less per worker on a GPU
host); under compute-sanitizer, or with ``PERFAGENT_WORKER_START=fresh``, it is a new interpreter
(``profilers.process.run_command``: ``python -m perfagent.sandbox.worker``). Either way the process
group is killed on timeout, and a crash (signal, ``os._exit``), a hang, a missing or forged result file
each become a failed check that says what happened and during which call (the worker's progress file).
"""

from __future__ import annotations

import atexit
import glob
import os
import secrets
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from perfagent.sandbox import standby
from perfagent.sandbox.confinement import (
    Status,
    plan,
    policy,
    require,
    status,
    unconfined_accepted,
    worker_env,
)
from perfagent.sandbox.extension_build import prebuild
from perfagent.sandbox.jobs import Job, job_of, registered
from perfagent.sandbox.wire import WorkerCall, WorkerRequest
from perfagent.sandbox.worker_outcome import (
    WorkerOutcome,
    item_result_path,
    outcome,
    read_result,
    timed_out,
)
from profilers.confine import Confinement, bwrap_argv, scrub_env
from profilers.core_errors import BadInput, ToolFailure
from profilers.errors import ProfilerUnavailable, ToolTimeout
from profilers.process import (
    CompletedCommand,
    Standby,
    fork_server_available,
    run_command,
    run_forked,
)

SANITIZER_EXIT = 86
WORKER_MODULE = "perfagent.sandbox.worker"
"""What the runner starts with ``python -m``."""


def worker_preload() -> tuple[str, ...]:
    """What the warm server imports once for every forked worker: torch, the worker, and every
    registered job's modules. Nothing here reads the environment or touches the GPU at import (Triton,
    which reads ``TRITON_INTERPRET``, and CUDA stay for each worker)."""
    jobs = sorted(registered().values(), key=lambda j: j.name)
    modules = [m for j in jobs for m in (j.registered_by, j.entry.partition(":")[0])]
    return tuple(dict.fromkeys(["torch", WORKER_MODULE, *modules]))


WORKER_START_ENV = "PERFAGENT_WORKER_START"
"""``fresh``: every worker is a new interpreter (no warm server); default ``warm``."""
_REPO_ROOT = Path(__file__).resolve().parents[2]
_ROOT_LOCK = threading.Lock()
_WORKERS_ROOT: Path | None = None


def _env(work: Path, device: str, sanitizer: bool = False) -> dict[str, str]:
    """The worker's environment: ours without secrets, a private home (``confinement.worker_env``)."""
    env = worker_env(dict(os.environ), work)
    if sanitizer:  # one cudaMalloc per tensor, so that memcheck sees each tensor's real bounds
        env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_worker(
    request: WorkerRequest,
    *,
    backstop_s: float,
    sanitizer: bool = False,
    progress: Callable[[str], None] | None = None,
    items: int = 0,
) -> WorkerOutcome:
    """Run one worker and collect its result.

    Args:
        request: the job's typed request (its job registered by the module above that owns it).
        backstop_s: wall-clock limit of the whole worker (the per-call limits are the watchdog's).
        sanitizer: run the worker under ``compute-sanitizer --tool memcheck``.
        progress: receives one line per phase (for stderr).
        items: a sequence worker's step count: each step's result (``item_result_path``) is read too.

    Raises:
        BadInput: the reference failed (it must work for anything to be checked), or
            compute-sanitizer was requested but is not installed.
    """
    sandbox = require()
    # JIT extensions are built once per distinct file by the confined build step; this worker reads them
    prebuild(_request_files(request), timeout_s=backstop_s)
    gpu_bwrap_only = gpu_confined_by_bubblewrap_alone(sandbox.confined, request.device)
    warm = warm_start(sanitizer) and not gpu_bwrap_only
    # a fresh worker started ahead (``standby``), when one waits and it is what a fresh start would be
    spare = None if warm or sanitizer else standby.take(_fresh_command(sandbox.confined, request.device))
    # A warm server is confined once, with one folder writable for all its workers; each worker
    # narrows itself to its own subfolder (Landlock, ``watch.restrict``).
    work = (
        spare.work
        if spare
        else Path(tempfile.mkdtemp(prefix="perfagent-worker-", dir=_workers_root() if warm else None))
    )
    try:
        return _run(
            work,
            request,
            sandbox,
            warm=warm,
            backstop_s=backstop_s,
            sanitizer=sanitizer,
            landlock=sandbox.confined and not sanitizer and not gpu_bwrap_only,
            progress=progress,
            items=items,
            spare=spare.process if spare else None,
        )
    finally:
        if not os.environ.get("PERFAGENT_KEEP_WORKDIR"):
            shutil.rmtree(work, ignore_errors=True)


def _request_files(request: WorkerRequest) -> list[str]:
    """The workload files a worker will import (the reference and every candidate)."""
    return [str(r.path) for r in (request.reference, *request.candidates())]


def _run(
    work: Path,
    request: WorkerRequest,
    sandbox: Status,
    *,
    warm: bool,
    backstop_s: float,
    sanitizer: bool,
    landlock: bool,
    progress: Callable[[str], None] | None,
    items: int = 0,
    spare: Standby | None = None,
) -> WorkerOutcome:
    job = job_of(request)
    result_path, progress_path = work / "result.json", work / "progress.log"
    request_path, policy = _write_call(work, request, job, warm=warm, landlock=landlock)
    wrapper = bwrap_argv(policy) if sandbox.confined else []
    nonce = secrets.token_hex(16)
    if progress:
        progress(f"running the {job.mode} worker ({request.device}) ...")
    env = _env(work, request.device, sanitizer)
    try:
        if warm:
            done = _start_forked(request_path, work, env, wrapper, nonce, backstop_s)
        elif spare is not None:  # started ahead with this command line: it reads the request now
            done = spare.finish(nonce + "\n", timeout_s=backstop_s)
        else:
            argv = [*wrapper, *_argv(request_path, sanitizer)]
            done = run_command(argv, timeout_s=backstop_s, cwd=work, env=env, stdin_text=nonce + "\n")
    except ToolTimeout:
        hung = timed_out(progress_path, backstop_s)
        hung.items = [read_result(item_result_path(result_path, i), nonce)[0] for i in range(items)]
        return hung
    except ProfilerUnavailable as exc:
        raise ToolFailure(f"cannot start the worker: {exc.message}", hint=exc.hint) from None
    note = sandbox.describe() + (GPU_BWRAP_ONLY_NOTE if sandbox.confined and not landlock else "")
    return outcome(done, job, request, work, nonce, sanitizer=sanitizer, sandbox_note=note, items=items)


def _write_call(
    work: Path, request: WorkerRequest, job: Job, *, warm: bool, landlock: bool
) -> tuple[Path, Confinement]:
    """Write the worker's call (its request, where it writes, what it watches) to ``work/request.json``;
    returns that file and the bubblewrap confinement planned for the worker."""
    policy, watch = plan(request, work, work.parent if warm else work, dict(os.environ))
    call = WorkerCall(
        registry=job.registered_by,
        request=request.model_dump(mode="json"),
        result_path=str(work / "result.json"),
        progress_path=str(work / "progress.log"),
        # compute-sanitizer's injected library keeps files of its own, and GPU workers see no device
        # under Landlock or the warm confined start (measured): bubblewrap alone confines those
        watch=watch.model_copy(update={"landlock": landlock}),
    )
    request_path = work / "request.json"
    request_path.write_text(call.model_dump_json())
    return request_path, policy


GPU_BWRAP_ONLY_NOTE = "; a fresh process under bubblewrap alone (no Landlock, no warm start)"
"""Said of a confined worker that Landlock does not narrow (GPU workers, compute-sanitizer)."""


def gpu_confined_by_bubblewrap_alone(confined: bool, device: str) -> bool:
    """Whether a GPU worker runs fresh under bubblewrap alone.

    On an H200 (driver 580.159.04, 2026-11-26) a confined worker forked from the warm server with
    Landlock applied found no CUDA device, while a fresh worker under bubblewrap alone (the
    compute-sanitizer path) built, verified and ran memcheck on the GPU. Until the warm confined start
    and Landlock are shown to see the GPU, GPU workers take the configuration that was measured to work:
    still no network, a read-only file system but their folder and caches, scrubbed environment,
    hidden credentials.
    """
    gpu = device.startswith("cuda") or (device == "auto" and bool(glob.glob("/dev/nvidia[0-9]*")))
    return confined and gpu


def warm_start(sanitizer: bool) -> bool:
    """Whether the worker is forked from the warm server (not under compute-sanitizer, which must start
    the process itself; not when ``PERFAGENT_WORKER_START=fresh``; only where ``fork`` exists)."""
    return not sanitizer and os.environ.get(WORKER_START_ENV, "warm") != "fresh" and fork_server_available()


def _workers_root() -> Path:
    """This process's folder for the work folders of warm-started workers (one per process: the
    confined warm server is started with it writable)."""
    global _WORKERS_ROOT
    with _ROOT_LOCK:
        if _WORKERS_ROOT is None or not _WORKERS_ROOT.is_dir():
            _WORKERS_ROOT = Path(tempfile.mkdtemp(prefix="perfagent-workers-"))
            atexit.register(shutil.rmtree, _WORKERS_ROOT, ignore_errors=True)
        return _WORKERS_ROOT


def _start_forked(
    request_path: Path, work: Path, env: dict[str, str], wrapper: list[str], nonce: str, backstop_s: float
) -> CompletedCommand:
    """Run the worker forked from the warm server (started under ``wrapper``, without secrets)."""
    return run_forked(
        f"{WORKER_MODULE}:main",
        [str(request_path)],
        preload=worker_preload(),
        timeout_s=backstop_s,
        cwd=work,
        env=env,
        stdin_text=nonce + "\n",
        wrapper=wrapper,
        server_env=scrub_env(dict(os.environ)),
        io_root=work,
    )


def starts_fresh(device: str) -> bool:
    """Whether a worker for ``device`` is a new interpreter (not forked from the warm server)."""
    return not warm_start(False) or gpu_confined_by_bubblewrap_alone(status().confined, device)


def _fresh_command(confined: bool, device: str) -> standby.Command:
    """A worker folder -> the command line and environment of a fresh worker for ``device`` there."""

    def command(work: Path) -> tuple[list[str], dict[str, str]]:
        wrapper = bwrap_argv(policy(work, dict(os.environ))) if confined else []
        return [*wrapper, *_argv(work / "request.json", False)], _env(work, device)

    return command


@contextmanager
def workers_ahead(device: str, preload: tuple[str, ...] = (), spares: int = standby.SPARES) -> Iterator[None]:
    """While inside, ``spares`` fresh workers for ``device`` are kept started ahead (``standby``): where workers
    start fresh (a confined GPU worker), and candidate code may run here at all. ``preload``: the job
    modules it imports ahead (besides torch and the worker)."""
    st = status()
    if not starts_fresh(device) or not (st.confined or unconfined_accepted()):
        yield
        return
    modules = tuple(dict.fromkeys([*worker_preload(), *preload, "cuda.core"]))

    def new_work() -> Path:
        return Path(tempfile.mkdtemp(prefix="perfagent-worker-"))

    with standby.ahead(_fresh_command(st.confined, device), new_work, modules, spares):
        yield


def _argv(request_path: Path, sanitizer: bool) -> list[str]:
    """The worker's command line, under compute-sanitizer's memcheck when ``sanitizer``.

    Raises:
        BadInput: ``sanitizer`` but compute-sanitizer is not on PATH.
    """
    argv: list[str] = [sys.executable, "-m", WORKER_MODULE, str(request_path)]
    if not sanitizer:
        return argv
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        raise BadInput(
            "--sanitizer needs compute-sanitizer, which is not on PATH",
            hint="install the CUDA toolkit or drop --sanitizer",
        )
    # API errors are the runtime probing entry points (cuGetProcAddress, seen on the H200 with torch),
    # not the candidate's memory accesses: report only memory errors.
    return [
        tool,
        "--tool",
        "memcheck",
        "--report-api-errors",
        "no",
        "--error-exitcode",
        str(SANITIZER_EXIT),
        "--print-limit",
        "20",
        *argv,
    ]
