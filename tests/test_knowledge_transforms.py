"""The transform catalog stays in sync with the taxonomy, the canonical profile model and the classifier."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowledge import KnowledgeError
from knowledge.taxonomy import categories, transform_ids
from knowledge.transforms import MetricCondition, Transform, catalog, metric_value, transform
from profilers.model import KernelProfile, LaunchConfig, Metrics, Occupancy

ROOT = Path(__file__).resolve().parents[1]
ROOT_MODELS: dict[str, type[BaseModel]] = {"metrics": Metrics, "occupancy": Occupancy, "launch": LaunchConfig}
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")


def _metric_map_paths() -> set[str]:
    text = (ROOT / "knowledge" / "data" / "metric_maps" / "ncu.toml").read_text(encoding="utf-8")
    return set(re.findall(r'^\[fields\."([a-z0-9_.]+)"\]', text, flags=re.M))


def _check_metric_path(path: str) -> str | None:
    """None when ``path`` names a canonical metric, else why not."""
    root, _, rest = path.partition(".")
    model = ROOT_MODELS.get(root)
    if model is None or not rest:
        return f"{path}: must be <metrics|occupancy|launch>.<field>"
    field, _, key = rest.partition(".")
    if field not in model.model_fields:
        return f"{path}: {model.__name__} has no field {field!r}"
    annotation = model.model_fields[field].annotation
    is_dict = typing.get_origin(annotation) is dict
    if is_dict and not key:
        return f"{path}: {field} is a dict; name the key ({root}.{field}.<key>)"
    if not is_dict and key:
        return f"{path}: {field} is not a dict"
    if is_dict:
        known = {p for p in _metric_map_paths() if p.startswith(f"{root}.{field}.")}
        if field == "flops":
            known |= {f"metrics.flops.{p}" for p in ("fp64", "fp32", "fp16", "tensor")}
        if path not in known:
            return f"{path}: key {key!r} is not a known {field} key ({', '.join(sorted(known))})"
    return None


def test_every_taxonomy_transform_has_exactly_one_entry() -> None:
    files = sorted(p.stem for p in (ROOT / "knowledge" / "data" / "transforms").glob("*.toml"))
    assert sorted(transform_ids()) == files
    assert set(catalog()) == set(transform_ids())
    assert len(files) == len(set(files)) == 23


@pytest.mark.parametrize("tid", transform_ids())
def test_entry_is_consistent(tid: str) -> None:
    entry = transform(tid)
    assert entry.id == tid
    unknown = [c for c in entry.fixes if c not in categories()]
    assert not unknown, f"{tid}: fixes names unknown categories {unknown}"
    problems = [p for p in (_check_metric_path(c.metric) for c in entry.applies_when) if p]
    problems += [p for p in (_check_metric_path(e.metric) for e in entry.expected_effect) if p]
    assert not problems, problems
    assert entry.example_before.strip() and entry.example_after.strip()
    assert entry.example_before.strip() != entry.example_after.strip()
    assert entry.how_cuda.strip() and entry.how_triton.strip() and entry.risks
    assert "evaluation.md" in entry.typical_gain, f"{tid}: typical_gain must cite evaluation.md"


@pytest.mark.parametrize("cid", list(categories()))
def test_category_evidence_names_canonical_metrics(cid: str) -> None:
    problems = [p for p in (_check_metric_path(e.metric) for e in categories()[cid].evidence) if p]
    assert not problems, problems


def test_nudges_are_tuning_and_the_rest_structural() -> None:
    """The planner tries a finding's structural fixes before these nudges (launch, unroll, restrict, fast math)."""
    tuning = {tid for tid, entry in catalog().items() if entry.kind == "tuning"}
    assert tuning == {
        "launch-config",
        "increase-parallelism",
        "loop-unroll",
        "restrict-pointers",
        "fast-math",
    }
    for tid in (
        "cooperative-row",
        "coalesce-access",
        "warp-shuffle-reduction",
        "smem-padding",
        "smem-tiling",
    ):
        assert transform(tid).kind == "structural"


def test_expected_effects_named_in_the_issue() -> None:
    def effects(tid: str) -> set[tuple[str, str]]:
        return {(e.metric, e.direction) for e in transform(tid).expected_effect}

    assert ("metrics.shared_bank_conflict_pct", "down") in effects("smem-padding")
    assert {
        ("metrics.global_load_bytes_per_sector", "up"),
        ("metrics.global_store_bytes_per_sector", "up"),
    } <= effects("coalesce-access")
    assert {("launch.waves_per_sm", "up"), ("occupancy.achieved_pct", "up")} <= effects("launch-config")
    assert transform("reduce-register-pressure").primary_effect.metric == "metrics.local_load_bytes"
    assert transform("reduce-register-pressure").primary_effect.direction == "down"


