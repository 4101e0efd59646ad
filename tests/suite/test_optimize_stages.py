"""A suite row of an optimize job carries where the run's wall time went (``EntryResult.optimize_stages``).

Real CPU run: the Triton ModelNew of the vector-add example through the interpreter, one iteration.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfagent.suite.entry_runner import _optimize
from perfagent.suite.models import EntryResult, SuiteSettings

KB = Path(__file__).resolve().parents[2] / "examples" / "kernelbench"


def test_an_optimize_row_says_where_the_time_went(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    settings = SuiteSettings(jobs=["optimize"], device="cpu")
    _, figures = _optimize(
        "vector_add",
        KB / "01_vector_add.py",
        KB / "01_vector_add_triton.py",
        settings,
        tmp_path,
        1,
        "recipes",
        None,
    )
    stages = figures["optimize_stages"]
    assert isinstance(stages, dict) and {"plan", "propose", "verify", "other"} <= set(stages)
    row = EntryResult(name="vector_add", kind="kernelbench", target="01_vector_add.py", **figures)  # type: ignore[arg-type]
    assert row.optimize_stages == stages
    assert EntryResult.model_validate_json(row.model_dump_json()).optimize_stages == stages
