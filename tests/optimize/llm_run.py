"""One llm-backed run of the transpose example against the loopback server, and the prompts it received.

Shared by the tests that read what a run told the model (``test_loop_inputs``: one machine,
``test_prompt_hardware``: ``--propose-only``): the model answers once, with the padded tile.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

from perfagent.llm_client import LLMConfig
from perfagent.records import RunRecord
from tests.optimize.helpers import TRANSPOSE, copy_example

SLOW = (TRANSPOSE / "slow.cu").read_text()
PADDED = SLOW.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]")


def padded_by_the_model(
    run: Callable[..., RunRecord], tmp_path: Path, **options: object
) -> tuple[RunRecord, list[str], list[str]]:
    """``run`` (``optimize`` or ``propose``) on a copy of the transpose example, one smem-padding
    iteration with the llm backend; the record, the prompts the server answered and the progress said."""
    folder = copy_example(TRANSPOSE, tmp_path)
    said: list[str] = []
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(PADDED)))
        config = LLMConfig.from_env(
            base_url=server.base_url, model=MODEL, api_key="sk-test", env={}, timeout_s=10.0, max_retries=0
        )
        record = run(
            folder / "slow.cu",
            backend="llm",
            transform="smem-padding",
            iterations=1,
            out=tmp_path / "run",
            llm_config=config,
            progress=lambda e: said.append(e.message),
            **options,
        )
        prompts = [r.prompt_text for r in server.completions if r.answered == 200]
    return record, prompts, said
