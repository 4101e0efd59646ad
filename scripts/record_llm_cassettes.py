"""Record the committed LLM cassettes of tests/data/llm_cassettes (issue 13): multi-round `--backend llm`
optimize runs over three bundled examples, recorded with `--llm-record` against the project's loopback
OpenAI-compatible server (tests/rewrite/llm_server.py) answering from a SCRIPT written here — no model is
reachable from the development machines, so the replies are scripted, and labelled as such in each
cassette's `expected.json`.

    python3 scripts/record_llm_cassettes.py        # from the repository root; rewrites tests/data/llm_cassettes
    python3 scripts/record_llm_cassettes.py relay --base-url URL ...   # a real model through the relay
                                                   # (scripts/llm_relay.py; docs/optimize.md "A real model")

Each run is multi-round: the first reply is wrong (it computes something else), the verifier's failing
check goes back as a repair request, the repaired reply is judged, and a second transform is asked for.
`expected.json` keeps what the recording produced (candidate ids, transforms, verdicts and the SHA-256 of
every candidate source); tests/optimize/test_llm_cassettes.py replays each cassette with no server and
asserts the same candidates byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import perfagent  # noqa: E402
from perfagent.llm_client import LLMConfig, cassette_config  # noqa: E402
from tests.rewrite.llm_server import MODEL, ReplayServer, Reply, structured  # noqa: E402

OUT = REPO / "tests" / "data" / "llm_cassettes"
KB = REPO / "examples" / "kernelbench"


def _vector_add() -> dict[str, object]:
    source = (KB / "01_vector_add_triton.py").read_text()
    wrong = source.replace("a + b, mask=mask", "a - b, mask=mask")
    repaired = source.replace("block = 1024", "block = 2048")
    second = source.replace("block = 1024", "block = 4096")
    return {
        "target": "examples/kernelbench/01_vector_add_triton.py",
        "problem": "examples/kernelbench/01_vector_add.py",
        "transforms": ["launch-config", "vectorize-access"],
        "replies": [
            structured(wrong, "Bigger blocks."),
            structured(repaired, "Fixed: add, 2048 per program."),
            structured(second, "4096 elements per program."),
        ],
    }


def _matmul_relu() -> dict[str, object]:
    source = (KB / "02_matmul_relu_triton.py").read_text()
    wrong = source.replace(
        "BLOCK_M=32, BLOCK_N=32, BLOCK_K=32", "BLOCK_M=32, BLOCK_N=32, BLOCK_K=64"
    ).replace("triton.cdiv(m, 32), triton.cdiv(n, 32)", "triton.cdiv(m, 64), triton.cdiv(n, 32)")
    repaired = source.replace("BLOCK_M=32, BLOCK_N=32, BLOCK_K=32", "BLOCK_M=32, BLOCK_N=32, BLOCK_K=16")
    second = source.replace("BLOCK_M=32, BLOCK_N=32, BLOCK_K=32", "BLOCK_M=32, BLOCK_N=32, BLOCK_K=64")
    return {
        "target": "examples/kernelbench/02_matmul_relu_triton.py",
        "problem": "examples/kernelbench/02_matmul_relu.py",
        "transforms": ["launch-config", "smem-tiling"],
        "replies": [
            structured(wrong, "Wider tiles."),
            structured(repaired, "Fixed: the grid matches the tile."),
            structured(second, "Deeper K tiles."),
        ],
    }


def _transpose() -> dict[str, object]:
    slow = REPO / "examples" / "cuda" / "02_transpose_bank_conflicts" / "slow.cu"
    source = slow.read_text()
    padded = source.replace("tile[TILE_DIM][TILE_DIM]", "tile[TILE_DIM][TILE_DIM + 1]")
    restricted = padded.replace("const float *idata", "const float *__restrict__ idata")
    return {
        "target": "examples/cuda/02_transpose_bank_conflicts/slow.cu",
        "problem": None,
        "transforms": ["smem-padding", "restrict-pointers"],
        "replies": [
            structured(padded, "Padded the tile."),
            structured(restricted, "Marked the input restrict."),
        ],
    }


RUNS = {"vector_add_triton": _vector_add, "matmul_relu_triton": _matmul_relu, "transpose_padding": _transpose}


def _config(server: ReplayServer | None, cassette: Path, *, record: bool) -> LLMConfig:
    base = LLMConfig.from_env(
        base_url=server.base_url if server else None,
        model=MODEL if server else None,
        api_key="sk-scripted-loopback" if server else None,
        env={},
        timeout_s=30.0,
        max_retries=0,
        backoff_s=0.0,
    )
    return cassette_config(
        base, record=str(cassette) if record else None, replay=None if record else str(cassette)
    )


def run(
    name: str, spec: dict[str, object], cassette: Path, out: Path, server: ReplayServer | None
) -> perfagent.RunRecord:
    """One optimize run of ``spec`` (recording through ``server``, or replaying ``cassette`` when None)."""
    problem = spec["problem"]
    return perfagent.optimize(
        REPO / str(spec["target"]),
        problem=REPO / str(problem) if problem else None,
        backend="llm",
        transforms=list(spec["transforms"]),  # type: ignore[arg-type]
        iterations=2,
        device="cpu",
        seeds=1,
        repairs=1,
        out=out,
        llm_config=_config(server, cassette, record=server is not None),
    )


def expected(record: perfagent.RunRecord) -> list[dict[str, object]]:
    """What a replay must reproduce: each candidate's id, transform, verdict and source hash."""
    return [
        {
            "id": c.id,
            "transform": c.transform,
            "verdict": c.verdict,
            "repair_of": getattr(c, "repair_of", None),
            "source_sha256": hashlib.sha256((c.source or "").encode()).hexdigest(),
        }
        for c in record.candidates
    ]


def main() -> None:
    for name, make in RUNS.items():
        spec = make()
        cassette = OUT / name
        shutil.rmtree(cassette, ignore_errors=True)
        with ReplayServer() as server, tempfile.TemporaryDirectory() as tmp:
            server.enqueue(*[Reply(content=str(r)) for r in spec["replies"]])  # type: ignore[attr-defined]
            record = run(name, spec, cassette, Path(tmp) / "run", server)
            requests = len(server.completions)
            candidates = expected(record)  # while the run folder (the candidates' sources) still exists
        meta = {
            "recorded_against": "the loopback server of tests/rewrite/llm_server.py answering from the script "
            "in scripts/record_llm_cassettes.py (scripted replies: no model was reachable)",
            "target": spec["target"],
            "problem": spec["problem"],
            "transforms": spec["transforms"],
            "requests": requests,
            "candidates": candidates,
        }
        (cassette / "expected.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(
            f"{name}: {requests} requests, "
            + ", ".join(f"{c.id} {c.transform} {c.verdict}" for c in record.candidates)
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["relay"]:
        from llm_relay import main as relay_main  # scripts/ is on sys.path when run as a script

        relay_main(sys.argv[2:])
    else:
        main()
