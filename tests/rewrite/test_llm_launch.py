"""Launch-spec kernels and the llm backend: the prompt shows the launch, the reply may change it (JSON
``launch`` object or a ```toml [launch] block), bad expressions are refused with the reason fed back, and a
good change travels into the candidate and, through the optimize loop, into the candidate's spec copy.
Real openai client, real loopback HTTP server (tests/rewrite/llm_server.py)."""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfagent.llm_client import LLMConfig
from perfagent.rewrite import launch_reply
from perfagent.rewrite.base import RewriteRequest, launch_context
from perfagent.rewrite.llm import LLMRewriter
from perfagent.workloads.launch_spec import LaunchOverride, load_launch_spec
from tests.rewrite.helpers import EXAMPLES
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, fenced

GEMV = EXAMPLES / "unseen" / "01_gemv_row_per_thread"
SLOW = (GEMV / "slow.cu").read_text()
SPEC = GEMV / "gemv.launch.toml"
ROWS_PER_BLOCK = 8
# The textbook warp-per-row rewrite, keeping the kernel's name: it needs 32 threads per row.
WARP_PER_ROW = """\
extern "C" __global__ void gemv_rows(const float* __restrict__ mat, const float* __restrict__ vec,
                                     float* __restrict__ out, long long rows, long long cols)
{
    long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* a = mat + row * cols;
    float sum = 0.0f;
    for (long long c = lane; c < cols; c += 32) sum += a[c] * vec[c];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) out[row] = sum;
}
"""
GRID = f"ceil_div(rows, {ROWS_PER_BLOCK})"
BLOCK = f"32 * {ROWS_PER_BLOCK}"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def _config(server: ReplayServer, **options: object) -> LLMConfig:
    base: dict[str, object] = {"timeout_s": 5.0, "max_retries": 0, "backoff_s": 0.0, "reply_retries": 3}
    base.update(options)
    return LLMConfig.from_env(base_url=server.base_url, model=MODEL, api_key="sk-x", env={}, **base)  # type: ignore[arg-type]


def _request() -> RewriteRequest:
    return RewriteRequest(
        source=SLOW,
        path="examples/unseen/01_gemv_row_per_thread/slow.cu",
        language="cuda",
        transform="coalesce-access",
        launch=launch_context(load_launch_spec(SPEC).model_dump(mode="json")),
    )


def _json(source: str, launch: object) -> str:
    return json.dumps({"new_source": source, "explanation": "A warp per row.", "launch": launch})


def test_prompt_shows_the_launch_and_a_json_launch_round_trips_into_the_candidate(
    server: ReplayServer,
) -> None:
    server.enqueue(Reply(content=_json(WARP_PER_ROW, {"grid": [GRID], "block": [BLOCK], "shared_mem": None})))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == WARP_PER_ROW
    assert cand.launch == LaunchOverride(grid=[GRID], block=[BLOCK])
    [req] = server.completions
    fmt = req.body["response_format"]["json_schema"]
    assert fmt["name"] == "RewriteReplyWithLaunch" and "launch" in fmt["schema"]["required"]
    text = req.prompt_text
    assert 'grid = ["ceil_div(rows, 256)"], block = [256], dynamic shared memory = 0 bytes' in text
    assert "(at the params: grid (32,), block (256,), 0 bytes)" in text
    assert (
        "params: rows = 8192, cols = 4096" in text
        and "verification also runs: rows = 1000, cols = 777" in text
    )
    assert "mat: float32[rows, cols] (input)" in text and "out: float32[rows] (output)" in text
    assert "rows: int64 scalar = rows" in text and '"launch"' in text


def test_fenced_reply_with_a_toml_launch_block(server: ReplayServer) -> None:
    server.reject_json_schema = True
    toml = f'[launch]\ngrid = ["{GRID}"]\nblock = ["{BLOCK}"]\n'
    server.enqueue(Reply(content=fenced(WARP_PER_ROW, "cuda", "A warp per row.") + f"\n```toml\n{toml}```\n"))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.launch == LaunchOverride(grid=[GRID], block=[BLOCK])
    assert cand.description.startswith("Here is the rewrite.") and "[launch]" not in cand.description
    assert "```toml block" in server.completions[-1].prompt_text


