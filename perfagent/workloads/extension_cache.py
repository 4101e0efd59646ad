"""One build folder per extension source: ``load_inline``/``load`` builds cached by content (worker side).

torch builds a JIT extension in ``<root>/<name>`` whatever its sources, so a ``ModelNew`` and every
rewrite of it share one folder. Two costs follow:

- every switch between sources rebuilds (a ``load_inline`` build is close to a minute of nvcc and g++ on
  torch's headers), so verifying, timing and re-profiling candidates rebuilds what was built before;
- two processes loading *different* sources of one name at once are wrong, not just slow: the one that
  finds the folder's lock taken waits and then imports whatever the other built.

``install()`` (called before a KernelBench module is imported) makes a ``load_inline``/``load`` call
without a ``build_directory`` build in ``<root>/<name>-<digest>``, the digest covering everything the
build depends on (sources, functions, flags, torch and CUDA versions, the target architectures). The
same source then builds once per machine, however many processes load it, and concurrent verifications
of different candidates cannot see each other's modules. A call that names its own folder is left as
written.

While ``loading(path)`` is open (``kernelbench.load_module``), builds go to ``path``'s own folder
(``extension_builds``): a folder the build step filled is read (the ``.so`` imported directly: no lock,
no ninja, nothing written, so it works read-only), a recorded build failure is raised again without a
rebuild, and a worker that finds no build of its own file builds as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perfagent.workloads import extension_builds

__all__ = ["ExtensionBuildFailed", "build_digest", "cached_build_directory", "install", "loading"]

BUILT = ".perfagent-built"
"""Marker in an extension's folder: its build finished (written after torch returned the module)."""

_LOADING: contextvars.ContextVar[Path | None] = contextvars.ContextVar("perfagent_loading", default=None)
"""The Python file being imported (``loading``), whose build folder its extensions use."""


class ExtensionBuildFailed(RuntimeError):
    """The build step could not build this file's extension; the recorded failure, not a rebuild."""


@contextlib.contextmanager
def loading(path: Path) -> Iterator[None]:
    """Build the extensions of ``path`` (being imported now) in its own folder (``extension_builds``)."""
    token = _LOADING.set(Path(path))
    try:
        yield
    finally:
        _LOADING.reset(token)


_INSTALLED = "_perfagent_build_cache"
"""Attribute marking a patched function (``install`` is idempotent)."""

_NOT_HASHED = frozenset({"build_directory", "verbose", "keep_intermediates"})
"""Arguments that do not change what is built."""

_ENV = ("TORCH_CUDA_ARCH_LIST", "CXX", "CC", "CUDA_HOME", "CUDA_PATH", "NVCC_APPEND_FLAGS")


def build_digest(arguments: dict[str, Any], *, source_files: list[str] | None = None) -> str:
    """Hex digest of one extension build: its arguments, the contents of its source files, the toolchain."""
    # torch takes seconds to import: only a build or a check that needs it loads it
    import torch

    h = hashlib.sha256()
    for key in sorted(arguments):
        if key not in _NOT_HASHED:
            h.update(f"{key}={arguments[key]!r}\n".encode())
    for path in source_files or []:
        h.update(f"file {path}\n".encode())
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"<unreadable>")  # torch reports the missing file itself
    h.update(f"torch={torch.__version__} cuda={torch.version.cuda} python={sys.version_info[:2]}\n".encode())
    for var in _ENV:
        h.update(f"{var}={os.environ.get(var, '')}\n".encode())
    return h.hexdigest()


def cached_build_directory(name: str, digest: str) -> str:
    """``<torch's extension root>/<name>-<digest[:16]>``, created."""
    # torch's extension builder (seconds to import): only a build loads it
    import torch.utils.cpp_extension as cpp

    folder = f"{name}-{digest[:16]}"
    make = getattr(cpp, "_get_build_directory", None)
    if make is not None:
        return str(make(folder, False))
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or cpp.get_default_build_root()
    path = Path(root) / folder
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _with_cached_folder(original: Callable[..., Any], files_arg: str | None) -> Callable[..., Any]:
    """``original`` building in a content-addressed folder when the caller names none."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)  # torch says what is wrong with the call
        if bound.arguments.get("build_directory"):
            return original(*args, **kwargs)
        files: list[str] = []
        if files_arg is not None:
            given = bound.arguments.get(files_arg) or []
            files = [given] if isinstance(given, str) else [str(f) for f in given]
        hashed = dict(bound.arguments)
        if files_arg is not None:
            hashed[files_arg] = files  # torch takes one path or a list of them: the same build
        digest = build_digest(hashed, source_files=files)
        name = str(bound.arguments["name"])
        loaded = _LOADING.get()
        if loaded is not None:
            return _through_file_folder(original, bound, name, digest, extension_builds.file_folder(loaded))
        bound.arguments["build_directory"] = cached_build_directory(name, digest)
        return original(*bound.args, **bound.kwargs)

    setattr(build, _INSTALLED, True)
    return build


def _through_file_folder(
    original: Callable[..., Any], bound: inspect.BoundArguments, name: str, digest: str, folder: Path
) -> Any:
    """Load ``name`` from the file's build folder, build it there (the build step, the one process that
    may write it), or, where no build step ran, build it in the worker's own cache as before.

    Raises:
        ExtensionBuildFailed: the build step recorded this file's build as failed.
    """
    failure = extension_builds.recorded_failure(folder)
    if failure is not None:
        raise ExtensionBuildFailed(failure.splitlines()[0] if failure else "the build failed")
    build_dir = folder / f"{name}-{digest[:16]}"
    is_module = bool(bound.arguments.get("is_python_module", True))
    if (build_dir / BUILT).is_file():
        # torch's extension builder (seconds to import): only a build loads it
        import torch.utils.cpp_extension as cpp

        return cpp._import_module_from_library(name, str(build_dir), is_module)  # type: ignore[no-untyped-call]
    if folder.is_dir() and os.access(folder, os.W_OK):
        build_dir.mkdir(exist_ok=True)
        bound.arguments["build_directory"] = str(build_dir)
        module = original(*bound.args, **bound.kwargs)
        (build_dir / BUILT).write_text(datetime.now(UTC).isoformat(timespec="seconds") + "\n")
        return module
    bound.arguments["build_directory"] = cached_build_directory(name, digest)
    return original(*bound.args, **bound.kwargs)


def install() -> bool:
    """Patch ``torch.utils.cpp_extension.load_inline`` and ``load`` in this process (idempotent).

    False when torch (or its extension builder) is not importable here: nothing to patch.
    """
    # torch's extension builder (seconds to import): only a build loads it
    try:
        import torch.utils.cpp_extension as cpp
    except ImportError:
        return False
    for attr, files_arg in (("load_inline", None), ("load", "sources")):
        current = getattr(cpp, attr, None)
        if current is None or getattr(current, _INSTALLED, False):
            continue
        setattr(cpp, attr, _with_cached_folder(current, files_arg))
    return True
