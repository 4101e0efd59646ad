"""One-off migration (run once, kept for the record): number the exchanges of the committed relay
cassettes (tests/data/llm_relay/*/cassette) in the order they were recorded, and mark each cassette
``"replay": "in-order"``.

Those cassettes were recorded before exchanges carried a ``sequence``; a real model answered them, so
they cannot be recorded again. Each exchange's order is recovered from the run folder recorded with it:
its last user message is the prompt of ``run/proposals/NN_<transform>/prompt.md`` (byte for byte), or,
failing that, names the transform of exactly one proposal folder (``apply the transform `X```).

    python3 scripts/migrate_relay_sequence.py [tests/data/llm_relay]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from perfagent.llm_cassette import IN_ORDER, META_FILE

TRANSFORM = re.compile(r"apply the transform `([^`]+)`")


def proposal_index(exchange: dict, proposals: list[Path]) -> int:
    """The 0-based position of the proposal this exchange asked for."""
    asked = exchange["request"]["messages"][-1]["content"]
    by_prompt = [i for i, p in enumerate(proposals) if (p / "prompt.md").read_text(encoding="utf-8") == asked]
    if len(by_prompt) == 1:
        return by_prompt[0]
    named = TRANSFORM.search(asked)
    by_name = [i for i, p in enumerate(proposals) if named and p.name.split("_", 1)[1] == named.group(1)]
    if len(by_name) == 1:
        return by_name[0]
    raise SystemExit(f"cannot place {exchange['key'][:16]} among {[p.name for p in proposals]}")


def migrate(case: Path) -> None:
    cassette = case / "cassette"
    proposals = sorted(p for p in (case / "run" / "proposals").iterdir() if p.is_dir())
    for path in sorted(p for p in cassette.glob("*-*.json") if p.name != META_FILE):
        exchange = json.loads(path.read_text(encoding="utf-8"))
        numbered = {"key": exchange["key"], "sequence": proposal_index(exchange, proposals), **exchange}
        path.write_text(json.dumps(numbered, indent=2), encoding="utf-8")
        print(f"{case.name}: {path.name} -> sequence {numbered['sequence']}")
    meta_path = cassette / META_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta_path.write_text(json.dumps({**meta, "replay": IN_ORDER}, indent=2), encoding="utf-8")


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "tests" / "data" / "llm_relay"
    for case in sorted(p for p in root.iterdir() if (p / "cassette" / META_FILE).is_file()):
        migrate(case)


if __name__ == "__main__":
    main(sys.argv[1:])
