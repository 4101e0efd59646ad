"""A plain-PyTorch KernelBench problem across two machines: ``--propose-only`` writes a first ModelNew with no
report (inputs from ``get_inputs`` on the meta device, the GPU from ``--gpu``, the language asked for and
enforced), ``--evaluate RUN`` verifies it (Triton under the interpreter on this CPU), and ``--propose-only
--from RUN`` continues from it. The real openai client against the loopback server of
tests/rewrite/llm_server.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

from perfagent.cli import main
from perfagent.llm_client import LLMConfig
from perfagent.optimize.phases import evaluate, propose
from tests.optimize.helpers import KB, REPORTS

pytestmark = pytest.mark.slow
TRITON = (KB / "01_vector_add_triton.py").read_text()
TUNED = TRITON.replace("block = 1024", "block = 4096")


@pytest.fixture(autouse=True)
def _triton(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    for name in ("PERFAGENT_LLM_BASE_URL", "PERFAGENT_LLM_MODEL", "PERFAGENT_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", str(tmp_path / "runs"))


def _config(server: ReplayServer) -> LLMConfig:
    return LLMConfig.from_env(
        base_url=server.base_url, model=MODEL, api_key="sk-x", env={}, timeout_s=10.0, max_retries=0
    )


def _problem(tmp_path: Path) -> Path:
    target = tmp_path / "01_vector_add.py"
    shutil.copy(KB / "01_vector_add.py", target)
    return target


def test_propose_evaluate_then_continue_a_first_triton_kernel(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    run = tmp_path / "run"
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(TRITON, "A Triton add kernel.")))
        first = propose(
            problem,
            backend="auto",
            language="triton",
            gpu="NVIDIA H100 80GB HBM3",
            iterations=2,
            out=run,
            llm_config=_config(server),
        )
        [asked] = [r for r in server.completions if r.answered == 200]
    [p1] = first.candidates
    assert (p1.transform, p1.verdict, p1.backend) == ("write-kernel", "proposed", "llm")
    assert p1.file == str(tmp_path / "01_vector_add_perfagent_triton.py")  # never the problem itself
    prompt = asked.prompt_text
    assert "Task: write a first ModelNew with Triton kernel(s)" in prompt and "@triton.jit" in prompt
    assert "forward receives (get_inputs()): float32[" in prompt  # from the meta device, no report
    assert "Hardware: NVIDIA H100 80GB HBM3, arch sm_90, compute capability 9.0, 132 SMs" in prompt
    assert "first ModelNew" in (run / "proposals" / "01_write-kernel" / "prompt.md").read_text()
    assert first.optimize is not None and "first kernel proposed (p1, triton)" in first.optimize.stopped

    evaluated = evaluate(run, device="cpu")  # the Triton interpreter verifies it here; nothing is timed
    [c1] = evaluated.candidates
    assert (c1.transform, c1.verification.verdict, c1.verdict) == ("write-kernel", "pass", "not-timed")
    assert c1.file == str(tmp_path / "01_vector_add_perfagent_triton.py")

    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(TUNED, "Bigger blocks.")))
        second = propose(
            from_run=run, backend="auto", transform="launch-config", iterations=1, llm_config=_config(server)
        )
        asked_again = [r.prompt_text for r in server.completions if r.answered == 200]
    later = [c for c in second.candidates if c.verdict == "proposed"]
    assert later and all(c.transform == "launch-config" and c.parent == c1.id for c in later)
    assert second.optimize is not None
    assert any(f"starting from the first kernel {c1.id}" in n for n in second.optimize.notes)
    # a recipe covers launch-config here (tuning): the model is not asked, and the recipe rewrote the ModelNew
    assert asked_again == [] and all(c.backend == "recipes" for c in later)
    assert "ModelNew" in Path(later[0].source_path or "").read_text()


def test_the_reference_profile_reaches_a_first_kernel_prompt(tmp_path: Path) -> None:
    """A report of the reference: its kernels, times and top findings go into the prompt (any recorded
    report stands in for the reference's here: the prompt block is what is checked)."""
    problem = _problem(tmp_path)
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(TRITON, "A Triton add kernel.")))
        propose(
            problem,
            backend="llm",
            language="triton",
            report=REPORTS / "08_vector_copy_near_peak.ncu-rep",
            iterations=1,
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        [prompt] = [r.prompt_text for r in server.completions if r.answered == 200]
    block = prompt.split("Profile of the reference")[1].split("\n\n")[0]
    assert " us" in block and "08_vector_copy_near_peak.ncu-rep" in block
    assert "Hardware: NVIDIA H" in prompt  # the report's GPU


def test_cuda_language_is_said_and_write_kernel_transform_works(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(TRITON, "Triton, though CUDA was asked for.")))
        server.enqueue(Reply(content=structured(TRITON, "Triton again.")))
        server.enqueue(Reply(content=structured(TRITON, "And again.")))
        record = propose(
            problem,
            backend="llm",
            language="cuda",
            transform="write-kernel",
            iterations=1,
            out=tmp_path / "run",
            llm_config=_config(server),
        )
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]
    assert "Task: write a first ModelNew with CUDA kernel(s)" in prompts[0] and "load_inline" in prompts[0]
    # a Triton answer to a CUDA request is refused and sent back: the language is enforced
    assert "no CUDA kernel built with torch.utils.cpp_extension.load_inline" in prompts[1]
    assert record.candidates == [] and record.optimize is not None and record.optimize.llm_errors


def test_a_plain_problem_with_recipes_only_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problem = _problem(tmp_path)
    code = main(
        ["optimize", str(problem), "--propose-only", "--backend", "recipes", "--out", str(tmp_path / "r")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "plain PyTorch" in err and "--llm-base-url" in err and "Traceback" not in err
