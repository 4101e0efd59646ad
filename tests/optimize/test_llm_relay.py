"""The real-model flow through the relay (scripts/llm_relay.py): ``--propose-only`` for each target of a
list, each conversation recorded as a cassette, ``expected.json`` labelled as recorded through the relay;
the cassettes replay with no server and give the same proposals. The relay is stood in for by the loopback
server of tests/rewrite/llm_server.py (the real openai client); committed relay cassettes
(tests/data/llm_relay/*) are replayed the same way."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

from .helpers import REPORTS, ROOT, TRANSPOSE

sys.path.insert(0, str(ROOT / "scripts"))
import llm_relay  # noqa: E402

RELAY = ROOT / "tests" / "data" / "llm_relay"
RECORDED = sorted(p for p in RELAY.iterdir() if (p / "expected.json").is_file()) if RELAY.is_dir() else []
SLOW = (TRANSPOSE / "slow.cu").read_text()
PADDED = SLOW.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]")


def _replayed(folder: Path, tmp_path: Path) -> list[tuple[str, str]]:
    meta = json.loads((folder / "expected.json").read_text())
    config = llm_relay.relay_config("", meta["model"], folder / "cassette", replay=True)
    record = llm_relay.propose_target(
        meta["target"], config, tmp_path / "again", folder
    )  # its report is there
    return [(c.id, c.transform) for c in record.candidates]


def test_propose_through_a_relay_records_labelled_cassettes_that_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc checks the proposals here")
    targets = tmp_path / "targets.toml"
    where = TRANSPOSE.relative_to(ROOT)
    targets.write_text(
        f'[[target]]\nname = "transpose"\npath = "{where}/slow.cu"\n'
        'report = "02_transpose_bank_conflicts.ncu-rep"\niterations = 1\n'
    )
    out = tmp_path / "relay"
    with ReplayServer() as server:
        server.enqueue(Reply(content=structured(PADDED, "Padded the tile.")))
        llm_relay.main(
            [
                "--base-url",
                server.base_url,
                "--model",
                MODEL,
                "--targets",
                str(targets),
                "--reports",
                str(REPORTS),
                "--out",
                str(out),
            ]
        )
    folder = out / "transpose"
    meta = json.loads((folder / "expected.json").read_text())
    assert "through the loopback relay" in meta["recorded_against"] and meta["requests"] == 1
    [p1] = meta["candidates"]
    assert (p1["id"], p1["transform"], p1["verdict"]) == ("p1", "smem-padding", "proposed")
    assert any("compiled here" in n for n in p1["notes"])
    assert (folder / "run" / "record.json").is_file() and (folder / "run" / "proposals").is_dir()
    assert (folder / "02_transpose_bank_conflicts.ncu-rep").is_file()
    assert _replayed(folder, tmp_path) == [("p1", "smem-padding")]  # no server: the cassette answers


@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_committed_relay_cassettes_replay(folder: Path, tmp_path: Path) -> None:
    meta = json.loads((folder / "expected.json").read_text())
    assert _replayed(folder, tmp_path) == [(c["id"], c["transform"]) for c in meta["candidates"]]
