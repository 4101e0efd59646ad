"""Shared test fixtures: where the public profiler fixtures live, and markers."""

from __future__ import annotations

import compileall
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
NCU_FIXTURES = SHARED / "fixtures" / "ncu-public"
ROCPROF_FIXTURES = SHARED / "fixtures" / "rocprof"
EXAMPLE_REPORTS = REPO / "examples" / "reports"


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a child that a test signals as a terminal would: SIGINT, SIGHUP and SIGTERM at
    their defaults. A test run started under ``nohup`` or as a background job of a non-interactive shell
    (``cmd &``) has SIGHUP and SIGINT ignored, every child inherits that through ``exec``, and perfagent
    rightly keeps a signal its user asked to ignore — so without this such a test would wait out the run."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def ncu_fixture(name: str) -> Path:
    """Path of a public ncu fixture, or skip the test when ../shared is absent."""
    path = NCU_FIXTURES / name
    if not path.exists():
        pytest.skip(f"public ncu fixture {name} not found: ../shared/fixtures is absent in this checkout")
    return path


_OWN_CACHE: list[str] = []
"""The session's cache folder when this conftest made it (removed at the end of the session)."""


def pytest_configure(config: pytest.Config) -> None:
    # torch's OpenMP threads spin while they wait for work. On a loaded 2-core machine the spinners take the
    # cores from the thread they wait for: one 64K-element tensor comparison cost 69-85 ms CPU instead of
    # 7 ms (issue 26, measured at load 11). Passive waiting keeps the threads (and what they compute) and
    # stops the spinning, here and in every worker and CLI subprocess, which inherit the environment.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # nvcc builds are cached by content (profilers/build_cache.py); tests use a cache of their own
    # session, never the user's ~/.cache.
    if "PERFAGENT_CACHE_DIR" not in os.environ:
        _OWN_CACHE.append(tempfile.mkdtemp(prefix="perfagent-test-cache-"))
        os.environ["PERFAGENT_CACHE_DIR"] = _OWN_CACHE[0]
    # TorchInductor's C++ builds likewise (the torch.compile baseline of every KernelBench bench/optimize):
    # one cold compile per session, then hits (issue 26: 20 s CPU saved per baseline on a 2-core CPU).
    inductor = os.path.join(os.environ["PERFAGENT_CACHE_DIR"], "torchinductor")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", inductor)
    if sys.dont_write_bytecode:
        compile_the_project()


PACKAGES = ("perfagent", "profilers", "knowledge", "tui")


def compile_the_project() -> None:
    """Write the project's bytecode once, where ``PYTHONDONTWRITEBYTECODE`` is set (as on the CI machines).

    Then no interpreter keeps what it compiles, and each of the hundreds a run starts (CLI subprocesses,
    warm servers, report readers, MCP servers) compiled the project's modules from source again: the
    first-contact sweep (125 CLI subprocesses) cost 139 s CPU so, 103 s with the bytecode in place (issue
    26). ``compileall`` skips what is up to date; a checkout it cannot write is left as it is (the run is
    only slower). The files go to ``__pycache__``, which git ignores, as any run without the setting does."""
    for package in PACKAGES:
        compileall.compile_dir(REPO / package, quiet=2)


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _OWN_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
