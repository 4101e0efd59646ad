"""The one-machine loop's prompt inputs come from the baseline, built once (issue 28, fifth step).

``measure_baseline`` returns ``LoopInputs`` (the prompts' hardware, its note, a plain-PyTorch problem's
reference profile); ``optimize`` hands those fields to the loop and ``--gpu`` is looked up once, at set-up.
Each test runs ``optimize`` on one machine with the llm backend against the loopback server
(tests/rewrite/llm_server.py, the real openai client) and reads the prompt the server received.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

from perfagent.llm_client import LLMConfig
from perfagent.optimize.api import optimize
from perfagent.records import RunRecord
from perfagent.rewrite.hardware import UNKNOWN_NOTE, described_hardware, gpu_device, prompt_hardware
from perfagent.rewrite.prompt import format_hardware
from tests.optimize.helpers import KB, REPORTS
from tests.optimize.llm_run import padded_by_the_model


def _optimize(tmp_path: Path, **options: object) -> tuple[RunRecord, str, list[str]]:
    record, prompts, said = padded_by_the_model(optimize, tmp_path, **options)
    assert prompts, "the loop asked the model nothing"
    return record, prompts[0], said


def test_the_recorded_gpu_wins_over_gpu_and_the_run_says_so_once(tmp_path: Path) -> None:
    record, prompt, said = _optimize(
        tmp_path, report=REPORTS / "02_transpose_bank_conflicts.ncu-rep", gpu="NVIDIA A100 SXM4 80GB"
    )
    recorded = record.kernels[0].profile.device
    assert recorded.name and f"Hardware: {recorded.name}, arch sm_90" in prompt
    assert "A100" not in prompt
    assert record.optimize is not None
    ignored = [n for n in record.optimize.notes if "--gpu NVIDIA A100 SXM4 80GB ignored" in n]
    assert len(ignored) == 1
    assert sum("--gpu NVIDIA A100 SXM4 80GB ignored" in m for m in said) == 1


def test_gpu_alone_names_the_gpu_in_the_one_machine_prompt(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (static analysis gives the diagnosis here)")
    record, prompt, _ = _optimize(tmp_path, gpu="h100-sxm", arch="sm_80")
    assert format_hardware(gpu_device("h100-sxm")) in prompt
    assert "sm_80" not in prompt
    assert record.optimize is not None and UNKNOWN_NOTE not in record.optimize.notes


def test_nothing_named_says_unknown_in_the_prompt_and_the_record(tmp_path: Path) -> None:
    record, prompt, said = _optimize(tmp_path, arch="sm_80")
    assert "Hardware: unknown" in prompt
    assert record.optimize is not None and record.optimize.notes.count(UNKNOWN_NOTE) == 1
    assert said.count(UNKNOWN_NOTE) == 1


def test_a_plain_pytorch_problem_gets_its_reference_profile_from_the_baseline(tmp_path: Path) -> None:
    """One machine, a recorded report of the reference: its kernels reach the first-kernel prompt."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    problem = tmp_path / "01_vector_add.py"
    shutil.copy(KB / "01_vector_add.py", problem)
    triton = (KB / "01_vector_add_triton.py").read_text()
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(triton, "A Triton add kernel.")))
        config = LLMConfig.from_env(
            base_url=server.base_url, model=MODEL, api_key="sk-loop", env={}, timeout_s=10.0, max_retries=0
        )
        optimize(
            problem,
            backend="llm",
            language="triton",
            report=REPORTS / "08_vector_copy_near_peak.ncu-rep",
            iterations=1,
            max_candidates=1,
            out=tmp_path / "run",
            llm_config=config,
        )
        prompt = next(r.prompt_text for r in server.completions if r.answered == 200)
    block = prompt.split("Profile of the reference")[1].split("\n\n")[0]
    assert " us" in block and "(from the recorded report " in block
    assert "08_vector_copy_near_peak.ncu-rep" in block


def test_a_gpu_looked_up_once_describes_the_same_hardware_as_its_name() -> None:
    named = gpu_device("h200")
    for measured in (None, named):
        assert described_hardware(measured, named, "h200") == prompt_hardware(measured, "h200")
    assert described_hardware(None, None, None) == prompt_hardware(None, None)
