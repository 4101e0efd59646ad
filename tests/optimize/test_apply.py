"""The one apply path (``perfagent.optimize.apply``): backups, the launch spec a win needs, and the same
behaviour from the CLI/library (``--apply``) and the TUI's accept."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

import perfagent
from perfagent.optimize import rewriter_choice
from perfagent.optimize.apply import apply_rewrite
from perfagent.optimize.measure import candidate_spec
from perfagent.optimize.render import render_markdown, render_text
from perfagent.rewrite.base import Candidate, RewriteRequest, make_candidate
from perfagent.workloads.detect import find_spec_for, resolve
from perfagent.workloads.launch_resolve import resolve_launch
from perfagent.workloads.launch_spec import LaunchOverride, load_launch_spec
from profilers.core_errors import BadInput
from tests.optimize.conftest import PADDED
from tests.optimize.helpers import TRANSPOSE, ScriptedRewriter, copy_example
from tui.candidate_view import outcome_of, settings_note
from tui.optimize_bridge import OptimizeBridge

DEFINES = {"BLOCK_ROWS": 4}
LAUNCH = {"block": [32, 4]}


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _padded(folder: Path) -> str:
    return (
        (folder / "slow.cu").read_text().replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 1];")
    )


def _spec_copy(folder: Path, run: Path) -> Path:
    wl = resolve(folder / "slow.cu")
    return candidate_spec(wl, run / "candidates" / "01_smem-padding", dict(DEFINES), dict(LAUNCH))


def test_a_win_measured_with_macros_and_geometry_writes_its_launch_spec_beside_the_source(
    tmp_path: Path,
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    shared = (folder / "transpose.launch.toml").read_bytes()
    original = (folder / "slow.cu").read_text()
    spec_copy = _spec_copy(folder, tmp_path / "run")
    applied = apply_rewrite(
        folder / "slow.cu",
        _padded(folder),
        candidate="c1",
        defines=DEFINES,
        launch=LAUNCH,
        spec_copy=spec_copy,
    )
    written = folder / "slow.launch.toml"
    assert applied.spec == str(written) and applied.spec_backup is None
    assert (
        applied.backup == str(folder / "slow.cu.orig") and (folder / "slow.cu.orig").read_text() == original
    )
    spec = load_launch_spec(written)
    assert spec.source == "slow.cu" and spec.kernel == "transpose_smem_conflicts"
    assert spec.defines["BLOCK_ROWS"] == 4 and spec.defines["TILE_DIM"] == 32 and spec.block == [32, 4]
    # perfagent launches the applied file with it from now on; the shared spec is untouched.
    assert find_spec_for(folder / "slow.cu") == written.resolve()
    assert (folder / "transpose.launch.toml").read_bytes() == shared
    launch = resolve_launch(spec, written, source=folder / "slow.cu")
    assert launch.defines["BLOCK_ROWS"] == "4" and launch.block == (32, 4, 1)
    assert any(
        "-DBLOCK_ROWS=4" in n and "block = [32, 4]" in n and "slow.launch.toml" in n for n in applied.notes
    )
    # A second apply backs up both files it overwrites, never an earlier backup.
    first_spec = written.read_text()
    again = apply_rewrite(
        folder / "slow.cu",
        _padded(folder) + "\n",
        candidate="c2",
        defines={"BLOCK_ROWS": 2},
        spec_copy=spec_copy,
    )
    assert again.backup == str(folder / "slow.cu.orig.1") and again.spec_backup == str(
        folder / "slow.launch.toml.orig"
    )
    assert (folder / "slow.launch.toml.orig").read_text() == first_spec
    assert (folder / "slow.cu.orig").read_text() == original


def test_without_a_spec_copy_the_settings_are_still_named(tmp_path: Path) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    applied = apply_rewrite(folder / "slow.cu", _padded(folder), candidate="c1", defines=DEFINES)
    assert applied.spec is None and not (folder / "slow.launch.toml").exists()
    assert any("-DBLOCK_ROWS=4" in n and "no spec holds" in n for n in applied.notes)


def test_an_unreadable_spec_copy_is_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    before = _tree(folder)
    with pytest.raises(BadInput, match="launch spec"):
        apply_rewrite(
            folder / "slow.cu", "x", candidate="c1", defines=DEFINES, spec_copy=_broken_spec(tmp_path)
        )
    assert _tree(folder) == before


def _broken_spec(tmp_path: Path) -> Path:
    path = tmp_path / "broken" / "launch.toml"
    path.parent.mkdir()
    path.write_text("source = 'nowhere.cu'\n")
    return path


class _MacroRewriter(ScriptedRewriter):
    """Proposes the padded tile measured with other macros and launch geometry (as launch-geometry does)."""

    def propose(self, request: RewriteRequest) -> list[Candidate]:
        self.requests.append(request)
        batch, self.sources = self.sources[:1], self.sources[1:]
        return [
            make_candidate(
                request,
                backend="recipes",
                source=s,
                description="padded, 4 rows per block",
                recipe="scripted",
                defines=dict(DEFINES),
                launch=LaunchOverride(block=list(LAUNCH["block"])),
            )
            for s in batch
        ]


def _optimize(folder: Path, run: Path, monkeypatch: pytest.MonkeyPatch, *, apply: bool) -> Any:
    rewriter = _MacroRewriter([_padded(folder)], transform="smem-padding")
    monkeypatch.setattr(rewriter_choice, "get_rewriter", lambda *a, **k: rewriter)
    return perfagent.optimize(
        folder / "slow.cu", backend="recipes", transform="smem-padding", iterations=1, out=run, apply=apply
    )


def test_a_win_that_needs_macros_says_so_in_every_view(
    tmp_path: Path, simulated_gpu: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_example(TRANSPOSE, tmp_path)
    record = _optimize(folder, tmp_path / "run", monkeypatch, apply=False)
    result = record.optimize
    assert result is not None and record.best == "c1" and result.applied is None
    needs = "this win was measured with -DBLOCK_ROWS=4, block = [32, 4]"
    assert needs in render_text(result) and "(--apply)" in render_text(result)
    assert needs in render_markdown(result) and needs in (tmp_path / "run" / "summary.md").read_text()
    [tui_candidate] = outcome_of(record).candidates
    note = settings_note(tui_candidate)
    assert note is not None and needs in note
    assert not (folder / "slow.launch.toml").exists()  # nothing written without --apply


def test_cli_apply_and_tui_accept_write_the_same_files(
    tmp_path: Path, simulated_gpu: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    by_cli = copy_example(TRANSPOSE, tmp_path / "cli")
    record = _optimize(by_cli, tmp_path / "run-cli", monkeypatch, apply=True)
    applied = record.optimize.applied
    assert applied is not None and applied.spec == str(by_cli / "slow.launch.toml")
    assert any("written into slow.launch.toml" in n for n in applied.notes)
    assert PADDED in (by_cli / "slow.cu").read_text()

    by_tui = copy_example(TRANSPOSE, tmp_path / "tui")
    shown = _optimize(by_tui, tmp_path / "run-tui", monkeypatch, apply=False)
    [candidate] = outcome_of(shown).candidates
    accepted = OptimizeBridge().accept(candidate)
    assert accepted.spec == by_tui / "slow.launch.toml" and accepted.backup == by_tui / "slow.cu.orig"
    assert any("written into slow.launch.toml" in n for n in accepted.notes)
    strip = {"slow.launch.toml"}  # its header names the run; compare its data
    assert {k: v for k, v in _tree(by_cli).items() if k not in strip} == {
        k: v for k, v in _tree(by_tui).items() if k not in strip
    }
    assert (
        load_launch_spec(by_cli / "slow.launch.toml").model_dump()
        == load_launch_spec(by_tui / "slow.launch.toml").model_dump()
    )
