"""The unseen generalisation set (examples/unseen): every entry is complete, cited, loads, resolves and
compiles — so that the GPU benchmark measures kernels, not broken files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import load_launch_spec

UNSEEN = Path(__file__).resolve().parents[2] / "examples" / "unseen"
ENTRIES = sorted(p for p in UNSEEN.iterdir() if p.is_dir() and (p / "slow.cu").is_file())


def test_the_set_has_at_least_ten_cited_entries() -> None:
    assert len(ENTRIES) >= 10
    readme = (UNSEEN / "README.md").read_text()
    for entry in ENTRIES:
        number = entry.name.split("_")[0]
        row = next((line for line in readme.splitlines() if line.startswith(f"| {number} |")), None)
        assert row is not None, f"{entry.name} has no row in README.md"
        assert row.count("|") >= 7 and ("blog" in row or "/" in row), f"{entry.name}: no source cited"
        assert "adapted from" in readme
        # the kernel file names its source too
        head = (entry / "slow.cu").read_text().splitlines()[0]
        assert head.startswith("//"), f"{entry.name}/slow.cu must open with its source"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_spec_loads_and_both_kernels_resolve(entry: Path) -> None:
    [spec_path] = list(entry.glob("*.launch.toml"))
    spec = load_launch_spec(spec_path)
    slow = resolve_launch(spec, spec_path, source=entry / "slow.cu")
    fixed = resolve_launch(spec, spec_path, source=entry / "fixed.cu")
    assert slow.kernel == spec.kernel and fixed.kernel != "" and (entry / "fixed.cu").is_file()
    assert slow.bytes and slow.bytes > 0
    for params in spec.check_params:
        resolve_launch(spec, spec_path, source=entry / "fixed.cu", params={**spec.params, **params})


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_both_kernels_compile_for_hopper(entry: Path, tmp_path: Path) -> None:
    for name in ("slow.cu", "fixed.cu"):
        done = subprocess.run(
            # -cubin: the device code these files are; the host compiler's pass had nothing to compile
            ["nvcc", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"{name}.cubin"), str(entry / name)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{entry.name}/{name}: {done.stderr[-800:]}"


KERNELBENCH = UNSEEN / "kernelbench"
PAIRS = sorted(p.name.removesuffix("_problem.py") for p in KERNELBENCH.glob("*_problem.py"))


def test_kernelbench_pairs_are_complete_and_cited() -> None:
    assert len(PAIRS) >= 6
    readme = (KERNELBENCH / "README.md").read_text()
    assert "ScalingIntelligence/KernelBench" in readme and "MIT" in readme
    for pair in PAIRS:
        assert pair in readme, f"{pair} has no row in kernelbench/README.md"


@pytest.mark.parametrize("pair", PAIRS)
def test_kernelbench_solution_holds_inline_cuda(pair: str) -> None:
    import ast

    from perfagent.rewrite.embed.literals import find_inline_sources

    problem = ast.parse((KERNELBENCH / f"{pair}_problem.py").read_text())
    names = {n.name for n in problem.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    assert {"Model", "get_inputs", "get_init_inputs"} <= names
    solution = (KERNELBENCH / f"{pair}_solution.py").read_text()
    assert "class ModelNew" in solution
    sources = find_inline_sources(solution)
    assert sources and any("__global__" in s.cuda_text for s in sources), f"{pair}: no load_inline CUDA found"
