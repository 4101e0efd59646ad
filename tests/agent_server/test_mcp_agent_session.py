"""The six everyday agent tasks through the official SDK client and a real ``perfagent mcp`` subprocess.

diagnose a report, list kernels, explain the suggested transform, verify a candidate, compare two runs
with the verdict, and optimize with cancellation; all on CPU, over stdio, with reply sizes asserted
under the 25K-token cap of common agent hosts. Cancellation waits on events (a progress message, then
the processes' pidfds), never on sleeps.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'perfagent[mcp]')")

from mcp import Client, StdioServerParameters  # noqa: E402

from agent_server.fake_jobs import STARTED  # noqa: E402
from perfagent.api import diagnose  # noqa: E402
from perfagent.mcp_server.summaries import reply_tokens  # noqa: E402
from perfagent.session import save_record  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOKEN_CAP = 25_000
"""The default reply cap (tokens) of a widely used agent host."""


def _project(tmp_path: Path) -> Path:
    """A project root with the largest bundled report, two small ones and a KernelBench pair."""
    root = tmp_path / "project"
    (root / "reports").mkdir(parents=True)
    (root / "kb").mkdir()
    for name in ("suite.ncu-rep", "01_transpose_naive.ncu-rep", "02_transpose_bank_conflicts.ncu-rep"):
        shutil.copy(REPO / "examples/reports" / name, root / "reports" / name)
    for name in ("01_vector_add.py", "01_vector_add_triton.py"):
        shutil.copy(REPO / "examples/kernelbench" / name, root / "kb" / name)
    return root


def _params(args: list[str], cwd: Path) -> StdioServerParameters:
    path = os.pathsep.join([str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("PERFAGENT_RUNS_DIR", None)
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(cwd))


def _size(result: Any) -> int:
    """The reply's tokens: its text blocks and its structured content, as the host receives them."""
    texts = [block.text for block in result.content if hasattr(block, "text")]
    return reply_tokens([texts, result.structured_content])


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert _size(result) < TOKEN_CAP, _size(result)
    data: dict[str, Any] = result.structured_content
    return data


async def _five_tasks(root: Path, progress: list[tuple[float, float | None]]) -> dict[str, Any]:
    """One stdio session: the calls of tasks 1-5, their replies by name."""

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        progress.append((value, total))

    async with Client(_params(["-m", "perfagent", "mcp", "--root", str(root)], root)) as c:
        replies = {
            "diagnose": await c.call_tool("diagnose_report", {"target": "reports/suite.ncu-rep"}),
            "targets": await c.call_tool("list_targets", {}),
            "profile": await c.call_tool("profile", {"target": "reports/suite.ncu-rep", "top_k": 5}),
            "compare": await c.call_tool("compare", {"before": "20260101-000000-aaaaaa", "after": "latest"}),
            "pair": await c.call_tool(
                "compare",
                {
                    "before": "reports/suite.ncu-rep",
                    "after": "reports/suite.ncu-rep",
                    "before_kernel": "transpose_naive",
                    "after_kernel": "transpose_tiled",
                },
            ),
            "verify": await c.call_tool(
                "verify",
                {
                    "reference": "kb/01_vector_add.py",
                    "candidate": "kb/01_vector_add_triton.py",
                    "device": "cpu",
                    "seeds": 1,
                },
                progress_callback=on_progress,
            ),
        }
        transform = replies["diagnose"].structured_content["summary"]["kernels"][0]["transforms"][0]
        replies["explain"] = await c.call_tool("explain_transform", {"transform_id": transform})
        return replies


