"""The held-out sets benchmarks/unseen2 and benchmarks/unseen3 (issue 23): every folder (discovered, not listed) has
slow.cu, fixed.cu and one launch spec that loads and resolves for every shape, a cited README row, an entry
the suite discovers, and two kernels that nvcc builds for sm_90 -- so the GPU run measures kernels, not
broken files."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from perfagent.suite.manifest import discover
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.process import run_command

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
UNSEEN2 = BENCHMARKS / "unseen2"
SETS = (UNSEEN2, BENCHMARKS / "unseen3")
# every launch-spec folder of both sets (unseen2/kernelbench/ holds load_inline pairs instead)
ENTRIES = sorted(p for s in SETS for p in s.iterdir() if p.is_dir() and any(p.glob("*.launch.toml")))
KERNELBENCH_SOLUTIONS = sorted((UNSEEN2 / "kernelbench").glob("*_solution.py"))
NVCC_TIMEOUT_S = 300.0


@pytest.mark.parametrize("held_out", SETS, ids=[s.name for s in SETS])
def test_the_set_has_at_least_fourteen_entries_each_with_a_cited_row(held_out: Path) -> None:
    entries = [e for e in ENTRIES if e.parent == held_out]
    assert len(entries) >= 14
    readme = (held_out / "README.md").read_text()
    assert "held out" in readme and "adapted from" in readme
    for entry in entries:
        number = entry.name.split("_")[0]
        row = next((line for line in readme.splitlines() if line.startswith(f"| {number} |")), None)
        assert row is not None, f"{entry.name} has no row in README.md"
        assert row.count("|") >= 8, f"{entry.name}: the README row misses columns"
        head = (entry / "slow.cu").read_text().splitlines()[0]
        assert head.startswith("//"), f"{entry.name}/slow.cu must open with a comment naming its source"


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e.parent.name}/{e.name}" for e in ENTRIES])
def test_spec_loads_and_both_kernels_resolve_for_every_shape(entry: Path) -> None:
    assert (entry / "slow.cu").is_file() and (entry / "fixed.cu").is_file(), entry.name
    [spec_path] = list(entry.glob("*.launch.toml"))
    spec = load_launch_spec(spec_path)
    assert spec.source == "slow.cu"
    assert "fixed.cu" in spec.variants and spec.variants["fixed.cu"].kernel, "the fix needs its own entry"
    assert spec.check_params, f"{entry.name}: verify a second (ragged) shape too"
    for params in [{}, *spec.check_params]:
        shape = {**spec.params, **params}
        slow = resolve_launch(spec, spec_path, source=entry / "slow.cu", params=shape)
        fixed = resolve_launch(spec, spec_path, source=entry / "fixed.cu", params=shape)
        assert slow.kernel == spec.kernel and fixed.kernel == spec.variants["fixed.cu"].kernel
    assert resolve_launch(spec, spec_path, source=entry / "slow.cu").bytes


@pytest.mark.parametrize("held_out", SETS, ids=[s.name for s in SETS])
def test_the_suite_discovers_every_entry_with_its_fix(held_out: Path) -> None:
    found = {e.name: e for e in discover(held_out)}
    for entry in (e for e in ENTRIES if e.parent == held_out):
        name = f"{entry.name}/slow.cu"
        assert name in found, f"{name} is not discovered"
        assert found[name].candidate == entry / "fixed.cu"
    for solution in KERNELBENCH_SOLUTIONS if held_out == UNSEEN2 else []:
        name = f"kernelbench/{solution.name}"
        assert name in found, f"{name} is not discovered as a candidate of its problem"
        assert found[name].candidate == solution


def _nvcc_errors(source: Path, out_dir: Path) -> str:
    # PTX for sm_90: the C++ front end and code generation that NVRTC also runs, without ptxas and the
    # fatbinary (a quarter of the time of `-c`, which keeps 30 files under a minute on two cores).
    ptx = out_dir / f"{source.parent.name}_{source.stem}.ptx"
    done = run_command(["nvcc", "-arch=sm_90", "-ptx", "-o", ptx, source], timeout_s=NVCC_TIMEOUT_S)
    return "" if done.returncode == 0 else f"{source.parent.name}/{source.name}: {done.stderr[-600:]}"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: the kernels cannot be built")
def test_every_kernel_compiles_for_hopper(tmp_path: Path) -> None:
    sources = [entry / name for entry in ENTRIES for name in ("slow.cu", "fixed.cu")]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        errors = [e for e in pool.map(lambda s: _nvcc_errors(s, tmp_path), sources) if e]
    assert not errors, "\n".join(errors)
