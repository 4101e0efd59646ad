"""The child-process reader gives the same Profile as the in-process one and carries typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from profilers.errors import BadReport, NoKernelsProfiled
from profilers.ncu.isolated import read_ncu_rep_isolated
from profilers.ncu.profiler import NcuProfiler
from profilers.ncu.report_reader import read_ncu_rep
from tests.conftest import ncu_fixture


def test_isolated_read_matches_in_process_read() -> None:
    path = ncu_fixture("a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep")
    assert read_ncu_rep_isolated(path) == read_ncu_rep(path)


def test_profiler_read_uses_child_and_keeps_kernel_filter() -> None:
    path = ncu_fixture("a10g_sgemm_4kernels_ncu2023.1.1_roofline.ncu-rep")
    prof = NcuProfiler().read(path, kernel_regex="warptiling")
    assert [k.base_name for k in prof.kernels] == ["warptiling"]


def test_errors_cross_the_process_boundary(tmp_path: Path) -> None:
    fake = tmp_path / "notes.ncu-rep"
    fake.write_text("not a report\n")
    with pytest.raises(BadReport):
        read_ncu_rep_isolated(fake)
    path = ncu_fixture("gtx1660s_vec_add_ncu2024.1.1_full.ncu-rep")
    with pytest.raises(NoKernelsProfiled) as info:
        read_ncu_rep_isolated(path, kernel_regex="^nothing$")
    assert "vec_add" in " ".join(info.value.available)
