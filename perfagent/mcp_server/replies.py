"""Tool results: a model as structured content, or the structured error the docs promise.

Every failure an agent sees has the same shape, ``{cause, next_step, exit_code, kind}``, whether it
came from perfagent (bad target, profiler missing), from the argument schema (a missing or wrongly
typed argument) or from the root boundary. Next steps name tool calls and arguments, not CLI flags:
the agent cannot type ``--timeout``, it can pass ``timeout_s``.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError

from profilers.core_errors import ExitCode, PerfAgentError, exit_code_for, one_line

BUG_HINT = "this is a perfagent bug: retry once, then report it with the tool's arguments"

_CLI_COMMAND = re.compile(r"`?perfagent (diagnose|profile|verify|bench|optimize|compare|report)\b([^`]*)`?")
_CLI_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
_FLAG_TO_ARGUMENT = {
    "timeout": "timeout_s",
    "out": "(the server picks the run folder)",
    "transform": "transform",
}


def as_tool_call_hint(hint: str) -> str:
    """A CLI-phrased next step rewritten for an agent: ``perfagent verify X`` -> ``the verify tool``,
    ``--max-candidates`` -> ``max_candidates``."""
    text = _CLI_COMMAND.sub(lambda m: f"the {m.group(1)} tool", hint)
    return _CLI_FLAG.sub(lambda m: _FLAG_TO_ARGUMENT.get(m.group(1), m.group(1).replace("-", "_")), text)


def error_result(cause: str, next_step: str, exit_code: int, kind: str) -> CallToolResult:
    """An ``isError`` result with ``structuredContent.error`` and the same words as text."""
    error = {"cause": cause, "next_step": next_step, "exit_code": exit_code, "kind": kind}
    text = f"{cause} — {next_step}" if next_step else cause
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={"error": error}, is_error=True
    )


def exception_result(exc: BaseException) -> CallToolResult:
    """The structured error for an exception raised by a tool (the CLI's exit code for it)."""
    if isinstance(exc, PerfAgentError):
        return error_result(exc.message, as_tool_call_hint(exc.hint), exit_code_for(exc), type(exc).__name__)
    return error_result(one_line(exc), BUG_HINT, exit_code_for(exc), type(exc).__name__)


def validation_result(tool: str, exc: ValidationError, schema: dict[str, Any] | None) -> CallToolResult:
    """A missing or wrongly typed argument, as bad input (exit code 2) naming the argument."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg')}" for e in exc.errors()
    )
    props = (schema or {}).get("properties", {})
    described = props.get(where.split(".")[0], {}).get("description", "")
    hint = (
        f"fix {where}"
        + (f" ({described})" if described else "")
        + f"; the {tool} tool's input schema lists every argument"
    )
    return error_result(f"{tool}: invalid arguments: {problems}", hint, int(ExitCode.USAGE), "BadInput")


def ok_result(model: BaseModel) -> CallToolResult:
    """A model as structured content, and as compact JSON text for clients that read only text."""
    data = model.model_dump(mode="json", exclude_none=False)
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json(exclude_none=True))],
        structured_content=data,
    )
