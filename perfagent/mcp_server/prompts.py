"""MCP prompts for the common workflows, and the resources (transform catalog, agent instructions).

Prompts spell out the tool calls of a workflow so that a host can offer it as a slash command; the
resources are never empty (the catalog ships with perfagent), so nothing is advertised empty.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from knowledge.transforms import catalog


def agent_instructions() -> str:
    """The instructions file shipped for agents (also the server's ``instructions``)."""
    return (
        resources.files("perfagent.mcp_server").joinpath("AGENT_INSTRUCTIONS.md").read_text(encoding="utf-8")
    )


def register_prompts(server: MCPServer) -> None:
    """The diagnose → explain → optimize workflows as prompts."""

    @server.prompt(title="Diagnose a kernel and explain the fix")
    def diagnose_and_explain(
        target: Annotated[
            str, Field(description="A report, saved run, .cu kernel or KernelBench file under the root.")
        ],
    ) -> str:
        """Diagnose a target, then explain the transform its top finding suggests."""
        return (
            f'1. Call diagnose_report(target="{target}") if it is a recorded report or saved run, else '
            f'diagnose(target="{target}").\n'
            "2. Read summary.kernels[0]: top_finding, estimated_speedup (an estimate), transforms.\n"
            "3. Call explain_transform(transform_id=<the first transform>) and say what it changes and which "
            "metric it should move. Do not claim a speed-up nothing measured."
        )

    @server.prompt(title="Rewrite a kernel and keep only measured wins")
    def fix_and_verify(
        reference: Annotated[
            str, Field(description="The original (the oracle): .cu kernel or KernelBench problem.")
        ],
        candidate: Annotated[str, Field(description="Your edited copy of it (never edit the original).")],
    ) -> str:
        """Verify and time an edited copy against the original, and decide whether to keep it."""
        return (
            f'1. Call verify(reference="{reference}", candidate="{candidate}"). On fail, read the failing '
            "check and fix the copy; never loosen a check.\n"
            f'2. Call bench(target="{reference}", candidate="{candidate}"). Keep the edit only when '
            "comparison.significant is true and the speed-up is above the noise threshold.\n"
            "3. Diagnose both and call compare(before=..., after=...): gate.passed must be true."
        )

    @server.prompt(title="Let perfagent's loop optimize a kernel")
    def optimize_kernel(
        target: Annotated[
            str, Field(description="A .cu kernel with a launch spec, a ModelNew file or a Triton script.")
        ],
    ) -> str:
        """Run perfagent's own optimize loop and read its outcome."""
        return (
            f'1. Call optimize(target="{target}") (backend="recipes" runs no model; cancel it to stop).\n'
            "2. Read summary.optimize: best, best_speedup, and each candidate's verdict and reason.\n"
            '3. For the best candidate\'s source call read_run(run=<summary.id>, detail="full").'
        )


def register_resources(server: MCPServer) -> None:
    """The transform catalog (index and entries) and the agent instructions."""

    @server.resource("perfagent://transforms", title="Transform catalog", mime_type="application/json")
    def transforms() -> str:
        """Every transform perfagent knows: id, title, what it fixes."""
        entries = [{"id": t.id, "title": t.title, "fixes": list(t.fixes)} for t in catalog().values()]
        return json.dumps(entries)

    @server.resource(
        "perfagent://transforms/{transform_id}", title="One transform", mime_type="application/json"
    )
    def transform(transform_id: str) -> str:
        """One catalog entry: what it changes, when it applies, the metric it should move, recipes."""
        known = catalog()
        if transform_id not in known:
            raise ValueError(f"unknown transform {transform_id!r}")
        return known[transform_id].model_dump_json()

    @server.resource(
        "perfagent://instructions", title="How to use perfagent as an agent", mime_type="text/markdown"
    )
    def instructions() -> str:
        """diagnose → edit a copy → verify → bench → keep, and the rules that come with it."""
        return agent_instructions()
