"""The TUI's source pane as plain data: a kernel's source lines with their profile samples, the hottest
marked, and a sentence saying what is shown (no Textual; ``tui.widgets.source`` lays it out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfagent.records import RunRecord
from perfagent.render.units import fmt_count
from profilers.model import KernelDiagnosis

__all__ = ["SourceRow", "SourceView", "source_view"]


@dataclass(frozen=True)
class SourceRow:
    """One line of the source view."""

    line: int | None
    """Line number, or None for a file-header row."""
    text: str
    hot: bool
    samples: float | None
    share: float | None
    """Samples as a fraction of the hottest line's (0..1), for the heat bar."""
    note: str


@dataclass(frozen=True)
class SourceView:
    """The source pane: rows to show and a sentence saying what they are."""

    caption: str
    rows: tuple[SourceRow, ...]
    first_hot: int | None
    """Index into ``rows`` of the hottest line (to scroll to), or None."""


def _code(file: str, bases: Sequence[Path], read: Callable[[Path], list[str] | None]) -> list[str] | None:
    """The lines of ``file`` (as given when absolute, else under each base in turn), or None."""
    path = Path(file)
    for candidate in [path] if path.is_absolute() else [base / path for base in bases]:
        lines = read(candidate)
        if lines is not None:
            return lines
    return None


def _read_lines(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


def source_view(
    record: RunRecord,
    index: int,
    *,
    context: int = 3,
    read: Callable[[Path], list[str] | None] = _read_lines,
    bases: Sequence[Path] | None = None,
) -> SourceView:
    """The kernel's hot source lines, with surrounding code when the file can be read here.

    The record carries the lines the profiler attributed samples to (kernel-level and per finding). When the
    file is found (as given, or next to the record's target), ``context`` lines around each hot line are shown
    from it; otherwise only the recorded lines.

    Args:
        record: the run.
        index: the kernel.
        context: lines of code shown before and after each hot line.
        read: reads a file's lines (None when unreadable); injectable for tests.
        bases: folders to resolve relative file names against (default: the target's folder, then cwd).
    """
    marked = _marked_lines(record.kernels[index])
    if not marked:
        return SourceView(
            caption="No source-level data in this report. Build with -lineinfo and profile with "
            "--source-counters (ncu --import-source yes) to see hot lines here.",
            rows=(),
            first_hot=None,
        )
    if bases is None:
        bases = [Path(record.target).parent, Path.cwd()]
    top = max((s for _, s, _ in marked.values() if s is not None), default=None)
    hottest = max(marked, key=lambda k: marked[k][1] or 0.0)
    rows: list[SourceRow] = []
    first_hot: int | None = None
    shown_files = 0
    missing = 0
    for file in dict.fromkeys(f for f, _ in marked):
        code = _code(file, bases, read)
        missing += code is None
        file_rows, hot_at = _file_rows(file, code, marked, context, top, hottest)
        if hot_at is not None:
            first_hot = len(rows) + hot_at
        rows += file_rows
        shown_files += 1
    caption = _source_caption(len(marked), shown_files, top, missing)
    return SourceView(caption=caption, rows=tuple(rows), first_hot=first_hot)


Marked = dict[tuple[str, int], tuple[str | None, float | None, str]]
"""(file, line) -> (recorded text, samples, note) of every hot line."""


def _file_rows(
    file: str,
    code: list[str] | None,
    marked: Marked,
    context: int,
    top: float | None,
    hottest: tuple[str, int],
) -> tuple[list[SourceRow], int | None]:
    """One file's rows: its name, then its hot lines with ``context`` lines of ``code`` (None: not
    readable here, the recorded lines only) around each, a gap marker between runs; and the row of
    ``hottest`` when it is in this file."""
    hot_lines = sorted(line for f, line in marked if f == file)
    rows = [SourceRow(None, file, False, None, None, "")]
    hot_at: int | None = None
    wanted = sorted(
        {
            n
            for h in hot_lines
            for n in range(h - context, h + context + 1)
            if code is not None and 1 <= n <= len(code)
        }
        | set(hot_lines)
    )
    previous = None
    for n in wanted:
        if previous is not None and n > previous + 1:
            rows.append(SourceRow(None, "⋮", False, None, None, ""))
        previous = n
        entry = marked.get((file, n))
        if entry is None:
            rows.append(SourceRow(n, code[n - 1] if code is not None else "", False, None, None, ""))
            continue
        text, samples, note = entry
        shown = code[n - 1] if code is not None and n <= len(code) else (text or "")
        share = samples / top if samples is not None and top else None
        if (file, n) == hottest:
            hot_at = len(rows)
        rows.append(SourceRow(n, shown, True, samples, share, note))
    return rows, hot_at


def _marked_lines(kd: KernelDiagnosis) -> Marked:
    """The kernel's hot lines: the profile's and its findings', merged per (file, line)."""
    marked: Marked = {}
    for sl in [*kd.profile.source_lines, *(s for f in kd.findings for s in f.source_lines)]:
        key = (sl.file, sl.line)
        old = marked.get(key)
        note = sl.note or (old[2] if old else "")
        samples = sl.samples if sl.samples is not None else (old[1] if old else None)
        marked[key] = (sl.text or (old[0] if old else None), samples, note)
    return marked


def _source_caption(total: int, shown_files: int, top: float | None, missing: int) -> str:
    caption = (
        f"{total} hot line{'s' if total != 1 else ''} in {shown_files} file{'s' if shown_files != 1 else ''}"
    )
    if top is not None:
        caption += f"; hottest has {fmt_count(top)} samples"
    if missing:
        caption += " · not found here, recorded lines only"
    return caption
