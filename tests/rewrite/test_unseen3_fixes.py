"""benchmarks/unseen3 (the third held-out set): each entry's textbook fix computes what its slow kernel
computes, at the spec's ragged check shape, on the CPU block emulator (barriers, warp shuffles, guard
words), so the GPU run measures two correct kernels. A fix that reads past a tile or scans in the wrong
order is caught here, as the second test shows on a deliberately broken copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfagent.workloads.launch_spec import load_launch_spec
from tests.rewrite.helpers import ROOT
from tests.rewrite.spec_emulation import emulate_entry

UNSEEN3 = ROOT / "benchmarks" / "unseen3"
ENTRIES = sorted(p for p in UNSEEN3.iterdir() if p.is_dir() and any(p.glob("*.launch.toml")))


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_the_fix_matches_the_slow_kernel_at_every_check_shape(tmp_path: Path, entry: Path) -> None:
    spec = load_launch_spec(next(entry.glob("*.launch.toml")))
    for n, params in enumerate(spec.check_params):
        work = tmp_path / str(n)
        work.mkdir()
        agreed, output = emulate_entry(work, entry, params)
        assert agreed, f"{entry.name} at {params}:\n{output}"


def test_a_fix_with_a_wrong_carry_is_caught(tmp_path: Path) -> None:
    entry = tmp_path / "cumsum"
    shutil.copytree(UNSEEN3 / "01_cumsum_rows_thread_per_row", entry)
    fixed = entry / "fixed.cu"
    text = fixed.read_text()
    assert "carry += __shfl_sync(0xffffffffu, v, 31);" in text
    fixed.write_text(
        text.replace("carry += __shfl_sync(0xffffffffu, v, 31);", "carry = __shfl_sync(0xffffffffu, v, 31);")
    )
    spec = load_launch_spec(next(entry.glob("*.launch.toml")))
    (tmp_path / "run").mkdir()
    agreed, output = emulate_entry(tmp_path / "run", entry, spec.check_params[0])
    assert not agreed and "result_data: element" in output
