"""Tier A's and tier B's runs put back together hold what one run holds (issue 27's changed classification
on the transformer block was not a lost metric): on every recorded report, each kernel cut into the fields
each tier's run provides and merged back classifies exactly like the whole report; and no field of the ncu
metric map reads both tiers' metrics in one expression (neither run alone could compute it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_staged_profile import keep

from knowledge.metric_maps import expression_metrics
from perfagent.classifier import classify
from perfagent.staging.assemble import merge_tier_b
from profilers.model import KernelDiagnosis
from profilers.ncu.mapping import ncu_metric_map
from profilers.ncu.report_reader import read_ncu_rep
from profilers.ncu.tiers import is_tier_b


def categories(diagnoses: list[KernelDiagnosis]) -> dict[tuple[str, object], list[str]]:
    return {(d.profile.name, d.profile.launch.grid): [f.category for f in d.findings] for d in diagnoses}


REPORTS = sorted((Path(__file__).resolve().parents[2] / "examples" / "reports").glob("*.ncu-rep"))


def test_every_recorded_report_is_in_the_repository() -> None:
    assert len(REPORTS) >= 16


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.stem)
def test_tier_a_and_tier_b_merged_classify_like_one_run(report: Path) -> None:
    whole = read_ncu_rep(report)
    merged = [
        merge_tier_b(keep(k, ("A",)), keep(k, ("B",))).model_copy(update={"tiers": ["duration", "A", "B"]})
        for k in whole.kernels
    ]
    split = whole.model_copy(update={"kernels": merged})
    assert categories(classify(split)) == categories(classify(whole))
    cut = keep(whole.kernels[0], ("A",))  # the cut removes something, so the merge is what restores it
    assert cut.metrics != whole.kernels[0].metrics or not whole.kernels[0].metrics.warp_stalls


def test_no_metric_map_field_mixes_the_tiers() -> None:
    mixed = []
    metric_map = ncu_metric_map()
    for key, spec in {**metric_map.fields, **metric_map.defs}.items():
        for alternative in spec.alternatives():
            tiers = {is_tier_b(m) for m in expression_metrics(alternative)}
            if len(tiers) > 1:
                mixed.append((key, alternative))
    assert mixed == []
