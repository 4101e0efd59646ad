"""The suite's worker process: ``python -m perfagent.suite.worker REQUEST.json RESULT.json``.

One process per entry, started by an executor with ``CUDA_VISIBLE_DEVICES`` pinned to one GPU and
its own build caches: a CUDA error, a crash or a hang is contained to this process, which is simply
not reused (the executor starts a fresh one for the next entry and records the cause).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import Field

from perfagent.suite.entry_runner import run_entry
from perfagent.suite.models import SuiteSettings
from profilers.model import Frozen


class WorkerRequest(Frozen):
    """What the executor hands a worker (written as JSON next to the result path)."""

    entry: dict[str, object]
    """A ``SuiteEntry`` dump."""
    settings: SuiteSettings
    out: str
    """The suite's output folder (absolute): optimize run folders go under it."""
    env: dict[str, str] = Field(default_factory=dict)
    """Informational: the environment the executor pinned (recorded, not applied here)."""


def main(argv: list[str]) -> int:
    """Read the request, run the entry, write its ``EntryResult`` JSON; exit 0 when written."""
    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = WorkerRequest.model_validate_json(request_path.read_text(encoding="utf-8"))
    result = run_entry(request.entry, request.settings, Path(request.out))
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(result.model_dump_json(), encoding="utf-8")
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
