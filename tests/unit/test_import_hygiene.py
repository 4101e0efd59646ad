"""The dependency direction tui -> perfagent -> {profilers, knowledge} holds at import time: the leaves load nothing of perfagent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEADLESS = [
    "perfagent",
    "perfagent.api",
    "perfagent.cli",
    "perfagent.classifier",
    "profilers",
    "profilers.model",
    "profilers.ncu.profiler",
    "profilers.static.profiler",
    "knowledge",
    "knowledge.gpus",
    "knowledge.taxonomy",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_modules_do_not_load_tui_or_textual(module: str) -> None:
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert not {m for m in loaded if m == "tui" or m.startswith(("tui.", "textual"))}, module


CORE: set[str] = set()
"""What of perfagent a leaf package may load: nothing (the core types live in profilers itself)."""


@pytest.mark.parametrize(("leaf", "allowed"), [("profilers", CORE), ("knowledge", set())])
def test_leaf_packages_load_no_more_of_perfagent_than_its_core(leaf: str, allowed: set[str]) -> None:
    code = (
        "import json, sys, importlib, pkgutil, " + leaf + "\n"
        "for m in pkgutil.walk_packages(" + leaf + ".__path__, '" + leaf + ".'):\n"
        "    importlib.import_module(m.name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert {m for m in loaded if m.split(".")[0] in ("perfagent", "tui")} <= allowed


def test_import_perfagent_does_not_import_torch() -> None:
    code = "import json, sys, perfagent, perfagent.cli; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "torch" not in loaded and "triton" not in loaded