def test_recipe_backends_name_existing_recipes() -> None:
    from perfagent.rewrite.recipes import RECIPES

    for entry in catalog().values():
        for name in entry.recipes:
            assert name in RECIPES, f"{entry.id}: recipe {name!r} does not exist"
            assert entry.id in RECIPES[name].transforms, f"recipe {name} does not declare {entry.id}"
    for name, recipe in RECIPES.items():
        for tid in recipe.transforms:
            assert name in transform(tid).recipes, f"catalog entry {tid} does not list recipe {name}"


def _classifier_transform_literals() -> set[str]:
    """Every kebab-case string in a list literal of perfagent/classifier/*.py (transform suggestions)."""
    found: set[str] = set()
    for path in sorted((ROOT / "perfagent" / "classifier").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List):
                for elt in node.elts:
                    if (
                        isinstance(elt, ast.Constant)
                        and isinstance(elt.value, str)
                        and KEBAB.match(elt.value)
                    ):
                        found.add(elt.value)
    return found


def test_classifier_suggests_only_catalogued_transforms() -> None:
    suggested = _classifier_transform_literals()
    assert len(suggested) >= 10, "the scan found too few transform lists; has the classifier moved?"
    assert suggested <= set(catalog()), f"not in the catalog: {sorted(suggested - set(catalog()))}"


def _kernel(metrics: dict[str, typing.Any], **extra: typing.Any) -> KernelProfile:
    return KernelProfile(name="k", base_name="k", metrics=Metrics(**metrics), **extra)


CLASSIFIER_PROFILES = [
    _kernel(
        {
            "duration_s": 1e-3,
            "sm_throughput_pct": 20.0,
            "memory_throughput_pct": 60.0,
            "global_load_bytes_per_sector": 4.0,
            "global_store_bytes_per_sector": 4.0,
            "shared_bank_conflict_pct": 80.0,
            "l1_throughput_pct": 70.0,
            "threads_per_instruction": 10.0,
            "local_load_bytes": 1e6,
            "local_store_bytes": 1e6,
            "atomic_instructions": 1e6,
            "warp_stalls": {"long_scoreboard": 8.0, "barrier": 3.0},
        },
        launch=LaunchConfig(grid_size=8, block_size=100, waves_per_sm=0.05, registers_per_thread=200),
        occupancy=Occupancy(theoretical_pct=12.5, achieved_pct=10.0, limiter="registers"),
    ),
    _kernel(
        {
            "duration_s": 2e-6,
            "sm_throughput_pct": 5.0,
            "memory_throughput_pct": 5.0,
            "issue_slot_utilization_pct": 5.0,
        }
    ),
    _kernel(
        {
            "duration_s": 1e-3,
            "sm_throughput_pct": 90.0,
            "memory_throughput_pct": 20.0,
            "pipe_utilization_pct": {"fma": 90.0},
        }
    ),
    _kernel(
        {
            "duration_s": 1e-3,
            "sm_throughput_pct": 30.0,
            "memory_throughput_pct": 92.0,
            "dram_throughput_pct": 92.0,
        }
    ),
]


@pytest.mark.parametrize("kernel", CLASSIFIER_PROFILES)
def test_classifier_findings_name_catalogued_transforms(kernel: KernelProfile) -> None:
    from perfagent.classifier import classify
    from profilers.model import Profile

    diagnoses = classify(Profile(tool="test", source="hand-built", kernels=[kernel]))
    ids = {t for d in diagnoses for f in d.findings for t in f.transforms}
    assert ids <= set(catalog()), sorted(ids - set(catalog()))


def test_conditions_evaluate_on_profiles() -> None:
    kernel = _kernel({"shared_bank_conflict_pct": 50.0, "warp_stalls": {"barrier": 2.0}})
    assert metric_value(kernel, "metrics.shared_bank_conflict_pct") == 50.0
    assert metric_value(kernel, "metrics.warp_stalls.barrier") == 2.0
    assert metric_value(kernel, "metrics.warp_stalls.mio_throttle") is None
    assert metric_value(kernel, "occupancy.achieved_pct") is None
    held = transform("smem-padding").applicable(kernel)
    assert [c.metric for c in held] == ["metrics.shared_bank_conflict_pct"]
    effect = transform("smem-padding").primary_effect
    assert (
        effect.moved(50.0, 2.0) is True
        and effect.moved(50.0, 55.0) is False
        and effect.moved(None, 1.0) is None
    )


def test_invalid_entries_are_rejected() -> None:
    with pytest.raises(ValueError, match="must start with"):
        MetricCondition(metric="bank_conflicts", comparison=">", threshold=1, text="x")
    body = transform("smem-padding").model_dump()
    body["recipes"] = []
    with pytest.raises(ValueError, match="recipe names"):
        Transform(**body)
    with pytest.raises(KeyError, match="unknown transform"):
        transform("no-such-transform")
    assert issubclass(KnowledgeError, ValueError)


def test_prompt_text_carries_the_entry() -> None:
    text = transform("grid-swizzle").as_prompt("triton")
    assert "GROUP_M" in text and "Risks:" in text and "l2_hit_rate_pct goes up" in text
