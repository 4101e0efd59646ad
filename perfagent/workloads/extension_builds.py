"""Where a Python file's JIT extensions (``load_inline``/``load``) are built once for every later worker.

A ``load_inline`` build is close to a minute of nvcc and g++ on torch's headers. Without sharing, an
optimize run of a KernelBench solution built the same source in the profiled run, the timing worker and
every verification worker. Here each distinct file gets one folder, named by a hash of its bytes and of
the toolchain (``source_key``): a confined build step (``perfagent.sandbox.extension_build``) imports
the file once with that folder writable, and every later worker finds the built ``.so`` there and loads
it directly, with the folder **read-only** (it lies outside every folder a worker may write). A
candidate can therefore write only its own build, never the original's or another candidate's.

The folder holds one sub-folder per extension (``<name>-<digest>``, ``extension_cache``), a marker once
the whole file imported (``FILE_BUILT``), or the build's one-line failure (``FAILED``): a failed build
is reported from that file by every later worker, never rebuilt.

Torch-free: the parent computes the same key as the worker without importing torch.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

__all__ = [
    "BUILDS_ENV",
    "FAILED",
    "ENVIRONMENT_EXIT",
    "FILE_BUILT",
    "builds_extensions",
    "builds_root",
    "needs_cuda",
    "file_folder",
    "recorded_failure",
    "source_key",
]

BUILDS_ENV = "PERFAGENT_EXTENSION_BUILDS"
"""The root of the per-file build folders (outside every folder a confined worker may write)."""
FILE_BUILT = "file-built"
"""Marker: the build step imported the whole file (every extension it builds is in the folder)."""
FAILED = "build-failed.txt"
"""The build step's failure: one line of cause, then the build log's tail."""
TOOLCHAIN_ENV = ("TORCH_CUDA_ARCH_LIST", "CXX", "CC", "CUDA_HOME", "CUDA_PATH", "NVCC_APPEND_FLAGS")
"""Settings that change what a build produces (the key covers them)."""
ENVIRONMENT_EXIT = 3
"""The build worker's exit status when this machine lacks what the build needs (no failure is kept)."""
_USES_EXTENSIONS = re.compile(r"\b(load_inline|cpp_extension)\b")
_USES_CUDA = re.compile(r"\bcuda_sources\b|__global__|\.cu\b")


def builds_extensions(path: Path) -> bool:
    """Whether ``path`` is a Python file that builds a JIT extension when imported."""
    if path.suffix != ".py":
        return False
    try:
        return _USES_EXTENSIONS.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def needs_cuda(path: Path) -> bool:
    """Whether ``path``'s extension holds CUDA (``cuda_sources``, a ``__global__`` kernel, a ``.cu`` file)."""
    try:
        return _USES_CUDA.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def _torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


def source_key(path: Path, env: Mapping[str, str] | None = None) -> str:
    """Hex digest naming ``path``'s build folder: its bytes, torch's and Python's versions, the toolchain.

    Two files with the same bytes share a build; a changed byte, another torch or another target
    architecture (``TORCH_CUDA_ARCH_LIST``) gets a folder of its own.
    """
    env = os.environ if env is None else env
    h = hashlib.sha256(Path(path).read_bytes())
    h.update(f"\ntorch={_torch_version()} python={sys.version_info[:2]}\n".encode())
    for var in TOOLCHAIN_ENV:
        h.update(f"{var}={env.get(var, '')}\n".encode())
    return h.hexdigest()


def builds_root(env: Mapping[str, str] | None = None) -> Path:
    """``$PERFAGENT_EXTENSION_BUILDS``, else ``<XDG cache>/perfagent-extension-builds`` (a sibling of the
    writable caches, not inside one: workers must see it read-only)."""
    env = os.environ if env is None else env
    given = env.get(BUILDS_ENV)
    if given:
        return Path(given)
    home = Path(env.get("HOME") or Path.home())
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "perfagent-extension-builds"


def file_folder(path: Path, env: Mapping[str, str] | None = None) -> Path:
    """The build folder of ``path`` (not created)."""
    return builds_root(env) / source_key(path, env)[:24]


def recorded_failure(folder: Path) -> str | None:
    """The build step's failure kept in ``folder``, or None."""
    try:
        return (folder / FAILED).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
