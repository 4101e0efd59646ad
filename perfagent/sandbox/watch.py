"""Worker side of the confinement: Landlock narrows this one worker, an audit hook keeps the evidence.

The operating system enforces (``profilers.confine``: bubblewrap, network and mount namespaces); inside
that shared sandbox each worker then restricts itself with Linux Landlock before any user code runs:
writes only beneath its own folder, the build caches and ``/dev``; reads everywhere but the user's
home, except the project and Python folders the parent listed. A Landlock ruleset cannot be lifted.

Enforcement turns an attempt into an ``OSError`` that user code may swallow, so a Python audit hook
(PEP 578, also irremovable) records every attempt to write outside, to read the user's home or a
credential file, or to reach the network, with the call that was running; the worker turns the record
into a failed ``sandbox-violation`` check. The hook sees Python-level calls only; what native code does
is still stopped by the OS, and shows as the candidate's own failure.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfagent.sandbox.wire import Check, WorkerWatch

VIOLATION_CHECK = "sandbox-violation"
MAX_EVIDENCE = 8
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
}
"""Audit events that change the file system, and which of their arguments are the paths changed."""
_NET_FAMILIES = {socket.AF_INET, socket.AF_INET6}
CREDENTIAL_ENTRIES = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials")
"""Home entries whose reading is a violation even where the project folder is the home itself."""


def _path_of(value: Any) -> str | None:
    if isinstance(value, int) or value is None:
        return None  # a descriptor: what it names was checked when it was opened
    try:
        raw = os.fsdecode(value)
    except TypeError:
        return None
    return os.path.abspath(raw)


def _beneath(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass
class Watch:
    """The audit hook's state: what may be touched, and what was tried."""

    policy: WorkerWatch
    phase: Callable[[], str] = lambda: "start-up"
    """What is running (the harness's last progress line), for the evidence."""
    seen: dict[str, str] = field(default_factory=dict)
    """Each distinct attempt and the call during which it was first made."""
    count: int = 0

    def _record(self, what: str) -> None:
        self.count += 1
        if what not in self.seen and len(self.seen) < MAX_EVIDENCE:
            self.seen[what] = self.phase()

    def _writable(self, path: str) -> bool:
        return _beneath(path, [*self.policy.writable, "/dev"]) or path.startswith("/proc/self/")

    def _readable(self, path: str) -> bool:
        home = self.policy.user_home
        if home is None:
            return True
        credentials = [os.path.join(home, e) for e in CREDENTIAL_ENTRIES]
        if _beneath(path, credentials):
            return False
        return not _beneath(path, [home]) or _beneath(
            path, [*self.policy.readable_home, *self.policy.writable]
        )

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook (must never raise: it would break the call it watches)."""
        try:
            self._inspect(event, args)
        except Exception:  # noqa: S110 - a watcher that fails must not change what it watches
            pass

    def _inspect(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path = _path_of(args[0])
            if path is None:
                return
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and not self._writable(path):
                self._record(f"write {path}")
            elif not writes and not self._readable(path):
                self._record(f"read {path}")
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                path = _path_of(args[i]) if i < len(args) else None
                if path is not None and not self._writable(path):
                    self._record(f"{event} {path}")
        elif event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
            sock = args[0]
            if getattr(sock, "family", None) in _NET_FAMILIES:
                self._record(f"{event.split('.')[1]} {args[1]!r}")
        elif event == "socket.getaddrinfo":
            self._record(f"name lookup {args[0]!r}")

    def check(self) -> Check | None:
        """The failed ``sandbox-violation`` check when anything was tried, else None."""
        if not self.count:
            return None
        how = "stopped by the sandbox" if self.policy.confined else "NOT stopped: the worker ran unconfined"
        tries = "; ".join(f"{what} (first during {phase})" for what, phase in self.seen.items())
        return Check(
            name=VIOLATION_CHECK,
            passed=False,
            detail=f"user code tried to leave its sandbox {self.count} time(s), {how}: {tries}",
        )


def install(policy: WorkerWatch, phase: Callable[[], str]) -> Watch:
    """Start watching (for the rest of this process: audit hooks cannot be removed)."""
    watch = Watch(policy=policy, phase=phase)
    sys.addaudithook(watch.hook)
    return watch


def _read_roots(home: str | None, extra: list[str]) -> list[str]:
    """Every folder Landlock lets the worker read: the whole tree but the branch holding ``home``,
    plus ``extra`` (the project, Python's folders, the worker's own)."""
    if home is None:
        return ["/", *extra]
    roots: list[str] = []
    here = Path("/")
    for part in Path(home).parts[1:]:
        try:
            roots += [str(p) for p in here.iterdir() if p.name != part]
        except OSError:
            pass
        here = here / part
    return roots + [e for e in extra if os.path.exists(e)]


def landlock_line() -> str:
    """Whether Landlock can narrow a worker here, as one line (for ``doctor``)."""
    # landlock is optional (Linux only): a missing module means no Landlock, said, not an error
    try:
        from landlock.plumbing import landlock_abi_version

        return f"Landlock ABI {landlock_abi_version()}"
    except ImportError:
        return "Landlock: the landlock package is not installed"
    except Exception as exc:  # the kernel has none
        return f"Landlock: unavailable ({exc})"


def restrict(policy: WorkerWatch) -> str:
    """Apply Landlock to this process (irreversible); what was applied, or why not, as one line."""
    # landlock is optional (Linux only): a missing module means no Landlock, said, not an error
    try:
        import landlock
        from landlock.plumbing import landlock_abi_version
    except ImportError:
        return "Landlock: the landlock package is not installed (this worker is confined by bubblewrap alone)"
    try:
        abi = landlock_abi_version()
        ruleset = landlock.Ruleset()
        read = landlock.FSAccess.EXECUTE | landlock.FSAccess.READ_FILE | landlock.FSAccess.READ_DIR
        for root in _read_roots(policy.user_home, list(policy.readable_home)):
            ruleset.allow(root, rules=read if os.path.isdir(root) else read & ~landlock.FSAccess.READ_DIR)
        for root in [*policy.writable, "/dev"]:
            if os.path.isdir(root):
                ruleset.allow(root)
        ruleset.apply()
    except Exception as exc:  # an old kernel (no Landlock): bubblewrap still confines the worker
        return f"Landlock: not applied ({type(exc).__name__}: {exc})"
    return f"Landlock ABI {abi}: writes only to the worker's folder and caches, no reads in the user's home"
