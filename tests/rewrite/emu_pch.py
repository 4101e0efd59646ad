"""The CPU emulations' standard headers, precompiled once per test session and g++ flag set.

Every emulation program (``cuda_cpu.py``, ``cuda_blocks.py``, ``cuda_lanes.py``) begins with the same
includes (the emulation header and the C++ standard library), and parsing them was about half of each
g++ build: 1.95 s CPU for a ``cuda_blocks`` program, 1.2-1.35 s with its includes precompiled (measured
on the 2-core CI machine, issue 26). A program built here starts with ``#include "emu_headers.h"``, a
header holding exactly those includes, and g++ reads ``emu_headers.h.gch`` in its place when the flags
match (GCC's rule: the same options, so the key below is the whole flag list). Where the header cannot
be precompiled or g++ rejects the precompiled one, g++ parses the header itself: the same program, only
slower. The program's own copies of the includes follow and cost nothing (include guards,
``#pragma once`` on the one emulation header, which every program reads from the folder made here).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from profilers.process import run_command

EMU = Path(__file__).resolve().parent / "data" / "cuda_cpu_emu.h"
HEADER = "emu_headers.h"
_BUILT: dict[str, Path] = {}
"""Key (includes, flags, compiler) -> the folder with ``emu_headers.h`` and, when g++ built it, its ``.gch``."""


def _cache_root() -> Path:
    # The session's cache folder (tests/conftest.py makes one and removes it at the end).
    return Path(os.environ.get("PERFAGENT_CACHE_DIR") or tempfile.gettempdir()) / "emu-pch"


def precompiled(gxx: str, includes: str, flags: Sequence[str]) -> Path:
    """The folder to put first on the include path (``-I``) of a program starting with
    ``#include "emu_headers.h"``: ``emu_headers.h`` (``includes``), the emulation header it may include, and
    the header precompiled with ``flags`` (built on first use in this session)."""
    key = hashlib.sha256(
        "\0".join([gxx, includes, EMU.read_text(encoding="utf-8"), *flags]).encode()
    ).hexdigest()[:16]
    if key in _BUILT:
        return _BUILT[key]
    folder = _cache_root() / key
    if not (folder / HEADER).exists():
        _build(gxx, includes, flags, folder)
    _BUILT[key] = folder
    return folder


def _build(gxx: str, includes: str, flags: Sequence[str], folder: Path) -> None:
    """Build into a private folder, then move it into place: a concurrent session or worker sees either
    nothing or the whole folder."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{folder.name}-", dir=folder.parent))
    shutil.copy(EMU, work / EMU.name)
    (work / HEADER).write_text(includes, encoding="utf-8")
    # A failed build leaves no .gch: the programs then parse the header, as they did before.
    run_command(
        [gxx, *flags, "-x", "c++-header", HEADER, "-o", f"{HEADER}.gch"],
        cwd=work,
        timeout_s=300,
    )
    try:
        work.rename(folder)
    except OSError:  # another session or worker put the same folder in place first
        shutil.rmtree(work, ignore_errors=True)


def first_line() -> str:
    """The line a program built with ``precompiled`` starts with."""
    return f'#include "{HEADER}"\n'
