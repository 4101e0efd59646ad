"""`perfagent tui` as a CLI command: help text, bad input as one line with exit code 2, lazy import of tui."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tui_support import REPO

from perfagent.cli import build_parser, main


def test_help_line_is_the_docstring() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    helps = {c.dest: c.help for c in sub._choices_actions}  # type: ignore[attr-defined]
    assert helps["tui"] == "Open the terminal UI on a target, report or saved run."


def test_tui_takes_diagnose_profiling_options() -> None:
    args = build_parser().parse_args(["tui", "x.ncu-rep", "--kernel", "gemm", "--profiler", "ncu", "--full"])
    assert (args.target, args.kernel, args.profiler, args.full) == ("x.ncu-rep", "gemm", "ncu", True)


@pytest.mark.parametrize(
    ("argv", "cause"),
    [
        (["tui", "does/not/exist.ncu-rep"], "does not exist"),
        (["tui"], "no target given"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(
    argv: list[str], cause: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perfagent: ") and cause in err[0]


def test_unsupported_file_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("hello")
    assert main(["tui", str(odd)]) == 2
    assert "don't know how to profile" in capsys.readouterr().err


def test_perfagent_never_imports_tui_at_module_level() -> None:
    pattern = re.compile(r"^\s*(from\s+tui(\.|\s)|import\s+tui\b)", re.MULTILINE)
    offenders = [
        str(p.relative_to(REPO)) for p in (REPO / "perfagent").rglob("*.py") if pattern.search(p.read_text())
    ]
    assert offenders == []


def test_cli_does_not_load_textual_until_tui_runs() -> None:
    code = "import sys, perfagent.cli as c; c.build_parser(); print(any(m.startswith(('tui', 'textual')) for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "False"
