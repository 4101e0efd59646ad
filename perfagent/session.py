"""Run folders: where a run's record, reports and logs live, and how they are reloaded."""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from perfagent.errors import BadInput
from perfagent.models import RunRecord

RUNS_ROOT_ENV = "PERFAGENT_RUNS_DIR"
RECORD_FILE = "record.json"


def runs_root() -> Path:
    """Default root for run folders: $PERFAGENT_RUNS_DIR or ./.perfagent/runs."""
    return Path(os.environ.get(RUNS_ROOT_ENV, ".perfagent/runs"))


def new_run_dir(root: Path | None = None) -> Path:
    """Create and return a fresh run folder ``<root>/<timestamp>-<random>``."""
    base = root or runs_root()
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    path = base / run_id
    path.mkdir(parents=True, exist_ok=False)
    return path


def save_record(record: RunRecord, run_dir: Path) -> Path:
    """Write ``record`` as ``run_dir/record.json`` (written to a temp file first, then renamed)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / RECORD_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def load_record(path: Path) -> RunRecord:
    """Load a record from a run folder or a record JSON file.

    Raises:
        BadInput: missing file, or JSON that is not a perfagent run record.
    """
    file = path / RECORD_FILE if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"cannot read run record {file}: {exc.strerror}", hint="pass a run folder or its record.json"
        ) from exc
    try:
        return RunRecord.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise BadInput(
            f"{file} is not a perfagent run record ({where}: {first.get('msg')})",
            hint="pass a record.json written by perfagent (or a report file such as .ncu-rep)",
        ) from None
