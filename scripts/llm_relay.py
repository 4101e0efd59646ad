"""Proposals from a real model through the loopback relay, recorded as cassettes (issue 24).

No model is reachable from the development machines. A separate "model" session answers perfagent's
prompts through ../shared/tools/openai_relay.py (an OpenAI-compatible server on loopback that writes
each request to DIR/req-<port>-<n>.json and answers with DIR/reply-<port>-<n>.txt). This script runs
``perfagent optimize --propose-only`` for every target of a list through that relay, recording each
conversation as a cassette; the GPU half is scripts/gpu_llm_evaluate.sh.

    python3 ../shared/tools/openai_relay.py 8765 /tmp/relay &          # the relay (the model answers there)
    python3 scripts/record_llm_cassettes.py relay --base-url http://127.0.0.1:8765/v1 \\
        --targets scripts/llm_targets.toml --reports REPORTS --out tests/data/llm_relay

Per target, OUT/<name>/ holds the cassette (one file per request, replayed in CI by
tests/optimize/test_llm_relay.py in the recorded order: cassette.json says ``"replay": "in-order"``), the
report the prompts were written from, ``run/`` (the proposals run folder: copy it to the GPU machine and ``--evaluate`` it) and ``expected.json``: labelled as recorded by a model acting through the relay, with
the target, the options, each proposal (id, transform, sha256) and the size of the conversation.
Targets: ``[[target]]`` tables with ``name``, ``path`` (a .cu with its spec beside it, or a KernelBench
problem), and optionally ``report`` (file name under --reports: the report recorded on the GPU),
``gpu`` (the GPU the prompt describes when there is no report), ``language`` (first kernels: cuda or
triton), ``iterations``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import perfagent
from perfagent.llm_cassette import IN_ORDER, Cassette
from perfagent.llm_client import LLMConfig, cassette_config
from perfagent.optimize.phases import propose

REPO = Path(__file__).resolve().parents[1]
RECORDED_AGAINST = (
    "a capable model acting through the loopback relay ../shared/tools/openai_relay.py: a separate "
    "session read each prompt and wrote the reply (one reply per request; no compiler or GPU feedback "
    "beyond what perfagent's own repair requests carried)"
)
RELAY_TIMEOUT_S = 1800.0
"""How long one request may wait for the model session's reply, s (the relay's own default)."""


def load_targets(path: Path) -> list[dict[str, Any]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    targets = list(data.get("target", []))
    for t in targets:
        if "name" not in t or "path" not in t:
            raise SystemExit(f"{path}: every [[target]] needs name and path ({t})")
    return targets


def relay_config(base_url: str, model: str, cassette: Path | None, *, replay: bool = False) -> LLMConfig:
    base = LLMConfig.from_env(
        base_url=None if replay else base_url,
        model=model,
        api_key="sk-relay-loopback",
        env={},
        timeout_s=RELAY_TIMEOUT_S,
        max_retries=0,
        backoff_s=0.0,
    )
    if cassette is None:
        return base
    return cassette_config(
        base, record=None if replay else str(cassette), replay=str(cassette) if replay else None
    )


def propose_target(
    target: dict[str, Any], config: LLMConfig, run: Path, reports: Path | None
) -> perfagent.RunRecord:
    """``--propose-only`` of one target through ``config`` (recording or replaying its cassette)."""
    options: dict[str, Any] = {
        "backend": "llm",
        "iterations": int(target.get("iterations", 2)),
        "max_candidates": 1,
        "out": run,
        "force": True,
        "llm_config": config,
    }
    report = reports / str(target["report"]) if target.get("report") and reports is not None else None
    if report is not None and report.is_file():
        options["report"] = report
    elif report is not None:
        print(f"{target['name']}: no report {report} (record it with MODE=reports); proposing without one")
    if target.get("gpu"):
        options["gpu"] = str(target["gpu"])
    if target.get("language"):
        options["language"] = str(target["language"])
    return propose(REPO / str(target["path"]), **options)


def expected(
    target: dict[str, Any], record: perfagent.RunRecord, cassette: Path, model: str
) -> dict[str, Any]:
    requests = sorted(p for p in cassette.glob("*.json") if p.name not in ("cassette.json", "expected.json"))
    return {
        "recorded_against": RECORDED_AGAINST,
        "model": model,
        "target": target,
        "requests": len(requests),
        "candidates": [
            {
                "id": c.id,
                "transform": c.transform,
                "verdict": c.verdict,
                "notes": c.notes,
                "source_sha256": hashlib.sha256((c.source or "").encode()).hexdigest(),
            }
            for c in record.candidates
        ],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="record_llm_cassettes.py relay", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--base-url", required=True, help="the relay, e.g. http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default="relay-model", help="the model name sent (the relay ignores it)")
    parser.add_argument("--targets", type=Path, default=REPO / "scripts" / "llm_targets.toml")
    parser.add_argument(
        "--reports", type=Path, help="folder of the reports recorded on the GPU (<report> names)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "llm_relay")
    parser.add_argument("--only", help="record only targets whose name contains this")
    args = parser.parse_args(argv)
    for target in load_targets(args.targets):
        if args.only and args.only not in target["name"]:
            continue
        folder = args.out / target["name"]
        cassette = folder / "cassette"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        record = propose_target(
            target, relay_config(args.base_url, args.model, cassette), folder / "run", args.reports
        )
        # A real model answered: the conversation cannot be recorded again, so it replays in the
        # recorded order and survives later prompt changes (drift is noted, not fatal).
        Cassette(cassette, "record").remember("replay", IN_ORDER)
        used = args.reports / str(target["report"]) if target.get("report") and args.reports else None
        if (
            used is not None and used.is_file()
        ):  # kept beside the cassette: the replay rebuilds the same prompt
            shutil.copy2(used, folder / used.name)
        meta = expected(target, record, cassette, args.model)
        (folder / "expected.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(
            f"{target['name']}: {meta['requests']} request(s), "
            + ", ".join(f"{c['id']} {c['transform']} {c['verdict']}" for c in meta["candidates"])
        )


if __name__ == "__main__":
    main()
