"""A fixture that makes ``cuda.core`` and ``cuda.bindings`` findable on a machine without them (empty
packages: ``harness_choice`` only looks them up, it imports nothing of them)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def cuda_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``cuda.core`` and ``cuda.bindings`` findable (empty packages: the choice only looks them up)."""
    if importlib.util.find_spec("cuda") is None:
        for package in ("core", "bindings"):
            (tmp_path / "site" / "cuda" / package).mkdir(parents=True)
            (tmp_path / "site" / "cuda" / package / "__init__.py").write_text("")
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield
    for name in [m for m in sys.modules if m == "cuda" or m.startswith("cuda.")]:
        module = sys.modules[name]
        where = [str(getattr(module, "__file__", None))] + [str(p) for p in getattr(module, "__path__", [])]
        if any(str(tmp_path) in w for w in where):  # the stubs only, never a real installation
            del sys.modules[name]
    importlib.invalidate_caches()
