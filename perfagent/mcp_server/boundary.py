"""The MCP server's project root: every path an agent passes must resolve (symlinks too) inside it.

``perfagent mcp --root DIR`` is a boundary, not a convenience: an agent may read reports and runs, and
have perfagent import and run Python files, only under DIR. Runs the server makes are saved under
``DIR/.perfagent/runs`` (or ``$PERFAGENT_RUNS_DIR`` when that lies inside DIR), and the tools that read
runs look there, so a run id or ``"latest"`` finds what ``diagnose``/``optimize`` saved.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from datetime import datetime
from pathlib import Path

from perfagent.session import RECORD_FILE, RUNS_ROOT_ENV, runs_root
from profilers.core_errors import BadInput


class OutsideRoot(BadInput):
    """A path argument that resolves outside the server's ``--root``."""


LATEST = "latest"
"""The run id that names the newest saved run."""


class ProjectRoot:
    """The folder an MCP session may touch, and its runs folder."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve(strict=True)
        runs = runs_root()
        runs = runs if runs.is_absolute() else self.root / runs
        self.runs = Path(os.path.realpath(runs))
        if not self.runs.is_relative_to(self.root):
            raise BadInput(
                f"${RUNS_ROOT_ENV}={runs} lies outside --root {self.root}",
                hint=f"unset {RUNS_ROOT_ENV} or point it inside the project",
            )

    def path(self, value: str, what: str = "path") -> Path:
        """``value`` (relative to the root, or absolute) resolved through symlinks; must exist inside."""
        raw = Path(value).expanduser()
        resolved = Path(os.path.realpath(raw if raw.is_absolute() else self.root / raw))
        self._inside(resolved, value, what)
        if not resolved.exists():
            raise BadInput(
                f"{what} {value} does not exist (looked for {resolved})",
                hint="call list_targets to see the reports, runs and kernels under the root",
            )
        if resolved.suffix == ".toml":
            self._spec_source_inside(resolved, value)
        return resolved

    def optional(self, value: str | None, what: str) -> Path | None:
        """``path(value)``, or None when no value was given."""
        return self.path(value, what) if value else None

    def folder(self, value: str | None, what: str) -> Path:
        """A folder inside the root (need not exist yet); default: the runs folder."""
        if not value:
            return self.runs
        raw = Path(value).expanduser()
        resolved = Path(os.path.realpath(raw if raw.is_absolute() else self.root / raw))
        self._inside(resolved, value, what)
        return resolved

    def run(self, value: str) -> Path:
        """A saved run: its id (folder name under the runs folder), ``"latest"``, or a path."""
        if value == LATEST:
            newest = self.saved_runs()[:1]
            if not newest:
                raise BadInput(
                    f"no saved run under {self.runs}",
                    hint="call diagnose or optimize first; they save runs here",
                )
            return newest[0]
        by_id = self.runs / value
        if "/" not in value and (by_id / RECORD_FILE).is_file():
            return by_id
        return self.path(value, "run")

    def saved_runs(self, base: Path | None = None) -> list[Path]:
        """Run folders (those holding a record.json) under ``base`` (default: the runs folder), newest first."""
        folder = base or self.runs
        if not folder.is_dir():
            return []
        return sorted((p for p in folder.iterdir() if (p / RECORD_FILE).is_file()), reverse=True)

    def fresh_run(self) -> Path:
        """A new run folder's path under the runs folder (not created: a failed run leaves nothing)."""
        return self.runs / (datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3))

    def _spec_source_inside(self, spec: Path, value: str) -> None:
        """A launch spec's ``source`` is what gets compiled and run: it must lie inside the root too."""
        try:
            source = tomllib.loads(spec.read_text(encoding="utf-8")).get("source")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return  # not a readable spec: the workload layer says what is wrong with it
        if isinstance(source, str):
            self._inside(
                Path(os.path.realpath(spec.parent / source)), f"{source} (the source of {value})", "path"
            )

    def _inside(self, resolved: Path, value: str, what: str) -> None:
        if not resolved.is_relative_to(self.root):
            raise OutsideRoot(
                f"{what} {value} resolves to {resolved}, outside the server's --root {self.root}",
                hint="pass a path inside the project root (list_targets shows what is there)",
            )
