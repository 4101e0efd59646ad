"""How a tool body runs: quick reads in a thread, long work in a cancellable job process.

Both turn every failure into the structured error (``replies``) and forward progress as MCP
progress notifications; neither lets a traceback reach the agent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel

from perfagent.mcp_server.jobs import Job, JobFailed, Reporter, run_job
from perfagent.mcp_server.replies import as_tool_call_hint, error_result, exception_result, ok_result

log = logging.getLogger(__name__)

ProgressSink = Callable[[str], None]


def reporter(ctx: Context | None) -> Reporter:
    """``ctx.report_progress`` that never fails the tool (a client may stop listening)."""

    async def report(progress: float, total: float | None, message: str) -> None:
        log.info("%s", message)
        if ctx is None:
            return
        try:
            await ctx.report_progress(progress, total, message)
        except Exception:
            log.debug("progress notification dropped", exc_info=True)

    return report


async def in_thread(ctx: Context | None, work: Callable[[ProgressSink], BaseModel]) -> CallToolResult:
    """Run a quick ``work`` (reading a report, a record) in a thread; its lines become progress."""
    report = reporter(ctx)
    step = 0

    def progress(line: str) -> None:
        nonlocal step
        step += 1
        anyio.from_thread.run(report, step, None, line)

    try:
        result = await anyio.to_thread.run_sync(work, progress)
    except Exception as exc:  # every failure becomes a structured tool error, never a traceback
        log.debug("tool failed", exc_info=True)
        return exception_result(exc)
    return ok_result(result)


async def in_job(
    ctx: Context | None, make_job: Callable[[], Job], reply: Callable[[dict[str, Any]], BaseModel]
) -> CallToolResult:
    """Run a long call as a job process (``jobs.run_job``); ``reply`` turns its JSON result into the reply.

    A cancelled call propagates the cancellation after the job's process group was ended.
    """
    try:
        job = make_job()
        data = await run_job(job, reporter(ctx))
        return ok_result(reply(data))
    except JobFailed as exc:
        return error_result(exc.message, as_tool_call_hint(exc.hint), int(exc.exit_code), exc.kind)
    except Exception as exc:
        log.debug("tool failed", exc_info=True)
        return exception_result(exc)
