"""``perfagent mcp``: every tool through a real MCP client session, in memory and over stdio.

All on CPU: bundled reports recorded on a GPU, KernelBench problems on CPU torch, the transform catalog.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'perfagent[mcp]')")

from mcp import Client, StdioServerParameters  # noqa: E402

from perfagent.api import diagnose  # noqa: E402
from perfagent.mcp_server.server import build_server  # noqa: E402
from perfagent.session import save_record  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
REPORT = "examples/reports/01_transpose_naive.ncu-rep"
SUITE = "examples/reports/suite.ncu-rep"
PROBLEM = "examples/kernelbench/01_vector_add.py"
TRITON = "examples/kernelbench/01_vector_add_triton.py"

EXPECTED_TOOLS = {
    "diagnose",
    "profile",
    "verify",
    "bench",
    "optimize",
    "compare",
    "explain_transform",
    "list_runs",
    "read_run",
}


def call(name: str, args: dict[str, Any], *, progress: list[str] | None = None) -> Any:
    """Call one tool in a fresh in-memory session rooted at the repo; return the CallToolResult."""

    async def go() -> Any:
        async def on_progress(_p: float, _total: float | None, message: str | None) -> None:
            if progress is not None and message:
                progress.append(message)

        async with Client(build_server(REPO)) as client:
            return await client.call_tool(name, args, progress_callback=on_progress)

    return anyio.run(go)


def test_every_tool_is_listed_with_schemas_and_hints() -> None:
    async def go() -> Any:
        async with Client(build_server(REPO)) as client:
            return (await client.list_tools()).tools, client.instructions

    listed, instructions = anyio.run(go)
    by_name = {t.name: t for t in listed}
    assert set(by_name) == EXPECTED_TOOLS
    for tool in listed:
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema is not None, f"{tool.name} has no output schema"
        assert tool.annotations is not None and tool.annotations.destructive_hint is False, tool.name
    for name in ("compare", "explain_transform", "list_runs", "read_run"):
        assert by_name[name].annotations.read_only_hint is True
    for name in ("diagnose", "verify", "bench", "optimize"):
        assert by_name[name].annotations.read_only_hint is False
    assert by_name["diagnose"].input_schema["required"] == ["target"]
    assert by_name["verify"].input_schema["required"] == ["reference"]
    optimize_args = by_name["optimize"].input_schema["properties"]
    assert {"samples", "repairs", "language"} <= set(optimize_args)  # the llm backend's options
    assert optimize_args["language"]["enum"] == ["cuda", "triton"]
    assert instructions and "verify" in instructions and "bench" in instructions


def test_diagnose_a_bundled_report_returns_the_json_record() -> None:
    result = call("diagnose", {"target": REPORT})
    assert not result.is_error, result.content
    record = result.structured_content
    assert record["kind"] == "diagnose"
    assert record["kernels"][0]["findings"][0]["category"] == "global-coalescing"
    # the text block carries the same record, for clients that only read text
    assert json.loads(result.content[0].text)["kernels"][0]["name"] == record["kernels"][0]["name"]


def test_profile_returns_canonical_metrics() -> None:
    result = call("profile", {"target": SUITE})
    assert not result.is_error, result.content
    kernels = result.structured_content["kernels"]
    assert len(kernels) >= 2
    assert all(k["metrics"]["duration_s"] > 0 for k in kernels)


def test_compare_a_report_with_itself_claims_no_change() -> None:
    result = call("compare", {"before": SUITE, "after": SUITE})
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["kernels"] and not data["only_before"] and not data["only_after"]
    assert {k["verdict"] for k in data["kernels"]} == {"same (within noise)"}


def test_compare_two_different_programs_lists_unmatched_kernels() -> None:
    result = call(
        "compare", {"before": REPORT, "after": "examples/reports/02_transpose_bank_conflicts.ncu-rep"}
    )
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["only_before"] or data["kernels"]


def test_explain_transform_and_unknown_transform() -> None:
    ok = call("explain_transform", {"transform_id": "smem-padding"})
    assert not ok.is_error and ok.structured_content["id"] == "smem-padding"
    bad = call("explain_transform", {"transform_id": "make-it-fast"})
    assert bad.is_error
    error = bad.structured_content["error"]
    assert (
        error["exit_code"] == 2
        and "unknown transform" in error["cause"]
        and "smem-padding" in error["next_step"]
    )


def test_verify_on_cpu_reports_a_verdict_with_checks() -> None:
    pytest.importorskip("torch")
    progress: list[str] = []
    result = call(
        "verify", {"reference": PROBLEM, "candidate": TRITON, "device": "cpu", "seeds": 1}, progress=progress
    )
    assert not result.is_error, result.content
    assert result.structured_content["verdict"] == "pass"
    assert result.structured_content["checks"]


def test_bench_on_cpu_times_the_baseline() -> None:
    pytest.importorskip("torch")
    result = call("bench", {"target": PROBLEM, "device": "cpu", "runs": 5})
    assert not result.is_error, result.content
    assert result.structured_content["baseline"]["timing"]["median_s"] > 0
    assert result.structured_content["timer"] == "perf_counter"


def test_optimize_returns_a_record_and_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", str(tmp_path / "runs"))
    before = (REPO / TRITON).read_bytes()
    progress: list[str] = []
    result = call(
        "optimize",
        {"target": TRITON, "problem": PROBLEM, "backend": "recipes", "iterations": 1, "device": "cpu"},
        progress=progress,
    )
    assert (REPO / TRITON).read_bytes() == before, "optimize must never edit the user's file"
    assert not result.is_error, result.content
    record = result.structured_content
    assert record["kind"] == "optimize" and record["candidates"]
    # on CPU a correct candidate is verified but never claimed faster
    assert all(c["verification"]["verdict"] == "pass" for c in record["candidates"])
    assert record["best"] is None
    assert any("iteration 1" in line for line in progress), progress


def test_list_runs_and_read_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    record = diagnose(str(REPO / REPORT))
    save_record(record, runs / "20260101-000000-abcdef")
    (runs / "20260101-000001-broken").mkdir(parents=True)
    (runs / "20260101-000001-broken" / "record.json").write_text("{not json", encoding="utf-8")

    listed = call("list_runs", {"runs_dir": str(runs)})
    assert not listed.is_error, listed.content
    data = listed.structured_content
    assert [r["path"].rsplit("/", 1)[-1] for r in data["runs"]] == ["20260101-000000-abcdef"]
    assert data["runs"][0]["top_finding"].startswith("global-coalescing")
    assert len(data["unreadable"]) == 1

    read = call("read_run", {"run": data["runs"][0]["path"]})
    assert not read.is_error and read.structured_content["kernels"][0]["name"] == record.kernels[0].name


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("diagnose", {"target": "missing.ncu-rep"}, 2),
        ("read_run", {"run": "examples/README.md"}, 2),
        ("verify", {"reference": "missing.py"}, 2),
        ("compare", {"before": REPORT, "after": "missing.ncu-rep"}, 2),
    ],
)
def test_bad_input_is_a_structured_error_without_traceback(
    tool: str, args: dict[str, Any], code: int
) -> None:
    result = call(tool, args)
    assert result.is_error
    error = result.structured_content["error"]
    assert error["exit_code"] == code
    assert error["cause"] and "Traceback" not in result.content[0].text


def test_stdio_subprocess_client_speaks_only_the_protocol_on_stdout() -> None:
    """A real `perfagent mcp` child process: initialise, list, call a tool that runs the ncu_report
    reader in a grandchild process (whose output must not reach the protocol stream)."""
    env = {"PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "perfagent", "mcp"], env=env, cwd=str(REPO)
    )

    async def go() -> tuple[set[str], Any, Any]:
        with open(os.devnull, "w") as errlog:  # noqa: PTH123 - the SDK wants a text file
            async with Client(params) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                diag = await client.call_tool("diagnose", {"target": REPORT})
                bad = await client.call_tool("diagnose", {"target": "missing.ncu-rep"})
                del errlog
                return names, diag, bad

    names, diag, bad = anyio.run(go)
    assert names == EXPECTED_TOOLS
    assert not diag.is_error and diag.structured_content["kernels"]
    assert bad.is_error and bad.structured_content["error"]["exit_code"] == 2


def test_cli_without_the_sdk_says_how_to_install(tmp_path: Path) -> None:
    """With the SDK hidden, `perfagent mcp` is exit 2 with the install command, no traceback."""
    import subprocess

    shadow = tmp_path / "shadow"
    (shadow / "mcp").mkdir(parents=True)
    (shadow / "mcp" / "__init__.py").write_text("raise ModuleNotFoundError('no mcp', name='mcp')\n")
    env = dict(os.environ, PYTHONPATH=f"{shadow}{os.pathsep}{REPO}")
    proc = subprocess.run(
        [sys.executable, "-m", "perfagent", "mcp"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "perfagent[mcp]" in proc.stderr and "Traceback" not in proc.stderr
