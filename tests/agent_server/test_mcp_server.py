"""``perfagent mcp``: every tool through a real MCP client session, in memory and over stdio.

All on CPU: bundled reports recorded on a GPU, KernelBench problems on CPU torch, the transform catalog.
Each test gets its own project root (copies of the examples), because the root is a boundary.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'perfagent[mcp]')")

from mcp import Client, StdioServerParameters  # noqa: E402

from knowledge.transforms import catalog  # noqa: E402
from perfagent.api import PROFILERS, diagnose  # noqa: E402
from perfagent.mcp_server.arguments import ProfilerName  # noqa: E402
from perfagent.mcp_server.boundary import ProjectRoot  # noqa: E402
from perfagent.mcp_server.jobs import INTERRUPTED, mark_interrupted  # noqa: E402
from perfagent.mcp_server.replies import as_tool_call_hint  # noqa: E402
from perfagent.mcp_server.server import build_server  # noqa: E402
from perfagent.mcp_server.summaries import reply_tokens  # noqa: E402
from perfagent.sandbox import confinement  # noqa: E402
from perfagent.sandbox.profiled import PROFILED_NOTE  # noqa: E402
from perfagent.session import load_record, save_record  # noqa: E402
from profilers.core_errors import BadInput  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
REPORT = "reports/01_transpose_naive.ncu-rep"
SUITE = "reports/suite.ncu-rep"
PROBLEM = "kb/01_vector_add.py"
TRITON = "kb/01_vector_add_triton.py"
KB_RECORD = REPO / "tests/data/kb_records_h200/05_masked_cumsum_solution.record.json"
TOKEN_CAP = 25_000

EXPECTED_TOOLS = {
    "diagnose_report",
    "diagnose",
    "profile",
    "verify",
    "bench",
    "optimize",
    "compare",
    "explain_transform",
    "list_targets",
    "list_runs",
    "read_run",
}
READ_ONLY_TOOLS = {"diagnose_report", "compare", "explain_transform", "list_targets", "list_runs", "read_run"}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project: three reports and a KernelBench problem with a Triton ModelNew."""
    monkeypatch.delenv("PERFAGENT_RUNS_DIR", raising=False)
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    (project / "kb").mkdir()
    for name in ("01_transpose_naive.ncu-rep", "02_transpose_bank_conflicts.ncu-rep", "suite.ncu-rep"):
        shutil.copy(REPO / "examples/reports" / name, project / "reports" / name)
    for name in ("01_vector_add.py", "01_vector_add_triton.py"):
        shutil.copy(REPO / "examples/kernelbench" / name, project / "kb" / name)
    return project


def call(
    root: Path,
    name: str,
    args: dict[str, Any],
    *,
    progress: list[tuple[float, float | None, str]] | None = None,
) -> Any:
    """Call one tool in a fresh in-memory session rooted at ``root``; return the CallToolResult."""

    async def go() -> Any:
        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress.append((value, total, message or ""))

        async with Client(build_server(root)) as client:
            return await client.call_tool(name, args, progress_callback=on_progress)

    return anyio.run(go)


def _tokens(result: Any) -> int:
    return reply_tokens([[b.text for b in result.content], result.structured_content])


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content
    error: dict[str, Any] = result.structured_content["error"]
    assert set(error) == {"cause", "next_step", "exit_code", "kind"}
    assert "Traceback" not in result.content[0].text and "pydantic" not in result.content[0].text
    return error


def test_every_tool_is_listed_with_described_schemas_enums_minimums_and_hints(root: Path) -> None:
    async def go() -> Any:
        async with Client(build_server(root)) as client:
            return (await client.list_tools()).tools, client.instructions

    listed, instructions = anyio.run(go)
    by_name = {t.name: t for t in listed}
    assert set(by_name) == EXPECTED_TOOLS
    for tool in listed:
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
        assert tool.annotations is not None and tool.annotations.destructive_hint is False, tool.name
        assert tool.annotations.read_only_hint is (tool.name in READ_ONLY_TOOLS), tool.name
        for prop, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{prop} has no description"
    props = {name: t.input_schema["properties"] for name, t in by_name.items()}
    assert props["diagnose"]["profiler"]["enum"] == list(PROFILERS)
    assert "regular expression" in props["diagnose"]["kernel"]["description"]
    assert "auto" in props["optimize"]["backend"]["enum"] and props["optimize"]["language"]["enum"] == [
        "cuda",
        "triton",
    ]
    assert props["explain_transform"]["transform_id"]["enum"] == sorted(catalog())
    assert sorted(catalog()) in [s.get("enum") for s in props["optimize"]["transform"]["anyOf"]]
    assert props["list_runs"]["limit"]["minimum"] == 1 and props["read_run"]["top_k"]["minimum"] == 1
    assert props["verify"]["seeds"]["minimum"] == 1 and props["optimize"]["iterations"]["minimum"] == 1
    assert (
        props["read_run"]["detail"]["enum"] == ["summary", "full"]
        and props["read_run"]["detail"]["default"] == "summary"
    )
    assert by_name["diagnose_report"].input_schema["required"] == ["target"]
    assert instructions and "verify" in instructions and "bench" in instructions


