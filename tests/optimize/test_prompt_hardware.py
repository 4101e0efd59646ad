"""The GPU in a prompt is never a default: the report's device, the one ``--gpu`` names, or "unknown".

One test per kind of target: a report recorded on a GPU, ``--gpu NAME`` with nothing recorded, and no
hardware at all. Each runs ``--propose-only`` with the llm backend against the loopback server
(tests/rewrite/llm_server.py, the real openai client) and reads the prompt the server received. The cause
of "sm_80, compute capability 8.0" for a kernel recorded on an H200: a device from static analysis (the
compile target ``--arch``, no name) was presented as the GPU; here it is asked for with ``--arch sm_80``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfagent.cli import main
from perfagent.optimize.phases import propose
from perfagent.optimize.settings import OptimizeSettings
from perfagent.records import RunRecord
from perfagent.rewrite.hardware import UNKNOWN_NOTE, gpu_device
from perfagent.rewrite.prompt import format_hardware
from tests.optimize.helpers import REPORTS, TRANSPOSE
from tests.optimize.llm_run import padded_by_the_model


def _propose(tmp_path: Path, **options: object) -> tuple[RunRecord, str, list[str]]:
    record, [prompt], said = padded_by_the_model(propose, tmp_path, **options)
    return record, prompt, said


def test_a_report_recorded_on_a_gpu_names_that_gpu(tmp_path: Path) -> None:
    record, prompt, _ = _propose(
        tmp_path, report=REPORTS / "02_transpose_bank_conflicts.ncu-rep", gpu="NVIDIA A100 SXM4 80GB"
    )
    recorded = next(k for k in record.kernels).profile.device
    assert recorded.name and recorded.compute_capability == "9.0"
    assert f"Hardware: {recorded.name}, arch sm_90, compute capability 9.0" in prompt
    assert (
        "sm_80" not in prompt and "A100" not in prompt and "unknown" not in prompt.split("Hardware:")[1][:20]
    )
    assert record.optimize is not None
    assert any("--gpu NVIDIA A100 SXM4 80GB ignored" in n for n in record.optimize.notes)


def test_gpu_names_the_gpu_when_nothing_was_recorded(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (static analysis gives the diagnosis here)")
    record, prompt, _ = _propose(tmp_path, gpu="NVIDIA H100 80GB HBM3", arch="sm_80")
    expected = format_hardware(gpu_device("NVIDIA H100 80GB HBM3"))
    assert expected in prompt
    assert "compute capability 9.0, 132 SMs, 228 KiB shared memory per SM" in prompt
    assert "Peaks (datasheet, knowledge:h100-sxm): DRAM 3350 GB/s" in prompt
    assert "sm_80" not in prompt and "8.0" not in prompt
    assert record.optimize is not None and UNKNOWN_NOTE not in record.optimize.notes


def test_no_hardware_at_all_says_unknown_in_the_prompt_and_the_run(tmp_path: Path) -> None:
    record, prompt, said = _propose(tmp_path, arch="sm_80")  # the compile target is not the GPU
    assert "Hardware: unknown" in prompt
    assert "sm_80" not in prompt and "compute capability 8.0" not in prompt
    assert record.optimize is not None and UNKNOWN_NOTE in record.optimize.notes
    assert UNKNOWN_NOTE in said


def test_gpu_accepts_ids_and_names_and_refuses_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpu_device("h200").name == "NVIDIA H200 SXM 141GB"
    assert gpu_device("NVIDIA H200").sm_count == 132  # a device name as a profiler reports it
    assert OptimizeSettings.build(None, gpu="h200").gpu == "h200"
    code = main(
        [
            "optimize",
            str(TRANSPOSE / "slow.cu"),
            "--propose-only",
            "--gpu",
            "RTX 9999",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--gpu 'RTX 9999' is not a GPU perfagent knows" in err and "NVIDIA H100" in err
    assert "Traceback" not in err and not (tmp_path / "r" / "record.json").exists()
