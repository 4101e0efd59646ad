"""GPU test of a first kernel across two machines and the torch.compile baseline
(``python -m pytest -m gpu tests/gpu/test_first_kernel_phases_gpu.py -s``).

``--propose-only`` on the plain-PyTorch vector add writes a first CUDA ModelNew (the loopback server answers
with the bundled load_inline solution: this tests the flow, not a model), ``--evaluate`` on this GPU builds,
verifies, times and profiles it, and the record gives its speed-up over eager and over torch.compile(Model);
``perfagent bench`` reports both too. Every run is printed (``-s``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig
from perfagent.optimize.phases import evaluate, propose
from perfagent.optimize.render import render_text
from perfagent.timing import bench
from perfagent.timing.compiled import with_compile_baseline

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_torch")]

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "examples" / "kernelbench"
sys.path.insert(0, str(REPO / "tests"))
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured  # noqa: E402

FAST = {"seeds": 2, "runs": 30, "warmup": 5, "timeout_s": 60.0}


def test_first_cuda_kernel_proposed_then_evaluated_with_the_compile_baseline(tmp_path: Path) -> None:
    problem = tmp_path / "01_vector_add.py"
    shutil.copy(KB / "01_vector_add.py", problem)
    run = tmp_path / "run"
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured((KB / "01_vector_add_cuda.py").read_text(), "A CUDA add.")))
        config = LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key="k", env={}, max_retries=0)
        proposed = propose(
            problem,
            backend="llm",
            language="cuda",
            gpu="NVIDIA H100 80GB HBM3",
            iterations=1,
            out=run,
            llm_config=config,
            **FAST,
        )
    assert [c.verdict for c in proposed.candidates] == ["proposed"]
    record = evaluate(run, device="cuda")
    assert record.optimize is not None
    print(render_text(record.optimize))
    [c1] = record.candidates
    assert c1.transform == "write-kernel" and c1.verification.verdict == "pass"
    assert c1.time_s is not None and c1.speedup is not None
    base = record.optimize.baseline
    assert base.compile_speedup is not None or base.compile_note, base
    if base.compile_speedup is not None:
        assert c1.speedup_over_compile == pytest.approx(c1.speedup / base.compile_speedup)


def test_bench_reports_the_speedup_over_torch_compile() -> None:
    result = bench(KB / "01_vector_add.py", KB / "01_vector_add_cuda.py", device="cuda", runs=30, warmup=5)
    result = with_compile_baseline(result, KB / "01_vector_add.py")
    print(result.compiled, result.speedup_over_compile)
    assert result.compiled is not None and result.compiled.timer == "cuda-events"
    assert result.compiled.time_s is not None and result.speedup_over_compile is not None
