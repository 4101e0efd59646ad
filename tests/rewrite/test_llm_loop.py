"""The rewrite -> verify -> feed-back loop on CPU: a KernelBench problem, a Triton candidate, the real
openai client against the loopback server, and perfagent's verifier as the judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig
from perfagent.rewrite.base import FailedAttempt, RewriteRequest
from perfagent.rewrite.llm import LLMRewriter
from profilers.model import Evidence, Finding
from tests.rewrite.helpers import EXAMPLES
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, fenced

pytest.importorskip("torch")
pytest.importorskip("triton")

PROBLEM = EXAMPLES / "kernelbench" / "01_vector_add.py"
CURRENT = EXAMPLES / "kernelbench" / "01_vector_add_triton.py"
KEY = "sk-loop-SECRET-9876543210"

FINDING = Finding(
    category="launch-config",
    severity="medium",
    title="Many small programs: 64 programs of 1024 elements",
    explanation="Each program moves 12 KiB; per-program overhead is a large share.",
    evidence=[Evidence(metric="waves_per_sm", value=0.12, threshold=1, comparison="<", unit="wave")],
    transforms=["launch-config", "thread-coarsening"],
    rule="small_grid",
)


@pytest.mark.slow
def test_wrong_rewrite_is_rejected_and_the_reason_steers_the_next_request(tmp_path: Path) -> None:
    from perfagent.verify import verify

    original = CURRENT.read_text()
    wrong = original.replace("a + b, mask=mask", "a - b, mask=mask").replace("block = 1024", "block = 4096")
    good = original.replace("block = 1024", "block = 4096").replace(
        "BLOCK_SIZE=block)", "BLOCK_SIZE=block, num_warps=8)"
    )
    assert wrong != original and good != original

    with ReplayServer() as server:
        server.reject_json_schema = True  # a plain chat server (llama.cpp-style): fenced replies
        server.enqueue(
            Reply(
                content=fenced(wrong, "python", "Larger blocks."), prompt_tokens=900, completion_tokens=300
            ),
            Reply(
                content=fenced(good, "python", "Larger blocks, 8 warps."),
                prompt_tokens=950,
                completion_tokens=310,
            ),
        )
        config = LLMConfig.from_env(
            base_url=server.base_url,
            model=MODEL,
            api_key=KEY,
            env={},
            timeout_s=10.0,  # a loopback reply; generous for 2 loaded CI cores
            max_retries=0,
            backoff_s=0.0,
        )
        rewriter = LLMRewriter(config)
        failed: list[FailedAttempt] = []
        record: list[dict[str, object]] = []
        accepted = None
        for round_ in range(2):
            req = RewriteRequest(
                source=original,
                path=str(CURRENT.relative_to(EXAMPLES.parent)),
                language="python",
                transform="launch-config",
                finding=FINDING,
                failed_attempts=failed,
            )
            [cand] = rewriter.propose(req)
            path = tmp_path / f"candidate_{round_}.py"
            path.write_text(cand.source)
            result = verify(PROBLEM, path, device="cpu", seeds=2, timeout_s=60)
            record.append(
                {"candidate": cand.model_dump(mode="json"), "verification": result.model_dump(mode="json")}
            )
            if result.verdict == "pass":
                accepted = cand
                break
            failed.append(FailedAttempt(candidate_id=cand.id, reason=result.reason))

        assert accepted is not None and accepted.source == good
        assert len(failed) == 1 and "correctness" in failed[0].reason
        # The second request carried the first candidate's id and the verifier's reason.
        second_prompt = server.completions[-1].prompt_text
        assert failed[0].candidate_id in second_prompt and failed[0].reason in second_prompt
        assert "waves_per_sm = 0.12 wave" in second_prompt and "Transform `launch-config`" in second_prompt
        assert accepted.tokens is not None and accepted.tokens.prompt_tokens == 950
        saved = tmp_path / "run.json"
        saved.write_text(json.dumps(record, indent=2))
        assert KEY not in saved.read_text()
        assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.completions)
