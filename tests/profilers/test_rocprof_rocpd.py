"""The rocpd SQLite reader.

No real rocpd database was available (none in ../shared/fixtures, none found in public repositories' text
indexes), and a hand-made one would prove nothing about rocprofv3's real output, so the reader is only
tested here for what it must refuse. A real database dropped into ../shared/fixtures/rocprof/*.db is picked
up by ``test_real_rocpd_database`` automatically.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from profilers.errors import BadReport
from profilers.rocprof.profiler import RocprofProfiler
from profilers.rocprof.reader import detect_format
from profilers.rocprof.rocpd import is_rocpd, read_rocpd

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "rocprof"
REAL_DATABASES = sorted(FIXTURES.glob("*.db")) if FIXTURES.is_dir() else []


def test_unrelated_sqlite_file_is_not_rocpd(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER, text TEXT)")
    assert not is_rocpd(path)
    assert detect_format(path) is None
    assert not RocprofProfiler().can_read(path)
    with pytest.raises(BadReport, match="no 'kernels' view"):
        read_rocpd(path)


def test_non_sqlite_file_is_not_rocpd(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    path.write_bytes(b"not a database")
    assert not is_rocpd(path)


@pytest.mark.skipif(not REAL_DATABASES, reason="no real rocpd database available (see docs/amd.md)")
@pytest.mark.parametrize("path", REAL_DATABASES, ids=lambda p: p.name)
def test_real_rocpd_database(path: Path) -> None:
    assert detect_format(path) == "rocpd"
    profile = RocprofProfiler().read(path)
    assert profile.kernels and all(k.metrics.duration_s is not None for k in profile.kernels)
