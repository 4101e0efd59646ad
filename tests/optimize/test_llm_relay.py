"""The real-model flow through the relay (scripts/llm_relay.py): ``--propose-only`` for each target of a
list, each conversation recorded as a cassette, ``expected.json`` labelled as recorded through the relay;
the cassettes replay with no server and give the same proposals. The relay is stood in for by the loopback
server of tests/rewrite/llm_server.py (the real openai client); committed relay cassettes
(tests/data/llm_relay/*) are replayed the same way. A real model answered those and cannot be asked
again, so they replay in the recorded order: what must stay true while prompts evolve is that today's
pipeline turns the recorded replies into the same candidate sources, in the same order."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from rewrite.llm_server import MODEL, ReplayServer, Reply, structured

import perfagent
from perfagent.llm_cassette import IN_ORDER, Cassette, request_key
from profilers.core_errors import LLMError
from tests.optimize.helpers import REPORTS, ROOT, TRANSPOSE

sys.path.insert(0, str(ROOT / "scripts"))
import llm_relay  # noqa: E402

RELAY = ROOT / "tests" / "data" / "llm_relay"
RECORDED = sorted(p for p in RELAY.iterdir() if (p / "expected.json").is_file()) if RELAY.is_dir() else []
SLOW = (TRANSPOSE / "slow.cu").read_text()
PADDED = SLOW.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]")


def _replayed(folder: Path, tmp_path: Path) -> perfagent.RunRecord:
    meta = json.loads((folder / "expected.json").read_text())
    config = llm_relay.relay_config("", meta["model"], folder / "cassette", replay=True)
    return llm_relay.propose_target(meta["target"], config, tmp_path / "again", folder)  # its report is there


def _sources(record: perfagent.RunRecord) -> list[str]:
    return [hashlib.sha256((c.source or "").encode()).hexdigest() for c in record.candidates]


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
    cassette = Cassette(folder / "cassette", "replay")
    assert cassette.order == "recorded" and [e["sequence"] for e in cassette.exchanges()] == [0]
    replayed = _replayed(folder, tmp_path)  # no server: the cassette answers
    assert [(c.id, c.transform) for c in replayed.candidates] == [("p1", "smem-padding")]
    assert _sources(replayed) == [p1["source_sha256"]]


@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_committed_relay_cassettes_replay(folder: Path, tmp_path: Path) -> None:
    """Today's prompts may differ from the recorded ones (drift is noted); the sources may not."""
    meta = json.loads((folder / "expected.json").read_text())
    assert json.loads((folder / "cassette" / "cassette.json").read_text())["replay"] == IN_ORDER
    assert _sources(_replayed(folder, tmp_path)) == [c["source_sha256"] for c in meta["candidates"]]


def test_in_order_replay_notes_drift_where_keyed_replay_refuses(tmp_path: Path) -> None:
    """A recording whose prompt has since changed: in order, the recorded reply is served and the
    candidate says the prompt drifted; keyed, the same request is an error; past the end, an error."""
    case = tmp_path / "case"
    shutil.copytree(RELAY / "kb_cumprod", case)
    [path] = list((case / "cassette").glob("*-*.json"))
    exchange = json.loads(path.read_text())
    asked = exchange["request"]  # what today's pipeline asks (this case replays without drift)
    older = json.loads(json.dumps(asked))
    older["messages"][-1]["content"] = "Task: an older prompt\n" + older["messages"][-1]["content"]
    path.unlink()  # stored under the older request's key, as record() would have
    renamed = path.with_name(f"{request_key(older)[:16]}-0.json")
    renamed.write_text(json.dumps({**exchange, "key": request_key(older), "request": older}))

    record = _replayed(case, tmp_path)
    expected = json.loads((case / "expected.json").read_text())
    assert _sources(record) == [c["source_sha256"] for c in expected["candidates"]]
    [note] = [n for n in record.candidates[0].notes if "drifted" in n]
    assert note.startswith("prompt drifted since recording: asked 'Task: write")
    assert f"recorded for 'Task: an older prompt' ({request_key(older)[:16]})" in note

    in_order = Cassette(case / "cassette", "replay")
    assert in_order.replay(asked) == exchange["reply"] and len(in_order.take_drift()) == 1
    with pytest.raises(LLMError, match="no more recorded replies"):
        in_order.replay(asked)
    with pytest.raises(LLMError, match="no recorded reply for request"):
        Cassette(case / "cassette", "replay", order="keyed").replay(asked)


def test_later_prompts_do_not_name_the_run_folder(tmp_path: Path) -> None:
    """A proposal's reason names the run folder (--evaluate RUN); the next prompt must not, or it would
    depend on where --out points (the drift that broke keyed replay of the relay cassettes)."""
    _replayed(RELAY / "u03_dot_double_atomic_each", tmp_path)
    prompts = sorted((tmp_path / "again" / "proposals").glob("*/prompt.md"))
    assert len(prompts) == 2 and "proposed only: not built" in prompts[1].read_text()
    assert all(str(tmp_path) not in p.read_text() for p in prompts)