def test_profiler_enum_is_the_apis_list() -> None:
    assert ProfilerName.__args__ == PROFILERS  # type: ignore[attr-defined]


def test_prompts_and_resources_are_not_empty(root: Path) -> None:
    async def go() -> Any:
        async with Client(build_server(root)) as client:
            prompts = (await client.list_prompts()).prompts
            resources = (await client.list_resources()).resources
            prompt = await client.get_prompt("diagnose_and_explain", {"target": SUITE})
            catalog_text = await client.read_resource("perfagent://transforms")
            return prompts, resources, prompt, catalog_text

    prompts, resources, prompt, catalog_text = anyio.run(go)
    assert {p.name for p in prompts} == {"diagnose_and_explain", "fix_and_verify", "optimize_kernel"}
    assert {str(r.uri) for r in resources} >= {"perfagent://transforms", "perfagent://instructions"}
    assert (
        "diagnose_report" in prompt.messages[0].content.text
        and "explain_transform" in prompt.messages[0].content.text
    )
    assert {e["id"] for e in json.loads(catalog_text.contents[0].text)} == set(catalog())


def test_diagnose_report_is_a_bounded_summary_and_full_adds_the_record(root: Path) -> None:
    summary = call(root, "diagnose_report", {"target": REPORT})
    assert not summary.is_error, summary.content
    data = summary.structured_content
    assert data["record"] is None
    assert data["summary"]["kernels"][0]["top_finding"].startswith("global-coalescing")
    assert (
        json.loads(summary.content[0].text)["summary"]["kernels"][0]["name"]
        == data["summary"]["kernels"][0]["name"]
    )
    full = call(root, "diagnose_report", {"target": REPORT, "detail": "full", "top_k": 1})
    record = full.structured_content["record"]
    assert (
        record["kernels"][0]["findings"][0]["evidence"]
        and len(full.structured_content["summary"]["kernels"]) == 1
    )


def test_the_largest_report_and_a_ten_candidate_optimize_run_fit_the_reply_cap(root: Path) -> None:
    """Before bounded replies: 297 KB (~74K tokens) for the suite report, 291 KB for this run."""
    data = json.loads(KB_RECORD.read_text(encoding="utf-8"))
    first = data["candidates"]
    data["candidates"] = [dict(first[i % len(first)], id=f"c{i + 1}") for i in range(10)]
    run = root / ".perfagent/runs/20260101-000000-abcdef"
    run.mkdir(parents=True)
    (run / "record.json").write_text(json.dumps(data), encoding="utf-8")

    suite = call(root, "diagnose_report", {"target": SUITE})
    assert not suite.is_error and _tokens(suite) < TOKEN_CAP
    summary = suite.structured_content["summary"]
    assert summary["kernels_total"] == len(summary["kernels"]) >= 15
    read = call(root, "read_run", {"run": "latest"})
    assert not read.is_error and _tokens(read) < TOKEN_CAP
    optimize = read.structured_content["summary"]["optimize"]
    assert optimize["candidates_total"] == 10 and len(optimize["candidates"]) == 10
    assert all(c["verdict"] and c["reason"] for c in optimize["candidates"])
    assert 'read_run(run="20260101-000000-abcdef", detail="full")' in read.structured_content["summary"][
        "full_record"
    ] or ("detail=" in read.structured_content["summary"]["full_record"])
    assert _tokens(call(root, "read_run", {"run": "20260101-000000-abcdef", "detail": "full"})) > TOKEN_CAP