@pytest.mark.parametrize(
    ("launch", "reason"),
    [
        ({"grid": [GRID], "block": ["32 * warps"], "shared_mem": None}, "uses warps, which is not a param"),
        ({"grid": ["__import__('os').getpid()"], "block": None, "shared_mem": None}, "only the functions"),
        ({"grid": ["len(rows)"], "block": None, "shared_mem": None}, "only the functions"),
        ({"grid": [GRID], "block": ["2048"], "shared_mem": None}, "launch block[0] = 2048"),
        ({"grid": ["rows / 3"], "block": None, "shared_mem": None}, "is not a whole number"),
        ({"grid": [GRID], "block": [BLOCK], "shared_mem": "-4"}, "shared_mem = -4 bytes"),
        ({"grid": [GRID], "threads": [256]}, "unknown keys threads"),
    ],
)
def test_bad_launch_expressions_are_refused_with_the_reason_fed_back(
    server: ReplayServer, launch: object, reason: str
) -> None:
    good = {"grid": [GRID], "block": [BLOCK], "shared_mem": None}
    server.enqueue(Reply(content=_json(WARP_PER_ROW, launch)), Reply(content=_json(WARP_PER_ROW, good)))
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.launch == LaunchOverride(grid=[GRID], block=[BLOCK])
    repair = server.completions[-1].body["messages"][-1]["content"]
    assert repair.startswith("Your reply could not be used: ") and reason in repair


def test_a_grid_that_only_fails_on_the_check_shapes_is_refused() -> None:
    context = _request().launch
    assert context is not None
    # 8192 rows divide by 64, the check shape's 1000 rows do not.
    problem = launch_reply.check(
        LaunchOverride(grid=["rows // 64 + rows % 64 // 64 * 0 + rows / 64 - rows // 64"]), context
    )
    assert problem is not None and "rows = 1000" in problem and "not a whole number" in problem
    assert launch_reply.check(LaunchOverride(grid=[GRID], block=[BLOCK]), context) is None


def test_a_launch_only_change_is_a_candidate_and_restating_the_launch_is_not(server: ReplayServer) -> None:
    server.enqueue(
        Reply(content=_json(SLOW, {"grid": ["ceil_div(rows, 256)"], "block": ["256"], "shared_mem": None})),
        Reply(content=_json(SLOW, {"grid": ["ceil_div(rows, 128)"], "block": ["128"], "shared_mem": None})),
    )
    [cand] = LLMRewriter(_config(server)).propose(_request())
    assert cand.source == SLOW and cand.launch == LaunchOverride(grid=["ceil_div(rows, 128)"], block=[128])
    first_repair = server.completions[-1].body["messages"][-1]["content"]
    assert "identical to the original" in first_repair


def test_no_launch_spec_no_launch_field(server: ReplayServer) -> None:
    server.enqueue(Reply(content=json.dumps({"new_source": WARP_PER_ROW, "explanation": "x"})))
    request = _request().model_copy(update={"launch": None})
    [cand] = LLMRewriter(_config(server)).propose(request)
    assert cand.launch is None
    [req] = server.completions
    assert req.body["response_format"]["json_schema"]["name"] == "RewriteReply"
    assert "Launch:" not in req.prompt_text


def test_the_optimize_loop_writes_the_llm_launch_into_the_candidate_spec_copy(
    server: ReplayServer, tmp_path: Path
) -> None:
    import perfagent

    folder = tmp_path / "gemv"
    shutil.copytree(GEMV, folder)
    server.enqueue(Reply(content=_json(WARP_PER_ROW, {"grid": [GRID], "block": [BLOCK], "shared_mem": None})))
    record = perfagent.optimize(
        folder / "slow.cu",
        backend="llm",
        transform="coalesce-access",
        iterations=1,
        device="cpu",
        out=tmp_path / "run",
        llm_config=_config(server),
    )
    [cand] = record.candidates
    assert cand.launch == {"grid": [GRID], "block": [BLOCK]}
    assert cand.verdict in ("not-verified", "build-failed") and cand.accepted is False
    copy = tomllib.loads((Path(cand.source_path or "").parent / "launch.toml").read_text())
    assert copy["variants"]["source.cu"]["grid"] == [GRID] and copy["variants"]["source.cu"]["block"] == [
        BLOCK
    ]
    assert copy["grid"] == ["ceil_div(rows, 256)"] and copy["block"] == [256]  # the oracle keeps its own
    if shutil.which("nvcc"):
        assert cand.verdict == "not-verified", cand.reason
