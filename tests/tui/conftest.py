"""Fixtures for the TUI tests: saved and live-diagnosed records, the optimize loop present or absent.

``live_records`` diagnoses the public reports at test time (skipped when ../shared is absent), ``suite`` the
examples' own recorded report; the saved records are described in ``tui_support``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import (
    FIXTURES,
    MEMCPY_JSON,
    MEMCPY_REPORT,
    ORIGINAL,
    SGEMM_JSON,
    SGEMM_REPORT,
    SUITE_REPORT,
    FakeLoop,
    load,
)

import perfagent
from perfagent.records import RunRecord


@pytest.fixture
def sgemm() -> RunRecord:
    """Four SGEMM kernels on an A10G: roofline points, launch-config findings, no source."""
    return load(SGEMM_JSON)


@pytest.fixture
def memcpy() -> RunRecord:
    """One DRAM-bound copy kernel on an A100 with source lines (no FLOPs: not on the roofline)."""
    return load(MEMCPY_JSON)


@pytest.fixture(scope="session")
def live_records() -> dict[str, RunRecord]:
    """The reports diagnosed now, through the library API."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} is absent: the public ncu fixtures live outside the repo (../shared)")
    return {p.stem: perfagent.diagnose(p) for p in (SGEMM_REPORT, MEMCPY_REPORT)}


@pytest.fixture(scope="session")
def suite() -> RunRecord:
    """The examples' suite report (``examples/reports/suite.ncu-rep``) diagnosed now: 20 kernels on an H200."""
    return perfagent.diagnose(SUITE_REPORT)


@pytest.fixture
def fake_loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLoop]:
    """``perfagent.optimize`` replaced by ``FakeLoop`` for one test."""
    loop = FakeLoop()
    monkeypatch.setattr(perfagent, "optimize", loop, raising=False)
    yield loop


@pytest.fixture
def no_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """This build without ``perfagent.optimize`` (the state until issue 4 lands). Set to None rather than
    deleted: the package's names load on first use, so a deleted name would simply load again."""
    monkeypatch.setattr(perfagent, "optimize", None, raising=False)


@pytest.fixture
def source_record(sgemm: RunRecord, tmp_path: Path) -> RunRecord:
    """The SGEMM record pointed at a .cu source in tmp_path, as if diagnosed from source."""
    src = tmp_path / "k.cu"
    src.write_text(ORIGINAL, encoding="utf-8")
    return sgemm.model_copy(update={"target": str(src)})