def test_diagnose_of_a_program_is_a_job_saved_under_the_root(root: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("static analysis needs nvcc/ptxas")
    shutil.copytree(REPO / "examples/cuda/01_transpose_naive", root / "transpose")
    progress: list[tuple[float, float | None, str]] = []
    args = {"target": "transpose/slow.cu", "profiler": "static"}
    result = call(root, "diagnose", args, progress=progress)
    assert not result.is_error, result.content
    summary = result.structured_content["summary"]
    assert Path(summary["run"]) == root.resolve() / ".perfagent/runs" / summary["id"]
    assert (
        load_record(Path(summary["run"])).kernels[0].name
        == summary["kernels"][0]["name"]
        == "transpose_naive"
    )
    assert progress and all(total == 1800.0 for _, total, _ in progress)
    assert call(root, "read_run", {"run": "latest"}).structured_content["summary"]["id"] == summary["id"]


def test_a_program_the_agent_names_is_profiled_inside_the_candidate_confinement(root: Path) -> None:
    """What an agent asks to profile is candidate code to perfagent: the run goes through the confinement
    (here ncu is missing, so the static fallback; the record's notes still say how it was launched)."""
    if shutil.which("nvcc") is None or shutil.which("ncu") is not None:
        pytest.skip("needs nvcc and no ncu (the static fallback of a program)")
    if not confinement.status().confined:
        pytest.skip(f"this machine cannot confine: {confinement.status().reason}")
    for folder in ("01_transpose_naive", "common"):  # main.cu includes ../common/example_harness.cuh
        shutil.copytree(REPO / "examples/cuda" / folder, root / "cuda" / folder)
    result = call(root, "diagnose", {"target": "cuda/01_transpose_naive/main.cu"})
    assert not result.is_error, result.content
    notes = load_record(Path(result.structured_content["summary"]["run"])).notes
    assert notes[0].startswith("sandbox: confined by bubblewrap") and notes[0].endswith(PROFILED_NOTE)


def test_profile_summarises_canonical_metrics(root: Path) -> None:
    result = call(root, "profile", {"target": SUITE, "kernel": "transpose"})
    assert not result.is_error, result.content
    kernels = result.structured_content["summary"]["kernels"]
    assert kernels and all("transpose" in k["name"] and k["duration_s"] > 0 for k in kernels)


def test_compare_a_report_with_itself_passes_the_gate(root: Path) -> None:
    result = call(root, "compare", {"before": SUITE, "after": SUITE})
    assert not result.is_error, result.content
    data = result.structured_content
    kernels = data["comparison"]["kernels"]
    assert kernels and {k["verdict"] for k in kernels} == {"same (within noise)"}
    assert data["gate"] == {
        "passed": True,
        "status": "pass",
        "max_regression_pct": 0.0,
        "checked": len(kernels),
        "regressions": [],
        "not_comparable": [],
    }
    assert data["comparison"]["total_before_s"] == pytest.approx(sum(k["before_s"] for k in kernels))


def test_compare_totals_cover_only_the_matched_kernels(root: Path) -> None:
    """A side with kernels the other lacks: its extra time is listed, not summed into a 'speed-up'."""
    data = call(
        root, "compare", {"before": SUITE, "after": SUITE, "after_kernel": "transpose"}
    ).structured_content
    comparison = data["comparison"]
    matched = comparison["kernels"]
    assert matched and comparison["only_before"] and not comparison["only_after"]
    assert all(k["matched_by"] == "name" for k in matched)
    assert comparison["total_before_s"] == pytest.approx(sum(k["before_s"] for k in matched))
    assert comparison["total_before_s"] == pytest.approx(comparison["total_after_s"])
    # the after side was narrowed to one kernel: the before side's others went missing, which fails the
    # gate (issue 26: a gate that silently drops kernels would pass a regression by deleting it)
    assert not data["gate"]["passed"] and data["gate"]["checked"] == len(matched)
    missing = [r for r in data["gate"]["regressions"] if "missing from the second run" in r]
    assert len(missing) == len(comparison["only_before"])


def test_compare_flags_a_regression_and_tolerates_it_under_max_regression(root: Path) -> None:
    args = {
        "before": SUITE,
        "after": SUITE,
        "before_kernel": "transpose_tiled_padded",
        "after_kernel": "transpose_naive",
    }
    slower = call(root, "compare", args).structured_content
    (delta,) = slower["comparison"]["kernels"]
    assert delta["matched_by"] == "position" and delta["change_pct"] > 10
    assert slower["gate"]["passed"] is False and "slower" in slower["gate"]["regressions"][0]
    tolerated = call(
        root, "compare", args | {"max_regression_pct": delta["change_pct"] + 1}
    ).structured_content
    assert tolerated["gate"]["passed"] is True
    none = call(root, "compare", args | {"after_kernel": "no_such_kernel"})
    assert _error(none)["exit_code"] == 2 and "no_such_kernel" in _error(none)["cause"]


def test_explain_transform_and_an_unknown_transform(root: Path) -> None:
    ok = call(root, "explain_transform", {"transform_id": "smem-padding"})
    assert not ok.is_error and ok.structured_content["id"] == "smem-padding"
    error = _error(call(root, "explain_transform", {"transform_id": "make-it-fast"}))
    assert (
        error["exit_code"] == 2 and "unknown transform" in error["cause"] and "smem-padding" in error["cause"]
    )


def test_verify_on_cpu_reports_a_verdict_and_progress_with_a_total(root: Path) -> None:
    pytest.importorskip("torch")
    progress: list[tuple[float, float | None, str]] = []
    result = call(
        root,
        "verify",
        {"reference": PROBLEM, "candidate": TRITON, "device": "cpu", "seeds": 1},
        progress=progress,
    )
    assert not result.is_error, result.content
    assert result.structured_content["verdict"] == "pass" and result.structured_content["checks"]
    assert progress and all(total == 1800.0 for _, total, _ in progress)


def test_bench_on_cpu_times_the_baseline(root: Path) -> None:
    pytest.importorskip("torch")
    result = call(root, "bench", {"target": PROBLEM, "device": "cpu", "runs": 5})
    assert not result.is_error, result.content
    assert result.structured_content["baseline"]["timing"]["median_s"] > 0
    assert result.structured_content["timer"] == "perf_counter"


def test_optimize_saves_its_run_under_the_root_and_reports_progress(root: Path) -> None:
    pytest.importorskip("torch")
    before = (root / TRITON).read_bytes()
    progress: list[tuple[float, float | None, str]] = []
    args = {"target": TRITON, "problem": PROBLEM, "backend": "recipes", "iterations": 1, "device": "cpu"}
    result = call(root, "optimize", args, progress=progress)
    assert (root / TRITON).read_bytes() == before, "optimize must never edit the user's file"
    assert not result.is_error, result.content
    summary = result.structured_content["summary"]
    run = Path(summary["run"])
    assert run.is_absolute() and run.parent == root.resolve() / ".perfagent/runs"
    assert load_record(run).kind == "optimize" and summary["optimize"]["candidates"]
    # on CPU a correct candidate is verified but never claimed faster
    assert (
        all(c["verdict"] != "fail" for c in summary["optimize"]["candidates"])
        and summary["optimize"]["best"] is None
    )
    assert any("iteration 1" in line for _, _, line in progress), progress
    assert call(root, "read_run", {"run": summary["id"]}).structured_content["summary"]["id"] == summary["id"]


def test_list_runs_read_run_by_id_and_latest(root: Path) -> None:
    runs = root / ".perfagent/runs"
    record = diagnose(str(root / REPORT), save=False)
    save_record(record, runs / "20260101-000000-abcdef")
    (runs / "20260101-000001-broken").mkdir(parents=True)
    (runs / "20260101-000001-broken" / "record.json").write_text("{not json", encoding="utf-8")

    data = call(root, "list_runs", {}).structured_content
    assert [r["id"] for r in data["runs"]] == ["20260101-000000-abcdef"] and len(data["unreadable"]) == 1
    assert data["runs"][0]["top_finding"].startswith("global-coalescing")
    for ref in (
        "20260101-000000-abcdef",
        data["runs"][0]["path"],
        ".perfagent/runs/20260101-000000-abcdef/record.json",
    ):
        read = call(root, "read_run", {"run": ref})
        assert not read.is_error, (ref, read.content)
        assert read.structured_content["summary"]["kernels"][0]["name"] == record.kernels[0].name
    assert _error(call(root, "read_run", {"run": "latest"}))["exit_code"] == 2  # the broken one is newest


def test_paths_outside_the_root_are_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.ncu-rep"
    shutil.copy(root / REPORT, outside)
    (root / "link.ncu-rep").symlink_to(outside)
    refused = [
        ("diagnose_report", {"target": str(outside)}),
        ("diagnose_report", {"target": "../outside.ncu-rep"}),
        ("diagnose_report", {"target": "link.ncu-rep"}),
        ("profile", {"target": str(outside)}),
        ("compare", {"before": REPORT, "after": str(outside)}),
        ("read_run", {"run": "/"}),
        ("list_runs", {"runs_dir": "/"}),
        ("verify", {"reference": PROBLEM, "candidate": str(outside)}),
        ("optimize", {"target": TRITON, "problem": "../outside.ncu-rep"}),
    ]
    spec = root / "escape.launch.toml"
    spec.write_text('source = "../outside.cu"\nkernel = "k"\ngrid = [1]\nblock = [1]\n', encoding="utf-8")
    (tmp_path / "outside.cu").write_text("__global__ void k() {}\n", encoding="utf-8")
    refused.append(("verify", {"reference": "escape.launch.toml"}))
    for tool, args in refused:
        error = _error(call(root, tool, args))
        assert error["kind"] == "OutsideRoot" and error["exit_code"] == 2, (tool, error)
        assert "outside the server's --root" in error["cause"] and error["next_step"]


def test_a_runs_folder_outside_the_root_is_refused_at_start(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(BadInput, match="outside --root"):
        build_server(root)
    monkeypatch.setenv("PERFAGENT_RUNS_DIR", "my-runs")  # relative: inside the root
    assert ProjectRoot(root).runs == root.resolve() / "my-runs"


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("diagnose_report", {}, "target: Field required"),
        ("diagnose_report", {"target": 3}, "target: Input should be a valid string"),
        ("list_runs", {"limit": -1}, "limit: Input should be greater than or equal to 1"),
        ("diagnose", {"target": SUITE, "profiler": "nsys"}, "profiler"),
        ("optimize", {"target": TRITON, "backend": "gpt"}, "backend"),
        ("diagnose_report", {"target": "missing.ncu-rep"}, "does not exist"),
        ("diagnose_report", {"target": PROBLEM}, "not a recorded report"),
        ("read_run", {"run": "kb/01_vector_add.py"}, "not a perfagent run record"),
        ("verify", {"reference": "missing.py"}, "does not exist"),
    ],
)
def test_bad_arguments_are_structured_errors(root: Path, tool: str, args: dict[str, Any], words: str) -> None:
    error = _error(call(root, tool, args))
    assert error["exit_code"] == 2 and words in error["cause"], error
    assert error["next_step"] and "--" not in error["next_step"]


