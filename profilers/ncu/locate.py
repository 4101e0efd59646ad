"""Finding the ``ncu`` executable and the ``ncu_report`` Python module.

Nothing here runs at import. ``find_ncu`` looks on PATH, then in the usual install folders
(``/opt/nvidia/nsight-compute/<version>/``, ``/usr/local/cuda/bin``, ``/usr/local/cuda-*/bin``).
``import_ncu_report`` imports the PyPI ``ncu-report`` module, or else the copy every Nsight Compute install
ships in ``<install>/extras/python`` (how it runs on a GPU machine where only ncu is installed).
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from profilers.errors import ProfilerUnavailable

DEFAULT_SEARCH_GLOBS: tuple[str, ...] = (
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/cuda/bin/ncu",
    "/usr/local/cuda-*/bin/ncu",
    "/usr/local/cuda/nsight-compute-*/ncu",
)
"""Where ``find_ncu`` looks when ncu is not on PATH (newest version first within each pattern)."""


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path))


def find_ncu(search_globs: Sequence[str] = DEFAULT_SEARCH_GLOBS) -> str | None:
    """The path of an executable ``ncu``, or None.

    Args:
        search_globs: install locations tried, in order, when ``ncu`` is not on PATH.

    Returns:
        The first executable found (PATH first), else None.
    """
    on_path = shutil.which("ncu")
    if on_path:
        return on_path
    for pattern in search_globs:
        for candidate in sorted(glob.glob(pattern), key=_version_key, reverse=True):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def extras_python_dirs(ncu_path: str | None) -> list[Path]:
    """Folders that may hold the ``ncu_report`` module shipped with Nsight Compute.

    Args:
        ncu_path: the ncu executable found (its install is searched first), or None.

    Returns:
        Existing ``extras/python`` folders, most specific first.
    """
    candidates: list[Path] = []
    if ncu_path:
        real = Path(ncu_path).resolve()
        candidates.append(real.parent / "extras" / "python")
        # /usr/local/cuda/bin/ncu is a wrapper; the install sits beside it as nsight-compute-<version>.
        siblings = sorted(
            real.parent.parent.glob("nsight-compute-*"), key=lambda p: _version_key(p.name), reverse=True
        )
        candidates.extend(folder / "extras" / "python" for folder in siblings)
    for pattern in (
        "/opt/nvidia/nsight-compute/*/extras/python",
        "/usr/local/cuda*/nsight-compute-*/extras/python",
    ):
        candidates.extend(Path(p) for p in sorted(glob.glob(pattern), key=_version_key, reverse=True))
    seen: set[Path] = set()
    out: list[Path] = []
    for folder in candidates:
        if folder not in seen and (folder / "ncu_report.py").is_file():
            seen.add(folder)
            out.append(folder)
    return out


def import_ncu_report(ncu_path: str | None = None) -> ModuleType:
    """Import ``ncu_report`` (PyPI ``ncu-report``, else ``<ncu install>/extras/python``).

    Args:
        ncu_path: an ncu executable whose install to search; default: ``find_ncu()``.

    Returns:
        The module.

    Raises:
        ProfilerUnavailable: neither the package nor an Nsight Compute install provides it.
    """
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for folder in extras_python_dirs(ncu_path if ncu_path is not None else find_ncu()):
        sys.path.insert(0, str(folder))
        try:
            return importlib.import_module("ncu_report")
        except ImportError:
            sys.path.remove(str(folder))
    raise ProfilerUnavailable(
        "the ncu_report module (to read .ncu-rep files) is not installed",
        hint="pip install ncu-report, or install Nsight Compute (its extras/python folder is used)",
    )
