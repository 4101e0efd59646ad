"""A content-addressed cache of nvcc outputs, so that diagnosing or optimizing the same source twice
does not pay for the same build twice.

The key is a SHA-256 over everything that decides nvcc's output:

* the command line, with the output path blanked (the same build written elsewhere is the same build);
* the nvcc executable's resolved path, size and modification time (a CUDA upgrade changes them);
* the source's bytes and the bytes of every header it reaches through ``#include`` that resolves to a
  file next to the including file or in an ``-I`` folder of the command line, transitively. Headers
  found in neither place are the toolkit's or the system's, covered by nvcc's identity.

An entry holds the output file and nvcc's stdout/stderr (ptxas's ``-v`` resource report is read from
stderr). ``PERFAGENT_BUILD_CACHE=0`` turns the cache off; ``PERFAGENT_CACHE_DIR`` moves it (default
``$XDG_CACHE_HOME/perfagent/builds`` or ``~/.cache/perfagent/builds``). The oldest entries beyond
``MAX_ENTRIES`` are removed when a new one is written. A cache that cannot be read or written is
skipped silently: the build then runs as if there were none.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from profilers.process import CompletedCommand

MAX_ENTRIES = 256
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
_MAX_HEADERS = 2000
"""A bound on the include walk, so that a pathological include tree cannot stall a build."""


def cache_root() -> Path | None:
    """The cache folder, or None when the cache is turned off."""
    if os.environ.get("PERFAGENT_BUILD_CACHE", "1").strip().lower() in ("0", "off", "no", "false"):
        return None
    if os.environ.get("PERFAGENT_CACHE_DIR"):
        return Path(os.environ["PERFAGENT_CACHE_DIR"]) / "builds"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "perfagent" / "builds"


def build_key(argv: Sequence[str], source: Path, out: Path) -> str | None:
    """The cache key of an nvcc command line, or None when it cannot be computed (nvcc not found)."""
    nvcc = shutil.which(argv[0])
    if nvcc is None:
        return None
    resolved = Path(nvcc).resolve()
    stat = resolved.stat()
    digest = hashlib.sha256()
    digest.update(f"{resolved}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    for arg in argv[1:]:
        digest.update(b"<out>" if arg == str(out) else arg.encode())
        digest.update(b"\0")
    for path in _reached_files(source, _include_dirs(argv)):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load(key: str, out: Path, argv: Sequence[str]) -> CompletedCommand | None:
    """The cached build of ``key`` copied to ``out``, or None on a miss."""
    root = cache_root()
    entry = root / key if root else None
    if entry is None or not (entry / "output").is_file():
        return None
    try:
        meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(entry / "output", out)
        os.utime(entry)  # most recently used: pruned last
    except (OSError, ValueError):
        return None
    return CompletedCommand(tuple(argv), 0, meta.get("stdout", ""), meta.get("stderr", ""), 0.0)


def store(key: str, out: Path, result: CompletedCommand) -> None:
    """Keep ``out`` and nvcc's messages under ``key`` (best effort)."""
    root = cache_root()
    if root is None or not out.is_file():
        return
    entry = root / key
    partial = root / f".{key}.{os.getpid()}.tmp"
    try:
        partial.mkdir(parents=True, exist_ok=True)
        shutil.copy2(out, partial / "output")
        meta = {"stdout": result.stdout, "stderr": result.stderr, "elapsed_s": result.elapsed_s}
        (partial / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        if entry.exists():
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.rename(entry)  # atomic: a reader never sees half an entry
        _prune(root)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)


def _prune(root: Path) -> None:
    entries = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")), key=_mtime)
    for stale in entries[:-MAX_ENTRIES] if len(entries) > MAX_ENTRIES else []:
        shutil.rmtree(stale, ignore_errors=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _include_dirs(argv: Sequence[str]) -> list[Path]:
    dirs: list[Path] = []
    for index, arg in enumerate(argv):
        if arg == "-I" and index + 1 < len(argv):
            dirs.append(Path(argv[index + 1]))
        elif arg.startswith("-I") and len(arg) > 2:
            dirs.append(Path(arg[2:]))
    return dirs


def _reached_files(source: Path, include_dirs: list[Path]) -> Iterator[Path]:
    """``source`` and every header it reaches in its own folders or the ``-I`` folders, each once."""
    seen: set[Path] = set()
    pending = [source.resolve()]
    while pending and len(seen) < _MAX_HEADERS:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        yield path
        text = path.read_text(encoding="utf-8", errors="replace")
        for quote, name in _INCLUDE.findall(text):
            folders = ([path.parent] if quote == '"' else []) + include_dirs
            found = next((d / name for d in folders if (d / name).is_file()), None)
            if found is not None:
                pending.append(found.resolve())