def test_cli_phrased_hints_become_tool_arguments() -> None:
    assert (
        as_tool_call_hint("raise --timeout or pass --max-candidates 3")
        == "raise timeout_s or pass max_candidates 3"
    )
    assert as_tool_call_hint("run `perfagent verify A B` first") == "run the verify tool first"


def test_an_interrupted_run_folder_is_left_consistent(tmp_path: Path) -> None:
    empty = tmp_path / "runs/20260101-000000-000000"
    mark_interrupted(empty, "k.cu")
    assert load_record(empty).notes == [INTERRUPTED]
    done = tmp_path / "runs/20260101-000001-000000"
    record = diagnose(str(REPO / "examples/reports" / "01_transpose_naive.ncu-rep"), save=False)
    save_record(record, done)
    mark_interrupted(done, "k.cu")  # a finished record is never overwritten
    assert load_record(done) == record


def test_stdio_subprocess_client_speaks_only_the_protocol_on_stdout(root: Path) -> None:
    """A real `perfagent mcp` child process: initialise, list, call a tool that runs the ncu_report
    reader in a grandchild process (whose output must not reach the protocol stream)."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "perfagent", "mcp", "--root", str(root)], env=env
    )

    async def go() -> tuple[set[str], Any, Any]:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            diag = await client.call_tool("diagnose_report", {"target": REPORT})
            bad = await client.call_tool("diagnose_report", {"target": "missing.ncu-rep"})
            return names, diag, bad

    names, diag, bad = anyio.run(go)
    assert names == EXPECTED_TOOLS
    assert not diag.is_error and diag.structured_content["summary"]["kernels"]
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
