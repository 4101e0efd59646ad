"""``perfagent mcp`` whose optimize tool runs ``fake_jobs.blocking_optimize``: the real server and stdio
transport, only the job function swapped (``build_server(jobs=...)``). Argument: the project root."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from perfagent.mcp_server.long_tools import JobFunctions
from perfagent.mcp_server.server import build_server

if __name__ == "__main__":
    fake = JobFunctions(optimize="agent_server.fake_jobs:blocking_optimize")
    anyio.run(build_server(Path(sys.argv[1]), jobs=fake).run_stdio_async)
