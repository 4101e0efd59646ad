"""The ncu raw-page CSV reader on real exports (ncu 2025.3.1, comma thousands separators)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profilers.errors import BadReport
from profilers.ncu.csv import looks_like_ncu_csv, parse_number, read_ncu_csv
from profilers.ncu.profiler import NcuProfiler

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "ncu-public"
CSV = FIXTURES / "derived-csv-ncu2025.3.1"
if not CSV.is_dir():
    pytest.skip(f"shared ncu fixtures not found at {FIXTURES}", allow_module_level=True)

SGEMM_CSV = CSV / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.raw.csv"
MEMCPY_CSV = CSV / "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.raw.csv"
DETAILS_CSV = CSV / "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.details.csv"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,193,333,712,660.03", 1193333712660.03),  # 2025.3.1 --import export (ncu.md 6)
        ("3995313115.40", 3995313115.40),  # live Linux sample, no separators
        ("27.595.520", 27595520.0),  # European thousands separators
        ("65,77", 65.77),  # European decimal comma
        ("431,648", 431648.0),
        ("1.234,5", 1234.5),
        ("2.5e+09", 2.5e9),
        ("n/a", None),
        ("", None),
        ("(512, 1, 1)", None),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_sgemm_csv_matches_report() -> None:
    profile = read_ncu_csv(SGEMM_CSV)
    assert profile.tool == "ncu" and profile.source == str(SGEMM_CSV)
    assert [k.base_name for k in profile.kernels] == [
        "one_blocktiling",
        "two_blocktiling",
        "vectorized_blocktiling",
        "warptiling",
    ]
    assert [k.launch.grid for k in profile.kernels] == [(16, 16, 1), (8, 8, 1), (8, 8, 1), (8, 8, 1)]
    assert [k.launch.block for k in profile.kernels] == [(512, 1, 1), (256, 1, 1), (256, 1, 1), (128, 1, 1)]
    assert [k.metrics.duration_s for k in profile.kernels] == pytest.approx(
        [431.648e-6, 296.704e-6, 260.512e-6, 222.464e-6], rel=1e-9
    )
    achieved = [k.metrics.flops["fp32"] / k.metrics.duration_s / 1e12 for k in profile.kernels]  # type: ignore[operator]
    assert achieved == pytest.approx([4.98, 7.24, 8.24, 9.65], rel=0.01)
    first = profile.kernels[0]
    assert first.device.name == "NVIDIA A10G" and first.device.compute_capability == "8.6"
    assert first.device.peaks.flops_per_s["fp32"] == pytest.approx(26.9e12, rel=0.01)
    assert first.device.peaks.dram_bytes_per_s == pytest.approx(598e9, rel=0.01)
    assert first.occupancy.achieved_pct is None and first.metrics.warp_stalls == {}
    assert first.tool_findings == [] and first.source_lines == []
    assert any("CSV" in note for note in profile.notes)


def test_memcpy_csv_matches_report() -> None:
    pytest.importorskip("ncu_report")
    from profilers.ncu.report_reader import read_ncu_rep

    from_csv = read_ncu_csv(MEMCPY_CSV).kernels[0]
    from_rep = read_ncu_rep(
        FIXTURES / "a100_memcpyasync_matrixtransfer_pd1_ncu2023.3.1_full.ncu-rep"
    ).kernels[0]
    assert from_csv.name == from_rep.name == "MatrixTransferKernel(int4 *, int, unsigned long long *)"
    assert from_csv.metrics.duration_s == from_rep.metrics.duration_s == pytest.approx(112.48e-6)
    assert from_csv.launch == from_rep.launch.model_copy(
        update={"waves_per_sm": from_csv.launch.waves_per_sm}
    )
    assert from_csv.launch.waves_per_sm == pytest.approx(
        from_rep.launch.waves_per_sm, abs=0.005
    )  # printed rounded
    assert from_csv.metrics.dram_bytes == pytest.approx(from_rep.metrics.dram_bytes, rel=1e-6)
    assert from_csv.occupancy == from_rep.occupancy.model_copy(
        update={"achieved_pct": from_csv.occupancy.achieved_pct}
    )
    assert from_csv.device.peaks.dram_bytes_per_s == pytest.approx(
        from_rep.device.peaks.dram_bytes_per_s, rel=1e-4
    )


def test_details_page_is_refused_with_the_fix() -> None:
    with pytest.raises(BadReport, match="--page details") as info:
        read_ncu_csv(DETAILS_CSV)
    assert "--page raw" in info.value.hint


def test_csv_without_ncu_columns_is_bad_report(tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert not looks_like_ncu_csv(other)
    with pytest.raises(BadReport, match="not an ncu CSV"):
        read_ncu_csv(other)


def test_can_read_identifies_ncu_csv(tmp_path: Path) -> None:
    profiler = NcuProfiler()
    assert profiler.can_read(SGEMM_CSV)
    other = tmp_path / "other.csv"
    other.write_text("x,y\n")
    assert not profiler.can_read(other)
    assert profiler.read(SGEMM_CSV, kernel_regex="^two").kernels[0].base_name == "two_blocktiling"
