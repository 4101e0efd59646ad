"""The planner on diagnoses of real recorded reports (examples/reports, recorded on an H100)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import perfagent
from perfagent.classifier import classify
from perfagent.optimize.plan import PRACTICAL_DRAM_PCT, PlannedTransform, make_plan, runnable
from perfagent.rewrite import get_rewriter
from perfagent.rewrite.base import LaunchContext, RewriteRequest, launch_context
from perfagent.workloads.launch_spec import load_launch_spec
from profilers.core_errors import BadInput
from profilers.model import Finding, KernelDiagnosis
from tests.optimize.helpers import EXAMPLES, REPORTS, TRANSPOSE

GEMV = EXAMPLES / "unseen" / "01_gemv_row_per_thread"
KB_RECORDS = Path(__file__).resolve().parents[1] / "data" / "kb_records_h200"


def _kernel(report: str, name: str) -> KernelDiagnosis:
    record = perfagent.diagnose(REPORTS / report)
    return next(k for k in record.kernels if k.profile.base_name == name)


def _request_for(path: Path, language: str = "cuda"):  # type: ignore[no-untyped-def]
    source = path.read_text()

    def build(transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=source, path=str(path), language=language, transform=transform, finding=finding
        )  # type: ignore[arg-type]

    return build


def _python_plan(kernel: KernelDiagnosis, path: Path) -> list[PlannedTransform]:
    """The measured plan of a Python (load_inline) file for ``kernel``, checked by the recipes."""
    recipes = get_rewriter("recipes")
    return make_plan(
        kernel,
        rewriter=recipes,
        request_for=_request_for(path, "python"),
        measured=True,
        recipe_check=recipes,
    )


def test_bank_conflicts_plan_pads_the_tile_first() -> None:
    kernel = _kernel("02_transpose_bank_conflicts.ncu-rep", "transpose_smem_conflicts")
    recipes = get_rewriter("recipes")
    steps = make_plan(
        kernel,
        rewriter=recipes,
        request_for=_request_for(TRANSPOSE / "slow.cu"),
        measured=True,
        recipe_check=recipes,
    )
    first = runnable(steps)[0]
    assert first.transform.id == "smem-padding" and first.origin == "diagnosis"
    assert first.finding is not None and first.finding.category == "shared-bank-conflicts"
    assert any("shared_bank_conflict_pct" in i for i in first.indicators)
    # smem-swizzle is the finding's second transform: its recipe applies (tile[32][32]), after the padding.
    swizzle = next(s for s in steps if s.transform.id == "smem-swizzle")
    assert swizzle.skipped is None and steps.index(swizzle) > steps.index(first)
    assert all("no deterministic recipe" not in (s.skipped or "") for s in steps)
    # Measured plans never fall back to recipes without an indicator.
    assert all(s.origin != "recipe" for s in steps)
    assert len({s.transform.id for s in steps}) == len(steps)


def _launch_context(spec_path: Path) -> LaunchContext:
    return launch_context(load_launch_spec(spec_path).model_dump(mode="json"))


def _with_launch(path: Path, spec_path: Path):  # type: ignore[no-untyped-def]
    source, launch = path.read_text(), _launch_context(spec_path)

    def build(transform: str, finding: Finding | None) -> RewriteRequest:
        return RewriteRequest(
            source=source,
            path=str(path),
            language="cuda",
            transform=transform,
            finding=finding,
            launch=launch,
        )

    return build


def _plan_copy(kernel: KernelDiagnosis) -> list[PlannedTransform]:
    """The recipes plan for the 08 copy kernel, with its launch spec in every request."""
    recipes = get_rewriter("recipes")
    folder = EXAMPLES / "cuda" / "08_vector_copy_near_peak"
    return make_plan(
        kernel,
        rewriter=recipes,
        request_for=_with_launch(folder / "slow.cu", folder / "scale_copy.launch.toml"),
        measured=True,
        recipe_check=recipes,
    )


def test_a_kernel_at_its_roof_gets_no_busywork() -> None:
    real = _kernel("08_vector_copy_near_peak.ncu-rep", "scale_copy_float4")
    # the recorded copy runs at 81.9 % of DRAM peak; at 90 % (above the practical ceiling) nothing is tried
    metrics = real.profile.metrics.model_copy(update={"dram_throughput_pct": 90.0})
    kernel = real.model_copy(update={"profile": real.profile.model_copy(update={"metrics": metrics})})
    assert all(f.severity == "info" for f in kernel.findings)
    steps = _plan_copy(kernel)
    assert steps and not runnable(steps)
    assert all("at its bound" in (s.skipped or "") for s in steps)


def test_dram_headroom_below_the_practical_ceiling_gets_launch_tuning_only() -> None:
    kernel = _kernel("08_vector_copy_near_peak.ncu-rep", "scale_copy_float4")
    pct = kernel.profile.metrics.dram_throughput_pct
    assert pct is not None and pct < PRACTICAL_DRAM_PCT
    steps = _plan_copy(kernel)
    tried = [(s.transform.id, s.origin) for s in runnable(steps)]
    assert ("launch-config", "headroom") in tried
    # structural transforms are still not busywork for a kernel this close to its roof
    # fusion has a recipe now, but a launch-spec kernel has no second launch to fuse with
    fusion = next(s for s in steps if s.transform.id == "kernel-fusion")
    assert fusion.skipped is not None and "no two consecutive kernel launches" in fusion.skipped


def test_requested_transform_only_and_unknown_ids_refused() -> None:
    kernel = _kernel("02_transpose_bank_conflicts.ncu-rep", "transpose_smem_conflicts")
    recipes = get_rewriter("recipes")
    req = _request_for(TRANSPOSE / "slow.cu")
    steps = make_plan(kernel, rewriter=recipes, request_for=req, transforms=["launch-config"], measured=True)
    assert [(s.transform.id, s.origin, s.skipped) for s in steps] == [("launch-config", "requested", None)]
    with pytest.raises(BadInput, match="unknown transform 'tile-everything'"):
        make_plan(kernel, rewriter=recipes, request_for=req, transforms=["tile-everything"], measured=True)
    with pytest.raises(BadInput, match="no 'atomic-contention' finding"):
        make_plan(kernel, rewriter=recipes, request_for=req, finding="atomic-contention", measured=True)


def test_without_a_measurement_the_plan_is_what_the_recipes_can_apply() -> None:
    recipes = get_rewriter("recipes")
    steps = make_plan(
        None,
        rewriter=recipes,
        request_for=_request_for(TRANSPOSE / "slow.cu"),
        measured=False,
        recipe_check=recipes,
    )
    ids = [s.transform.id for s in runnable(steps)]
    # grid-swizzle-cuda refuses: a transpose reads each element once (no operand tile shared by blocks)
    assert set(ids) == {"smem-padding", "smem-swizzle", "launch-config", "restrict-pointers", "loop-unroll"}
    swizzle = next(s for s in steps if s.transform.id == "grid-swizzle")
    assert swizzle.skipped is not None and "reads each element once" in swizzle.skipped
    assert all(s.origin == "recipe" for s in steps)


def test_rewriter_refusals_are_kept_with_their_reason() -> None:
    kernel = _kernel("triton_softmax.ncu-rep", "softmax_kernel")
    recipes = get_rewriter("recipes")
    script = EXAMPLES / "triton" / "02_softmax_small_block.py"
    steps = make_plan(
        kernel,
        rewriter=recipes,
        request_for=_request_for(script, "triton"),
        measured=True,
        recipe_check=recipes,
    )
    by_id = {s.transform.id: s for s in steps}
    assert by_id["kernel-fusion"].origin == "diagnosis" and "edit cuda sources, not triton" in (
        by_id["kernel-fusion"].skipped or ""
    )
    assert "edit cuda sources, not triton" in (by_id["vectorize-access"].skipped or "")
    assert "edit cuda sources, not triton" in (by_id["smem-padding"].skipped or "")
    assert by_id["vectorize-access"].record().finding == "dram-bandwidth"


def _gemv_diagnosis() -> KernelDiagnosis:
    """A row-per-thread GEMV as ncu sees it: the naive SGEMM's recorded profile (4 of 32 bytes used per
    load sector, the GEMV's access pattern) launched with the GEMV spec's geometry, re-classified."""
    spec = load_launch_spec(GEMV / "gemv.launch.toml")
    threads = int(spec.block[0])
    blocks = -(-int(spec.params["rows"]) // threads)  # the spec's grid: ceil_div(rows, 256)
    profile = perfagent.profile(REPORTS / "10_sgemm_naive.ncu-rep")
    kernel = next(k for k in profile.kernels if k.base_name == "sgemm_naive")
    sms, max_warps = kernel.device.sm_count, kernel.occupancy.max_warps_per_sm
    assert sms is not None and max_warps is not None
    launch = kernel.launch.model_copy(
        update={
            "grid": (blocks, 1, 1),
            "block": (threads, 1, 1),
            "grid_size": blocks,
            "block_size": threads,
            "waves_per_sm": blocks / (sms * (max_warps // (threads // 32))),
        }
    )
    [diagnosis] = classify(
        profile.model_copy(update={"kernels": [kernel.model_copy(update={"launch": launch})]})
    )
    return diagnosis


def test_gemv_plan_tries_the_structural_fix_before_launch_nudges() -> None:
    """On an H200 the loop spent its first try on a launch nudge (1.67x) while cooperative-row (12.7x) waited."""
    kernel = _gemv_diagnosis()
    assert [f.category for f in kernel.findings][:2] == ["global-coalescing", "launch-config"]
    recipes = get_rewriter("recipes")
    steps = make_plan(
        kernel,
        rewriter=recipes,
        request_for=_with_launch(GEMV / "slow.cu", GEMV / "gemv.launch.toml"),
        measured=True,
        recipe_check=recipes,
    )
    order = [s.transform.id for s in runnable(steps)]
    assert order[0] == "cooperative-row", order
    assert order.index("cooperative-row") < order.index("increase-parallelism") < order.index("launch-config")
    first = runnable(steps)[0]
    assert first.finding is not None and first.finding.category == "global-coalescing"
    assert "structural fix for global-coalescing: before its nudges" in first.why
    by_id = {s.transform.id: s for s in steps}
    assert "tuning nudge" in by_id["launch-config"].why
    # Every step says why it was or was not tried, with the recipe's own reason (and its line).
    tried = first.record(tried=True, tried_note="c1 (accepted): rewrites lines 9-13")
    assert tried.kind == "structural" and tried.reason is not None
    assert tried.reason.endswith("tried: precondition met; c1 (accepted): rewrites lines 9-13")
    unroll = by_id["loop-unroll"].record()
    assert unroll.reason is not None and "not tried: recipes: loop-unroll: loop at line 11" in unroll.reason
    waiting = by_id["launch-config"].record(unreached="iteration budget spent (1)")
    assert waiting.reason is not None and waiting.reason.endswith("not reached: iteration budget spent (1)")


@pytest.mark.parametrize(
    "solution",
    ["02_softmax_solution", "03_matvec_solution", "04_l2norm_solution", "05_masked_cumsum_solution"],
)
def test_a_structural_fix_that_also_cures_the_top_finding_goes_before_its_nudges(solution: str) -> None:
    """KernelBench solutions that give each row to one thread, on an H200: one block, so the small grid
    ranks first; its block-size nudges spent the whole budget while cooperative-row (32x the threads,
    and the row walk coalesced) waited under the coalescing finding. The diagnoses are the ones that
    run saved (tests/data/kb_records_h200, `scripts/gpu_generalization_bench.sh`, 2026-11-26). The masked
    cumsum (a running sum: cooperative-row's scan recipe) is from the later run of that day."""
    record = json.loads((KB_RECORDS / f"{solution}.record.json").read_text())
    kernel = KernelDiagnosis.model_validate(record["kernels"][0])
    assert [f.category for f in kernel.findings][:2] == ["launch-config", "global-coalescing"]
    steps = _python_plan(kernel, EXAMPLES / "unseen" / "kernelbench" / f"{solution}.py")
    order = [s.transform.id for s in runnable(steps)]
    assert order[0] == "cooperative-row", order
    assert order.index("cooperative-row") < order.index("increase-parallelism")
    first = runnable(steps)[0]
    # the small grid is one of its own indicators (a thread per item leaves SMs idle): it is planned under
    # the top finding directly, as that finding's structural fix, not promoted from the coalescing one
    assert first.finding is not None and first.finding.category == "launch-config"
    assert "structural fix for launch-config" in first.why


def test_a_small_grid_keeps_its_own_launch_fix_first() -> None:
    """thread-coarsening is structural, but its indicator is not the small grid's evidence: no promotion."""
    kernel = _kernel("04_small_grid.ncu-rep", "saxpy_gridstride_small_grid")

    class Anything:  # a backend that can try every transform (as the llm backend can)
        name = "llm"

        def applies(self, request: RewriteRequest) -> str | None:
            return None

    folder = EXAMPLES / "cuda" / "04_small_grid"
    steps = make_plan(
        kernel,
        rewriter=Anything(),  # type: ignore[arg-type]
        request_for=_request_for(folder / "slow.cu"),
        measured=True,
    )
    order = [s.transform.id for s in steps]
    # cooperative-row's small-grid indicator is the finding's evidence (a thread per work item leaves SMs
    # idle: issue 23's column sums, planes, channels), so a backend that can try anything tries it first;
    # the recipes backend refuses it on a kernel without a per-item loop and goes on to the nudges
    assert order[:3] == ["cooperative-row", "increase-parallelism", "launch-config"]
    assert order.index("launch-config") < order.index("thread-coarsening")


@pytest.mark.parametrize(
    ("example", "structural"),
    [
        # avoid-divergence's recipe is sequential addressing too (divergent-reduction): either comes first
        ("03_reduction_divergent", {"sequential-addressing", "avoid-divergence"}),
        ("02_transpose_bank_conflicts", {"smem-padding"}),
    ],
)
def test_unmeasured_plans_put_structural_recipes_before_nudges(example: str, structural: set[str]) -> None:
    folder = EXAMPLES / "cuda" / example
    [spec] = folder.glob("*.launch.toml")
    recipes = get_rewriter("recipes")
    steps = make_plan(
        None,
        rewriter=recipes,
        request_for=_with_launch(folder / "slow.cu", spec),
        measured=False,
        recipe_check=recipes,
    )
    tried = runnable(steps)
    assert tried[0].transform.id in structural
    kinds = [s.transform.kind for s in tried]
    assert kinds == sorted(kinds), kinds  # every structural step before every tuning one
    assert {"launch-config", "restrict-pointers"} <= {s.transform.id for s in tried}


def test_vectorize_access_is_indicated_by_dram_far_below_peak() -> None:
    """A 1-byte-per-thread dequantiser (unseen2 31) had coalesced loads, no LSU queue stalls and a quiet
    LSU pipe, so vectorize-access was skipped as 'indicators do not hold' while DRAM idled: few bytes in
    flight per load instruction is the indicator that held."""
    from knowledge.transforms import catalog
    from perfagent.optimize.plan import indicator_state

    real = _kernel("08_vector_copy_near_peak.ncu-rep", "scale_copy_float4")
    quiet = {"warp_stalls": {"lg_throttle": 0.1}, "pipe_utilization_pct": {"lsu": 10.0}}

    def at(pct: float) -> list[str]:
        metrics = real.profile.metrics.model_copy(
            update={"dram_throughput_pct": pct, "global_load_bytes_per_sector": 20.0, **quiet}
        )
        kernel = real.model_copy(update={"profile": real.profile.model_copy(update={"metrics": metrics})})
        holding, all_measured = indicator_state(catalog()["vectorize-access"], kernel)
        assert all_measured
        return holding

    assert [h for h in at(25.0) if "DRAM runs below 60 %" in h]
    assert at(75.0) == []


@pytest.mark.parametrize(
    ("solution", "first"),
    [
        ("01_logsoftmax_solution", {"cooperative-row"}),
        ("03_batched_matmul_solution", {"smem-tiling", "register-tiling"}),
        ("05_tensor3d_matmul_solution", {"smem-tiling", "register-tiling"}),
        ("10_gemm_add_relu_solution", {"smem-tiling", "register-tiling"}),
    ],
)
def test_kernelbench_flat_and_3d_maps_plan_their_structural_fix_first(solution: str, first: set[str]) -> None:
    """The H200 diagnoses of four load_inline solutions whose thread maps the recipes could not read (a thread
    per element recomputing its row; flat 1-D and 3-D matmul maps): planned only as launch nudges,
    restrict-pointers or coarsening then (BENCHMARKS.md, 1.00x on 01, 03, 05). The row hoist and the
    thread-map normaliser let the structural recipe apply, and the plan reaches it first."""
    record = json.loads((KB_RECORDS / "unseen2" / f"{solution}.diagnosis.json").read_text())
    kernel = KernelDiagnosis.model_validate(record["kernels"][0])
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "unseen2" / "kernelbench" / f"{solution}.py"
    order = [s.transform.id for s in runnable(_python_plan(kernel, path))]
    assert order and order[0] in first, order