def test_five_everyday_tasks_over_stdio(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    root = _project(tmp_path)
    runs = root / ".perfagent" / "runs"
    for run_id, report in (("20260101-000000-aaaaaa", "02"), ("20260101-000001-bbbbbb", "01")):
        name = "02_transpose_bank_conflicts" if report == "02" else "01_transpose_naive"
        save_record(diagnose(str(root / "reports" / f"{name}.ncu-rep"), save=False), runs / run_id)
    progress: list[tuple[float, float | None]] = []
    replies = anyio.run(_five_tasks, root, progress)
    summary = _ok(replies["diagnose"])["summary"]
    assert summary["kernels_total"] == len(summary["kernels"]) >= 10 and summary["run"] is None
    first = summary["kernels"][0]
    assert (
        first["duration_s"] > 0 and first["top_finding"] and first["transforms"] and "share_of_total" in first
    )
    assert "read_run" not in summary["full_record"] and "detail=" in summary["full_record"]

    targets = _ok(replies["targets"])
    assert set(targets["reports"]) >= {"reports/suite.ncu-rep", "reports/01_transpose_naive.ncu-rep"}
    assert targets["kernelbench_problems"] == ["kb/01_vector_add.py"] and targets["candidates"] == [
        "kb/01_vector_add_triton.py"
    ]
    assert {r["id"] for r in targets["runs"]} == {"20260101-000000-aaaaaa", "20260101-000001-bbbbbb"}
    kernels = _ok(replies["profile"])["summary"]
    assert len(kernels["kernels"]) == 5 and kernels["kernels_total"] == summary["kernels_total"]

    verdict = _ok(replies["compare"])
    deltas, noise = verdict["comparison"]["kernels"], verdict["comparison"]["noise_pct"]
    slower = [k for k in deltas if k["change_pct"] is not None and k["change_pct"] > noise]
    assert verdict["gate"]["checked"] == len(deltas) >= 1
    assert slower, "the naive transpose is slower than the bank-conflict one: a regression"
    assert verdict["gate"]["passed"] is (not slower) and len(verdict["gate"]["regressions"]) == len(slower)
    pair = _ok(replies["pair"])["comparison"]
    assert [k["matched_by"] for k in pair["kernels"]] == ["position"] and not pair["only_before"]
    assert pair["total_before_s"] == pair["kernels"][0]["before_s"]  # totals over the matched pair only

    explained = _ok(replies["explain"])
    assert explained["id"] == first["transforms"][0] and explained["how_cuda"]
    checked = _ok(replies["verify"])
    assert checked["verdict"] == "pass" and checked["checks"]
    assert progress and all(total is not None and total > 0 for _, total in progress)


def _wait_gone(pid: int, timeout_s: float) -> bool:
    """Block until process ``pid`` has ended (its pidfd becomes readable), at most ``timeout_s``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout_s)
        return bool(readable)
    finally:
        os.close(fd)


def test_cancelled_optimize_ends_its_process_group_and_records_the_interruption(tmp_path: Path) -> None:
    root = _project(tmp_path)
    server = str(REPO / "tests/agent_server/fake_optimize_server.py")
    pids: dict[str, int] = {}

    async def session() -> dict[str, Any]:
        async with Client(_params([server, str(root)], root)) as client:
            started = anyio.Event()

            async def on_progress(_value: float, total: float | None, message: str | None) -> None:
                if message and message.startswith(STARTED):
                    assert total == 60.0  # the job's budget, in every notification
                    pids.update(json.loads(message[len(STARTED) :]))
                    started.set()

            async with anyio.create_task_group() as tasks:

                async def optimize() -> None:
                    args = {
                        "target": "kb/01_vector_add_triton.py",
                        "problem": "kb/01_vector_add.py",
                        "budget_s": 60,
                    }
                    await client.call_tool("optimize", args, progress_callback=on_progress)

                tasks.start_soon(optimize)
                with anyio.fail_after(60):
                    await started.wait()
                tasks.cancel_scope.cancel()
            gone = await anyio.to_thread.run_sync(lambda: all(_wait_gone(p, 30) for p in pids.values()))
            assert gone, f"job processes still alive after cancel: {pids}"
            read = await client.call_tool("read_run", {"run": "latest"})
            listed = await client.call_tool("list_runs", {})
            return {"read": read, "listed": listed}

    replies = anyio.run(session)
    assert set(pids) == {"worker", "child"}
    summary = _ok(replies["read"])["summary"]
    assert summary["kind"] == "optimize" and "interrupted" in " ".join(summary["notes"])
    assert Path(summary["run"]).is_relative_to(root.resolve()) and Path(summary["run"]).is_absolute()
    assert _ok(replies["listed"])["runs"][0]["id"] == summary["id"]
