"""The richer LLM prompt: the profile's hot source lines (ncu source counters), the device's peaks (the
GPU table the roofline uses), the transform's catalog entry, and the earlier attempts with what was
measured on them (time, speed-up, the targeted metric, verdict) — accepted ones too, not only rejections.
The loop runs with the GPU simulated (tests/optimize/conftest.py) against the loopback server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

import perfagent
from knowledge.transforms import catalog
from perfagent.llm_client import LLMConfig
from perfagent.optimize import reprofile
from perfagent.optimize.services import Services
from perfagent.rewrite.base import EarlierAttempt, RewriteRequest
from perfagent.rewrite.prompt import format_hardware, user_message
from profilers.model import DeviceInfo, SourceLine
from tests.optimize.conftest import PADDED
from tests.optimize.helpers import TRANSPOSE, copy_example

HOT = [
    SourceLine(
        file="/tmp/x/slow.cu",
        line=21,
        text="  odata[...] = tile[threadIdx.x][threadIdx.y + j];",
        samples=900.0,
    ),
    SourceLine(
        file="/tmp/x/slow.cu",
        line=17,
        text="  tile[threadIdx.y + j][threadIdx.x] = idata[...];",
        samples=100.0,
    ),
    SourceLine(file="/tmp/x/slow.cu", line=3, text="#define TILE_DIM 32", samples=None, note="marker only"),
]


def test_hardware_peaks_come_from_the_gpu_table_when_the_profile_has_none() -> None:
    text = format_hardware(DeviceInfo(name="NVIDIA H100 80GB HBM3", vendor="nvidia"))
    assert "132 SMs" in text and "arch sm_90" in text and "MiB L2" in text
    assert "Peaks (datasheet, knowledge:h100-sxm): DRAM 3350 GB/s" in text and "TFLOP/s" in text
    assert format_hardware(DeviceInfo(name="Some Unknown GPU")) == "Hardware: Some Unknown GPU."


def test_user_message_lists_hot_lines_and_measured_history() -> None:
    request = RewriteRequest(
        source="__global__ void k() {}\n",
        language="cuda",
        transform="smem-padding",
        hot_lines=HOT,
        history=[
            EarlierAttempt(
                candidate_id="c1",
                transform="smem-padding",
                verdict="accepted",
                accepted=True,
                reason="accepted: 1.6x",
                description="Padded the tile.",
                time_s=6.25e-4,
                time_s_before=1e-3,
                speedup=1.6,
                metric="metrics.shared_bank_conflict_pct",
                metric_before=93.8,
                metric_after=0.4,
                metric_moved=True,
            ),
            EarlierAttempt(
                candidate_id="c2",
                transform="loop-unroll",
                verdict="not-faster",
                reason="correct, but not faster beyond noise",
                time_s=6.3e-4,
                speedup=0.99,
            ),
            EarlierAttempt(
                candidate_id="c3",
                transform="loop-unroll",
                verdict="not-timed",
                reason="correct but not timed (no GPU): speed-up not measured",
            ),
        ],
    )
    text = user_message(request, catalog()["smem-padding"])
    assert "Hot source lines (ncu source counters" in text
    assert "- slow.cu:21 (900 samples, 90 % of the samples):" in text and "slow.cu:3" not in text
    assert text.index("slow.cu:21") < text.index("slow.cu:17")
    assert "c1 (smem-padding): ACCEPTED" in text and "time 0.625 ms (was 1 ms), 1.6x" in text
    assert "metrics.shared_bank_conflict_pct 93.8 -> 0.4 (moved as expected)" in text
    assert "c2 (loop-unroll): not-faster, REJECTED" in text and "c3 (loop-unroll): not-timed;" in text
    assert "The current source below is c1's" in text and "do not repeat them" in text
    assert "Transform `smem-padding`" in text and "If it worked:" in text  # the catalog entry


def test_the_loop_tells_the_model_what_was_measured(tmp_path: Path, simulated_gpu: dict[str, Any]) -> None:
    simulated: Services = simulated_gpu["services"]
    stubbed = simulated.reprofile

    def with_source_counters(*args: Any, **kwargs: Any) -> reprofile.Reprofile:
        rp = stubbed(*args, **kwargs)
        if rp.kernel is None:
            return rp
        kernel = rp.kernel.model_copy(update={"source_lines": HOT})
        profile = rp.profile.model_copy(update={"kernels": [kernel]}) if rp.profile else None
        return reprofile.Reprofile(profile=profile, kernel=kernel, note=rp.note)

    folder = copy_example(TRANSPOSE, tmp_path)
    source = (folder / "slow.cu").read_text()
    padded = source.replace("tile[TILE_DIM][TILE_DIM];", f"tile[TILE_DIM][{PADDED}];")
    again = padded.replace("j += BLOCK_ROWS)", "j += BLOCK_ROWS )")
    with ReplayServer() as server:
        server.enqueue(
            Reply(content=structured(padded, "Padded the tile.")), Reply(content=structured(again))
        )
        config = LLMConfig.from_env(
            base_url=server.base_url, model=MODEL, api_key="sk-x", env={}, timeout_s=10.0, max_retries=0
        )
        record = perfagent.optimize(
            folder / "slow.cu",
            backend="llm",
            transform="smem-padding",
            iterations=2,
            out=tmp_path / "run",
            llm_config=config,
            services=replace(simulated, reprofile=with_source_counters),
        )
        first, second = (r.prompt_text for r in server.completions)
    c1 = record.candidates[0]
    assert c1.accepted and c1.speedup == pytest.approx(1.6)
    assert "Hot source lines (ncu source counters" in first and "slow.cu:21 (900 samples" in first
    assert "Peaks (" in first and "DRAM" in first and "Earlier attempts: none." in first
    assert "c1 (smem-padding): ACCEPTED" in second and "1.6x" in second
    assert (
        f"metrics.shared_bank_conflict_pct {c1.metric_before:.4g} -> {c1.metric_after:.4g} (moved as expected)"
        in second
    )
    assert "The current source below is c1's" in second
