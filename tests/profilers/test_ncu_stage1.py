"""Stage 1 of staged profiling (``NcuProfiler.time_launches``) against a fake ``ncu`` on PATH that prints a
real ncu raw-page CSV (tests/data/ncu_csv, four SGEMM kernels on an A10G) among ncu's own messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilers.base import ProfileRequest
from profilers.errors import CounterPermissionDenied
from profilers.ncu.argv import build_timing_argv
from profilers.ncu.profiler import NcuProfiler
from tests.profilers.test_ncu_errors import PERMISSION, fake_ncu, scenario  # noqa: F401  (fixture)

CSV = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "ncu_csv"
    / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.raw.csv"
)
PROF = ["==PROF== Connected to process 4242 (/w/app)", "==PROF== Disconnected from process 4242"]
EXPECTED = {  # function name: (duration s, grid, block), as the CSV's cells say
    "one_blocktiling": (431_648e-9, (16, 16, 1), (512, 1, 1)),
    "two_blocktiling": (296_704e-9, (8, 8, 1), (256, 1, 1)),
    "vectorized_blocktiling": (260_512e-9, (8, 8, 1), (256, 1, 1)),
    "warptiling": (222_464e-9, (8, 8, 1), (128, 1, 1)),
}


def times_of(tmp_path: Path) -> dict[str, tuple[float | None, object, object]]:
    request = ProfileRequest(workdir=tmp_path / "run", command=["./app", "--n", "4096"])
    profile = NcuProfiler().time_launches(request)
    return {k.base_name: (k.metrics.duration_s, k.launch.grid, k.launch.block) for k in profile.kernels}


def check(got: dict[str, tuple[float | None, object, object]]) -> None:
    assert set(got) == set(EXPECTED)
    for name, (duration, grid, block) in EXPECTED.items():
        assert got[name][0] == pytest.approx(duration)
        assert got[name][1:] == (grid, block)


def test_stage1_reads_the_launch_table_ncu_writes_to_its_log(
    fake_ncu: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario(monkeypatch, "fail", [PROF[0], *CSV.read_text().splitlines(), PROF[1]], exit_code=0)
    check(times_of(tmp_path))
    argv = json.loads(fake_ncu.read_text())["argv"]
    log = argv[argv.index("--log-file") + 1]
    assert (
        argv[1:]
        == build_timing_argv(
            ProfileRequest(workdir=tmp_path / "run", command=["./app", "--n", "4096"]),
            ncu=argv[0],
            log_path=Path(log),
        )[1:]
    )


def test_stage1_finds_the_table_on_stdout_among_the_programs_output(
    fake_ncu: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = "app: 4 kernels\n" + CSV.read_text() + "app: done\n"
    scenario(monkeypatch, "fail", PROF, exit_code=0, FAKE_APP_STDOUT=stdout)
    check(times_of(tmp_path))


def test_stage1_reports_denied_counters_like_any_ncu_run(
    fake_ncu: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario(monkeypatch, "fail", [PERMISSION], exit_code=1)
    with pytest.raises(CounterPermissionDenied):
        times_of(tmp_path)
