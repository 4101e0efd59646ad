"""The profiling-cost benchmark's CPU parts (scripts/bench_profiling_cost.sh, scripts/profcost_report.py):
the dry run checks every input and prints every command; the report reads a workload folder made of the
suite's recorded report (a staged record and a one-run record, as diagnose --format json writes them)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_stage_plan import Clock
from test_staged_profile import SUITE, RecordedNcu

from perfagent.classifier import classify
from perfagent.records import RunRecord
from perfagent.staging.run import staged_profile
from profilers.base import ProfileRequest
from profilers.model import Profile
from profilers.ncu.report_reader import read_ncu_rep
from profilers.process import run_command

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench_profiling_cost.sh"
REPORT = ROOT / "scripts" / "profcost_report.py"
STAGE1_CSV = ROOT / "tests" / "data" / "ncu_csv" / "a10g_sgemm_4kernels_ncu2023.1.1_roofline.raw.csv"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _record(profile: Profile) -> str:
    record = RunRecord(
        id="t",
        perfagent_version="0",
        target="prog",
        tool="ncu",
        notes=profile.notes,
        kernels=classify(profile),
    )
    return record.model_dump_json()


def _workdir(tmp_path: Path) -> Path:
    """A workload folder as the benchmark leaves it: timings, the staged record (tier B folded: stage 1 took
    as long as the transformer block's), and a one-run record in which sgemm_smem_tiled's SM and memory
    throughput read 40 % instead of 73 % and 87 % (so its findings change: latency-bound too)."""
    suite = read_ncu_rep(SUITE)
    staged = staged_profile(
        RecordedNcu(suite),
        ProfileRequest(workdir=tmp_path, command=["./prog"]),
        progress=lambda _: None,
        clock=Clock(8.09),
    )
    kernels = [
        k.model_copy(
            update={
                "metrics": k.metrics.model_copy(
                    update={"sm_throughput_pct": 40.0, "memory_throughput_pct": 40.0}
                )
            }
        )
        if k.base_name == "sgemm_smem_tiled"
        else k
        for k in suite.kernels
    ]
    work = tmp_path / "suite"
    (work / "staged_1").mkdir(parents=True)
    shutil.copy(STAGE1_CSV, work / "staged_1" / "perfagent-ncu-times-0.csv")  # 4 launches, ncu's raw page
    (work / "staged_1.json").write_text(_record(staged))
    (work / "single.json").write_text(_record(suite.model_copy(update={"kernels": kernels})))
    (work / "times.tsv").write_text(
        "program alone\t0.5\nncu --set basic\t9.0\nperfagent diagnose (staged)\t8.1\n"
        "ncu --set basic\t10.0\nperfagent diagnose (staged)\t8.5\n"
    )
    return work


def test_the_report_names_the_changed_kernel_its_findings_and_deciding_metrics(tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    result = run_command(["python3", str(REPORT), str(work), "suite (./prog)"], timeout_s=120, env=_env())
    text = result.stdout
    assert "| perfagent diagnose (staged) | 2 | 8.30 | 8.10 | 8.50 | 0.87× |" in text
    assert "stage plan: tier B collected in tier A's run" in text
    assert "| 1: durations (perfagent-ncu-times-0.csv) | 4 | 1 |" in text
    assert "kernels profiled in depth compared with the single-run classification: 5; changed: 1" in text
    detail = text.split("#### sgemm_smem_tiled")[1]
    assert "- before (1 launch(es) averaged): " in detail and "| SM % | 40.0 |" in detail
    assert "fired before only:" in detail and "| theoretical occupancy % |" in detail


def test_the_report_of_a_workload_whose_commands_all_failed_says_so(tmp_path: Path) -> None:
    result = run_command(["python3", str(REPORT), str(tmp_path), "torch"], timeout_s=120, env=_env())
    assert "no command finished (see failures.txt)" in result.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_dry_run_checks_inputs_and_prints_every_command(tmp_path: Path) -> None:
    env = _env(DRY_RUN="1", DRY_BUILD="0", WORKLOADS="suite torch longtail unseen", OUT=str(tmp_path))
    result = run_command(["bash", str(BENCH)], timeout_s=300, env=env)
    out = result.stdout + result.stderr
    assert "preflight: ok (workloads: suite torch longtail unseen)" in out, out
    assert out.count("would run: [perfagent diagnose (staged)]") == 3 + 3 + 1 + 1  # REPS=3 on suite, torch
    assert out.count("would run: [ncu --set full]") == 0  # FULL is empty by default
    assert "would build: nvcc -arch=sm_90 -O3 -lineinfo -o" in out and "longtail_unseen/main.cu" in out
    assert not (tmp_path / "profcost").exists()  # a dry run writes nothing


@pytest.mark.slow
def test_the_dry_run_refuses_an_unknown_workload_and_a_missing_gpu_tool_when_strict(tmp_path: Path) -> None:
    bad = run_command(
        ["bash", str(BENCH)],
        timeout_s=120,
        env=_env(DRY_RUN="1", DRY_BUILD="0", WORKLOADS="suite nope"),
    )
    assert bad.returncode == 2 and "workload 'nope'" in bad.stderr
    if shutil.which("ncu") is None:
        strict = run_command(
            ["bash", str(BENCH)],
            timeout_s=120,
            env=_env(DRY_RUN="1", DRY_BUILD="0", STRICT="1", WORKLOADS="torch"),
        )
        assert strict.returncode == 3 and "ncu missing" in strict.stderr


@pytest.mark.slow
def test_split_calls_fit_five_minutes_by_the_scripts_own_estimate(tmp_path: Path) -> None:
    for workloads in ("suite torch", "longtail unseen"):
        env = _env(DRY_RUN="1", DRY_BUILD="0", WORKLOADS=workloads)
        out = run_command(["bash", str(BENCH)], timeout_s=300, env=env).stderr
        total = int(out.split("estimate: ~")[1].split(" s")[0])
        assert total <= 300, (workloads, total)
    with_full = run_command(
        ["bash", str(BENCH)],
        timeout_s=300,
        env=_env(DRY_RUN="1", DRY_BUILD="0", WORKLOADS="suite torch", FULL="suite torch"),
    ).stderr
    assert int(with_full.split("estimate: ~")[1].split(" s")[0]) > 300
