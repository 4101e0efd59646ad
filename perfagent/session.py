"""Run folders: where a run's record, reports and logs live, and how they are reloaded."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from perfagent.records import RunRecord
from profilers.core_errors import BadInput

RUNS_ROOT_ENV = "PERFAGENT_RUNS_DIR"
RECORD_FILE = "record.json"


def runs_root() -> Path:
    """Default root for run folders: $PERFAGENT_RUNS_DIR or ./.perfagent/runs."""
    return Path(os.environ.get(RUNS_ROOT_ENV, ".perfagent/runs"))


def new_run_dir(root: Path | None = None) -> Path:
    """Create and return a fresh run folder ``<root>/<timestamp>-<random>``."""
    path = _fresh_run_path(root)
    path.mkdir(parents=True, exist_ok=False)
    return path


def _fresh_run_path(root: Path | None = None) -> Path:
    base = root or runs_root()
    return base / (datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3))


@contextmanager
def provisional_run_dir(run_dir: Path | None) -> Iterator[Path]:
    """A run folder (``run_dir``, else a new one) that does not outlive a failed run.

    When the body raises, the folders this call created are removed again — unless the error names a
    file inside them (e.g. ncu's log, which the message tells the user to read). A folder the caller
    passed in that already existed is never removed.
    """
    target = run_dir if run_dir is not None else _fresh_run_path()
    created = [p for p in (target, *target.parents) if not p.exists()]
    target.mkdir(parents=True, exist_ok=run_dir is not None)
    try:
        yield target
    except BaseException as exc:
        if created and str(created[-1]) not in str(exc) and str(target.absolute()) not in str(exc):
            shutil.rmtree(target, ignore_errors=True)
            for folder in created[1:]:  # parents this call made, innermost first, while empty
                try:
                    folder.rmdir()
                except OSError:
                    break
        raise


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
    except UnicodeDecodeError:
        raise BadInput(
            f"{file} is not a perfagent run record (binary, not JSON text)",
            hint="pass a run folder or its record.json (reports such as .ncu-rep: perfagent diagnose)",
        ) from None
    try:
        return RunRecord.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise BadInput(
            f"{file} is not a perfagent run record ({where + ': ' if where else ''}{first.get('msg')})",
            hint="pass a record.json written by perfagent (or a report file such as .ncu-rep)",
        ) from None
