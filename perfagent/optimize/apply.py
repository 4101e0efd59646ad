"""Writing an accepted candidate into the user's files: the one apply path.

``perfagent optimize --apply``, ``perfagent.optimize(apply=True)`` and the TUI's accept all call
``apply_rewrite`` (through ``apply_candidate`` for a saved ``CandidateOutcome``), so they back up,
write and warn the same way:

- **Backups are never overwritten and never stale.** Before the user's file is written it is copied
  to ``<file>.orig``; when that exists (an earlier apply), to the first free ``<file>.orig.1``,
  ``<file>.orig.2``, ... The ``AppliedChange`` names the backup this write made and says when an
  earlier one was already there. The file itself is written through a temporary file and a rename.
- **A win measured with other ``-D`` macros or launch geometry says so, and brings them along.** A
  launch-spec kernel's candidate may have been compiled with macros (``defines``) or launched with a
  grid / block / dynamic shared memory (``launch``) that the user's spec does not hold: the rewritten
  file alone would not run the way it was measured. Apply writes ``<stem>.launch.toml`` beside the
  source (backed up the same way when it exists): the user's launch contract with the candidate's
  settings folded in. perfagent looks for ``<stem>.launch.toml`` first, so the next ``perfagent
  verify/bench/optimize <file>`` launches it as measured. Without the candidate's spec copy the
  settings are still named in the notes, with what to set by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfagent.optimize.measure import CANDIDATE_CU, LAUNCH_KEYS, SPEC_COPY
from perfagent.records import AppliedChange, CandidateOutcome
from perfagent.workloads.launch_spec import dump_launch_spec, load_launch_spec
from profilers.core_errors import BadInput


def settings_text(defines: Mapping[str, int], launch: Mapping[str, Any]) -> str:
    """'-DTILE=64, block = [64, 4]': the macros and launch geometry a candidate was measured with ('' if none)."""
    parts = [f"-D{k}={v}" for k, v in sorted(defines.items())]
    parts += [f"{k} = {json.dumps(launch[k])}" for k in LAUNCH_KEYS if launch.get(k) is not None]
    return ", ".join(parts)


def needs_settings_note(defines: Mapping[str, int], launch: Mapping[str, Any], spec_name: str) -> str | None:
    """The sentence every view shows for a win that depends on macros or launch geometry (None: it does not)."""
    text = settings_text(defines, launch)
    if not text:
        return None
    return (
        f"this win was measured with {text}, which the source alone does not carry: applying it writes "
        f"them into {spec_name} beside the source"
    )


def next_backup(path: Path) -> Path:
    """``<file>.orig``, or the first free ``<file>.orig.N`` when earlier backups exist."""
    backup = path.with_name(path.name + ".orig")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.orig.{n}")
        n += 1
    return backup


def write_with_backup(path: Path, text: str) -> Path | None:
    """Copy ``path`` to a fresh backup (when it exists), then write ``text`` over it atomically.

    Returns:
        The backup written, or None when ``path`` did not exist.

    Raises:
        BadInput: the file or its folder cannot be written.
    """
    backup = next_backup(path) if path.exists() else None
    tmp = path.with_name(f".{path.name}.perfagent-tmp")
    try:
        if backup is not None:
            backup.write_bytes(path.read_bytes())
            os.chmod(backup, path.stat().st_mode & 0o7777)
        tmp.write_text(text, encoding="utf-8")
        if backup is not None:
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BadInput(
            f"cannot write {path}: {exc.strerror or exc}",
            hint="check the file's and its folder's permissions",
        ) from exc
    return backup


def spec_for_applied(file: Path, spec_copy: Path) -> dict[str, Any]:
    """The launch spec for ``file`` once it holds the candidate: the candidate's spec copy, its variant folded in.

    Variants of other files in an existing ``<stem>.launch.toml`` are kept (it may serve them too).

    Raises:
        BadInput: the spec copy is unreadable.
    """
    spec = load_launch_spec(spec_copy)
    data = spec.model_dump(mode="json", exclude_none=True)
    variant = data.pop("variants", {}).get(CANDIDATE_CU) or {}
    for key in ("kernel", *LAUNCH_KEYS):
        if variant.get(key) is not None:
            data[key] = variant[key]
    if variant.get("defines"):
        data["defines"] = {**data.get("defines", {}), **variant["defines"]}
    data["source"] = file.name
    target = file.with_name(file.stem + ".launch.toml")
    if target.is_file():
        try:
            others = load_launch_spec(target).model_dump(mode="json", exclude_none=True).get("variants", {})
        except BadInput:
            others = {}
        kept = {k: v for k, v in others.items() if k != file.name}
        if kept:
            data["variants"] = kept
    return data


def apply_rewrite(
    file: Path,
    source: str,
    *,
    candidate: str,
    defines: Mapping[str, int] | None = None,
    launch: Mapping[str, Any] | None = None,
    spec_copy: Path | None = None,
) -> AppliedChange:
    """Write ``source`` over ``file`` (after a fresh backup) and, when the win needs them, its launch settings.

    Args:
        file: the user's file.
        source: the candidate's full source.
        candidate: the candidate's id (for the record).
        defines: ``-D`` macros the candidate was measured with.
        launch: grid / block / shared_mem the candidate was launched with.
        spec_copy: the candidate's own launch spec (``<candidate folder>/launch.toml``), the base of the
            spec written beside ``file``.

    Raises:
        BadInput: a file cannot be written, or the candidate's spec copy is unreadable.
    """
    file = Path(file).absolute()
    defines, launch = dict(defines or {}), dict(launch or {})
    spec_target = file.with_name(file.stem + ".launch.toml")
    spec_data: dict[str, Any] | None = None
    settings = settings_text(defines, launch)
    if settings and spec_copy is not None and spec_copy.is_file():
        spec_data = spec_for_applied(file, spec_copy)  # before any write: a bad copy must change nothing
    earlier = file.with_name(file.name + ".orig").exists()
    backup = write_with_backup(file, source)
    assert backup is not None or not file.exists()
    notes: list[str] = []
    if earlier:
        notes.append(
            f"{file.name}.orig already held an earlier original: this write's backup is {backup.name if backup else '-'}"
        )
    spec_written, spec_backup = _write_spec(file, spec_target, spec_data, candidate, settings, notes)
    return AppliedChange(
        path=str(file),
        backup=str(backup) if backup else "",
        candidate=candidate,
        notes=notes,
        spec=str(spec_written) if spec_written else None,
        spec_backup=str(spec_backup) if spec_backup else None,
    )


def _write_spec(
    file: Path,
    spec_target: Path,
    spec_data: dict[str, Any] | None,
    candidate: str,
    settings: str,
    notes: list[str],
) -> tuple[Path | None, Path | None]:
    """Write the launch spec the win needs beside ``file`` (said in ``notes``); (written, its backup)."""
    if spec_data is None:
        if settings:
            notes.append(
                f"the win needs {settings}, which no spec holds yet: set them in {file.name}'s launch spec "
                "(its [defines] / grid / block) or it will not run the way it was measured"
            )
        return None, None
    header = f"# perfagent: launch spec for {file.name} as candidate {candidate} was measured ({settings})\n"
    spec_backup = write_with_backup(spec_target, header + dump_launch_spec(spec_data))
    load_launch_spec(spec_target)  # it must read back
    notes.append(
        f"the win needs {settings}: written into {spec_target.name}"
        + (f" (previous one kept as {spec_backup.name})" if spec_backup else " (new file)")
        + f"; perfagent launches {file.name} with it from now on"
    )
    return spec_target, spec_backup


def apply_candidate(best: CandidateOutcome) -> AppliedChange:
    """``apply_rewrite`` for a candidate of a run record (its source and spec copy read from the run folder).

    Raises:
        BadInput: the candidate's source is gone from the run folder, or a write failed.
    """
    source = best.source
    if source is None:
        raise BadInput(
            f"the source of {best.id} is missing from the run folder", hint="re-run perfagent optimize"
        )
    folder = Path(best.source_path).parent if best.source_path else None
    return apply_rewrite(
        Path(best.file),
        source,
        candidate=best.id,
        defines=best.defines,
        launch=best.launch,
        spec_copy=folder / SPEC_COPY if folder is not None else None,
    )
