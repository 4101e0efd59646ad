"""``--samples N``: N candidates per rewrite request (``n`` when the server honours it, else N requests at
rising temperatures), repeats (comments and whitespace aside) dropped before any measurement and counted.
Real openai client, real loopback HTTP server (tests/rewrite/llm_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig
from perfagent.rewrite.base import RewriteRequest
from perfagent.rewrite.llm import LLMRewriter
from perfagent.rewrite.llm_reply import normalised
from tests.rewrite.helpers import EXAMPLES
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, fenced, structured

SLOW_CU = EXAMPLES / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"
ORIGINAL = SLOW_CU.read_text()
PADDED = ORIGINAL.replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 1];")
# The same rewrite, reformatted and commented: one candidate, not two.
PADDED_AGAIN = "// padded by one column\n" + PADDED.replace("TILE_DIM + 1]", "TILE_DIM  +  1 ] /* pad */")
SWIZZLED = ORIGINAL.replace(
    "tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"
)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _config(server: ReplayServer, **options: object) -> LLMConfig:
    base: dict[str, object] = {"timeout_s": 5.0, "max_retries": 0, "backoff_s": 0.0, "samples": 3}
    base.update(options)
    return LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key="sk-x", env={}, **base)  # type: ignore[arg-type]


def _request(**fields: object) -> RewriteRequest:
    values: dict[str, object] = {
        "source": ORIGINAL,
        "path": "slow.cu",
        "language": "cuda",
        "transform": "smem-padding",
    }
    values.update(fields)
    return RewriteRequest(**values)  # type: ignore[arg-type]


def test_normalised_ignores_comments_and_whitespace_only() -> None:
    assert PADDED_AGAIN != PADDED and normalised(PADDED_AGAIN, "cuda") == normalised(PADDED, "cuda")
    assert normalised(SWIZZLED, "cuda") != normalised(PADDED, "cuda")
    py = "def f(x):\n    return x + 1\n"
    assert normalised("# a comment\ndef f(x):\n\n    return x+1  # one\n", "python") == normalised(
        py, "python"
    )
    assert normalised("def f(x):\n    y = 1\nz = 2\n", "python") != normalised(
        "def f(x):\n    y = 1\n    z = 2\n", "python"
    )


def test_n_samples_in_one_request_duplicates_dropped(server: ReplayServer) -> None:
    server.honour_n = True
    server.enqueue(
        Reply(content=structured(PADDED), prompt_tokens=1000, completion_tokens=100),
        Reply(content=structured(PADDED_AGAIN), completion_tokens=110),
        Reply(content=structured(SWIZZLED), completion_tokens=120),
    )
    rewriter = LLMRewriter(_config(server))
    first, second = rewriter.propose(_request())
    assert (first.source, second.source) == (PADDED, SWIZZLED)
    assert rewriter.duplicates_dropped == 1
    [req] = server.completions
    assert req.body["n"] == 3 and req.body["temperature"] == 0.2
    assert (first.parameters["sample"], second.parameters["sample"], first.parameters["samples"]) == (1, 3, 3)
    # The request's tokens are counted once, on the first candidate.
    assert first.tokens is not None and (first.tokens.requests, first.tokens.prompt_tokens) == (1, 1000)
    assert first.tokens.completion_tokens == 330
    assert second.tokens is not None and second.tokens.requests == 0


def test_a_server_that_ignores_n_gets_one_request_per_sample_at_rising_temperatures(
    server: ReplayServer,
) -> None:
    server.enqueue(*(Reply(content=structured(s)) for s in (PADDED, SWIZZLED, PADDED_AGAIN)))
    rewriter = LLMRewriter(_config(server))
    cands = rewriter.propose(_request())
    assert [c.source for c in cands] == [PADDED, SWIZZLED] and rewriter.duplicates_dropped == 1
    bodies = [r.body for r in server.completions]
    assert bodies[0]["n"] == 3 and "n" not in bodies[1] and "n" not in bodies[2]
    assert [b["temperature"] for b in bodies] == [0.2, 0.45, 0.7]
    assert cands[1].parameters["temperature"] == 0.45
    # Remembered: the next batch goes straight to separate requests.
    server.enqueue(*(Reply(content=structured(s)) for s in (PADDED, SWIZZLED, PADDED)))
    rewriter.propose(_request())
    assert all("n" not in r.body for r in server.completions[3:]) and len(server.completions) == 6
    assert rewriter.duplicates_dropped == 2


def test_a_server_that_rejects_n_is_sampled_by_separate_requests(server: ReplayServer) -> None:
    server.reject_n = True
    server.enqueue(*(Reply(content=structured(s)) for s in (PADDED, SWIZZLED)))
    cands = LLMRewriter(_config(server, samples=2)).propose(_request())
    assert [c.source for c in cands] == [PADDED, SWIZZLED]
    first, second, third = server.completions
    assert first.answered == 400 and first.body["n"] == 2
    assert "n" not in second.body and second.body["temperature"] == 0.2 and third.body["temperature"] == 0.45


def test_a_sample_that_repeats_the_current_source_is_dropped(server: ReplayServer) -> None:
    server.honour_n = True
    commented = "// rewritten (not really)\n" + ORIGINAL
    server.enqueue(Reply(content=structured(commented)), Reply(content=structured(PADDED)))
    rewriter = LLMRewriter(_config(server, samples=2))
    [cand] = rewriter.propose(_request())
    assert cand.source == PADDED and rewriter.duplicates_dropped == 1
    assert cand.tokens is not None and cand.tokens.requests == 1


def test_unusable_samples_are_skipped_and_one_sample_keeps_the_old_single_request(
    server: ReplayServer,
) -> None:
    server.honour_n = True
    server.enqueue(Reply(content="no code at all"), Reply(content=structured(PADDED)))
    [cand] = LLMRewriter(_config(server, samples=2)).propose(_request())
    assert cand.source == PADDED and cand.parameters["sample"] == 2
    server.enqueue(Reply(content=structured(SWIZZLED)))
    [single] = LLMRewriter(_config(server, samples=1)).propose(_request())
    assert single.source == SWIZZLED and "n" not in server.completions[-1].body
    assert "sample" not in single.parameters


@pytest.mark.slow
def test_optimize_record_counts_samples_and_duplicates(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    import perfagent

    kb = EXAMPLES / "kernelbench"
    current = (kb / "01_vector_add_triton.py").read_text()
    good = current.replace("block = 1024", "block = 4096")
    again = "# a larger block\n" + good.replace("block = 4096", "block  =  4096")
    other = current.replace("BLOCK_SIZE=block)", "BLOCK_SIZE=block, num_warps=8)")
    with ReplayServer() as server:
        server.honour_n = True
        server.enqueue(*(Reply(content=structured(s)) for s in (good, again, other)))
        record = perfagent.optimize(
            kb / "01_vector_add_triton.py",
            problem=kb / "01_vector_add.py",
            backend="llm",
            transform="launch-config",
            iterations=1,
            device="cpu",
            seeds=1,
            out=tmp_path / "run",
            samples=3,
            max_candidates=1,  # raised to --samples
            llm_config=_config(server, samples=1),
        )
    result = record.optimize
    assert result is not None and (result.samples, result.duplicates_dropped) == (3, 1)
    assert [c.verdict for c in record.candidates] == ["not-timed", "not-timed"]
    assert [c.parameters["sample"] for c in record.candidates] == [1, 3]
    saved = (tmp_path / "run" / "record.json").read_text()
    assert '"duplicates_dropped": 1' in saved
    from perfagent.optimize.render import render_text

    assert "samples: 3 per request, 1 duplicate(s) dropped before measuring" in render_text(result)


def test_a_server_without_structured_output_keeps_n(server: ReplayServer) -> None:
    server.reject_json_schema = True  # its 400 names response_format: n is not blamed
    server.honour_n = True
    server.enqueue(Reply(content=fenced(PADDED)), Reply(content=fenced(SWIZZLED)))
    rewriter = LLMRewriter(_config(server, samples=2))
    assert [c.source for c in rewriter.propose(_request())] == [PADDED, SWIZZLED]
    first, second = server.completions
    assert first.answered == 400 and second.body["n"] == 2 and "response_format" not in second.body
