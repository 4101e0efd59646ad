"""A candidate this machine cannot build or run at all (no CUDA toolkit, no GPU, a CPU-only torch) is
'not verified here', never 'incorrect': seen with KernelBench load_inline solutions optimized on a CPU
machine, where every candidate was marked incorrect with torch's "CUDA_HOME environment variable is not
set"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfagent.sandbox.harness import environment_gap

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "unseen" / "kernelbench"


@pytest.mark.parametrize(
    ("error", "lacks"),
    [
        (
            "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
            "toolkit",
        ),
        ("RuntimeError: Ninja is required to load C++ extensions", "ninja"),
        ("AssertionError: Torch not compiled with CUDA enabled", "no CUDA"),
        ("RuntimeError: No CUDA GPUs are available", "GPU"),
    ],
)
def test_environment_errors_are_named(error: str, lacks: str) -> None:
    gap = environment_gap(error)
    assert gap is not None and lacks in gap


@pytest.mark.parametrize(
    "error",
    [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "RuntimeError: Error building extension 'm': kernel.cu(12): error: identifier \"x\" is undefined",
        "IndexError: index 5 is out of bounds",
    ],
)
def test_errors_of_the_candidate_stay_its_own(error: str) -> None:
    assert environment_gap(error) is None


def test_optimize_on_a_machine_without_cuda_marks_no_candidate_incorrect(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine can build and run CUDA extensions")
    run = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "perfagent",
            "optimize",
            str(KB / "03_matvec_solution.py"),
            "--problem",
            str(KB / "03_matvec_problem.py"),
            "--backend",
            "recipes",
            "--iterations",
            "1",
            "--out",
            str(run),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-800:]
    record = json.loads((run / "record.json").read_text())
    verdicts = {c["verdict"] for c in record["candidates"]}
    assert record["candidates"] and "incorrect" not in verdicts, verdicts
    if verdicts == {"not-verified"}:
        assert all("not verified here" in c["reason"] for c in record["candidates"])
