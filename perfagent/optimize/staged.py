"""A candidate written into its folder, and what the evaluate step measured of it.

``stage`` writes the candidate's source, diff and ``candidate.json`` under ``<run>/candidates/NN_<transform>``;
``Staged`` carries the fields its outcome will hold, ``Measured`` what each stage of the evaluate step
found (``evaluate``, ``evaluate_ahead``, ``evaluate_time``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfagent.optimize import measure, reprofile
from perfagent.optimize.loop_state import Origin, candidate_fields
from perfagent.optimize.outcome import MetricCheck
from perfagent.optimize.plan import PlannedTransform
from perfagent.records import VerificationSummary
from perfagent.rewrite.base import Candidate
from perfagent.workloads.optimizable import OptimizeWorkload

__all__ = ["Measured", "Staged", "Tell", "stage"]

Tell = Callable[..., None]
"""``RunContext.tell``'s signature: ``tell(event class, message, **fields)``."""


@dataclass
class Measured:
    """What the evaluate step measured of one candidate (None: that step was not reached)."""

    build: measure.BuildOutcome
    verification: VerificationSummary
    timing: measure.Timing | None = None
    metric: MetricCheck | None = None
    reprofiled: reprofile.Reprofile | None = None


@dataclass
class Staged:
    """A candidate written into its folder, with the fields its outcome will carry."""

    cid: str
    folder: Path
    source_path: Path
    spec: Path | None
    fields: dict[str, Any]
    step: PlannedTransform
    stages: dict[str, float] = field(default_factory=dict)
    """Wall seconds of each stage reached (build, verify, time, profile)."""


def stage(
    wl: OptimizeWorkload,
    run_dir: Path,
    number: int,
    cand: Candidate,
    step: PlannedTransform,
    origin: Origin,
    *,
    iteration: int,
    repairs: int,
    repair_of: str | None,
) -> Staged:
    """Write candidate ``c{number}``'s source, diff and request into its folder."""
    folder = run_dir / "candidates" / f"{number:02d}_{cand.transform}"
    folder.mkdir(parents=True, exist_ok=True)
    fields = candidate_fields(cand, step, origin, iteration=iteration, file=wl.file)
    source_path = folder / (measure.CANDIDATE_CU if wl.language == "cuda" else f"source{wl.suffix}")
    source_path.write_text(cand.source, encoding="utf-8")
    diff_path = folder / "diff.patch"
    diff_path.write_text(cand.diff, encoding="utf-8")
    measure.write_json(folder / "candidate.json", cand)
    fields.update(
        id=f"c{number}",
        repairs=repairs,
        repair_of=repair_of,
        source_path=str(source_path),
        diff_path=str(diff_path),
        stage_s={},
    )
    return Staged(f"c{number}", folder, source_path, None, fields, step, fields["stage_s"])
