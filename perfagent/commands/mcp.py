"""``perfagent mcp``: serve perfagent's tools to coding agents over the Model Context Protocol."""

from __future__ import annotations

import argparse
from pathlib import Path

from profilers.core_errors import BadInput


class McpCommand:
    """Serve diagnose, verify, bench, optimize, compare ... as MCP tools over stdio (for coding agents)."""

    name = "mcp"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--root",
            type=Path,
            default=None,
            help="the project folder: every path in a tool call must lie inside it, and runs are saved under it "
            "(default: the current directory)",
        )

    def run(self, args: argparse.Namespace) -> int:
        try:
            from perfagent.mcp_server.server import serve_stdio  # the optional extra, imported only here
        except ModuleNotFoundError as exc:
            if exc.name is None or not exc.name.startswith("mcp"):
                raise
            raise BadInput(
                "the MCP server needs the official MCP SDK, which is not installed",
                hint='pip install "perfagent[mcp]"',
            ) from exc
        root: Path | None = args.root
        if root is not None and not root.is_dir():
            raise BadInput(f"--root {root} is not a folder", hint="pass the project folder")
        serve_stdio(root)
        return 0
