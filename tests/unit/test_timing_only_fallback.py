"""ERR_NVGPUCTRPERM: perfagent falls back to a timing-only diagnosis and says so (ncu's real message,
printed by a fake ncu on PATH; the program is really built with nvcc and really run)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import perfagent
from tests.profilers.test_ncu_errors import PERMISSION, fake_ncu, scenario  # noqa: F401  (fixture)

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "cuda" / "program.cu"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to build the program")
def test_counter_permission_denied_gives_timing_only_record(
    fake_ncu: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    scenario(monkeypatch, "fail", [PERMISSION], exit_code=1)
    record = perfagent.diagnose(PROGRAM, run_dir=tmp_path / "run")
    assert record.mode == "timing-only"
    assert record.notes[0].startswith(
        "TIMING-ONLY: ncu was denied the GPU performance counters (ERR_NVGPUCTRPERM)"
    )
    assert any("whole program wall time" in n for n in record.notes)
    # Static facts of the program's kernels are still there; nothing is invented.
    assert record.kernels and all(k.duration_s is None for k in record.kernels)
    assert (tmp_path / "run" / "record.json").is_file()
