"""The real-model table (issue 24): evaluated proposals runs -> speed-up over eager and over torch.compile,
correct rate, tokens. Used by scripts/gpu_llm_evaluate.sh; reads RUNS/<name>/record.json (evaluated) and
CASSETTES/<name>/expected.json + cassette/ (what was asked and answered).

    python3 scripts/llm_table.py RUNS CASSETTES OUT_DIR "GPU NAME"

Writes OUT_DIR/table.md and OUT_DIR/table.json. Tokens: the server's usage when it reported any; the relay
reports none, so they are estimated as characters / 4 of the prompts and replies (marked ≈).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _conversation_chars(cassette: Path) -> tuple[int, int, int, int]:
    """(prompt chars, reply chars, reported prompt tokens, reported completion tokens) over the cassette."""
    sent = got = p_tok = c_tok = 0
    for path in sorted(cassette.glob("*.json")):
        if path.name == "cassette.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        sent += sum(len(str(m.get("content", ""))) for m in data.get("request", {}).get("messages", []))
        reply = data.get("reply", {})
        got += sum(len(str((c.get("message") or {}).get("content") or "")) for c in reply.get("choices", []))
        usage = reply.get("usage") or {}
        p_tok += int(usage.get("prompt_tokens") or 0)
        c_tok += int(usage.get("completion_tokens") or 0)
    return sent, got, p_tok, c_tok


def row(name: str, record: dict[str, Any], cassette: Path) -> dict[str, Any]:
    cands = [c for c in record.get("candidates", []) if c.get("verdict") not in ("duplicate",)]
    evaluated = [c for c in cands if c.get("verdict") != "proposed"]
    correct = [c for c in evaluated if (c.get("verification") or {}).get("verdict") == "pass"]
    opt = record.get("optimize") or {}
    base = opt.get("baseline") or {}
    best = next((c for c in cands if c.get("id") == record.get("best")), None)
    fastest = max((c for c in correct if c.get("speedup")), key=lambda c: c["speedup"], default=None)
    sent, got, p_tok, c_tok = _conversation_chars(cassette)
    estimated = not (p_tok or c_tok)
    return {
        "name": name,
        "proposals": len(cands),
        "evaluated": len(evaluated),
        "correct": len(correct),
        "best": best.get("id") if best else None,
        "best_transform": best.get("transform") if best else None,
        "speedup_over_eager": (best or fastest or {}).get("speedup"),
        "speedup_over_compile": (best or fastest or {}).get("speedup_over_compile"),
        "accepted": best is not None,
        "compile_speedup": base.get("compile_speedup"),
        "prompt_tokens": sent // 4 if estimated else p_tok,
        "completion_tokens": got // 4 if estimated else c_tok,
        "tokens_estimated": estimated,
    }


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}×"


def render(rows: list[dict[str, Any]], gpu: str) -> str:
    lines = [
        f"Real-model proposals (one model through the loopback relay), evaluated on {gpu}.",
        "Speed-ups are the accepted best's (else the fastest correct proposal's, not accepted), over the eager",
        "reference and over torch.compile(Model) (default mode; KernelBench only).",
        "",
        "| target | proposals | correct | best | over eager | over torch.compile | tokens (prompt / completion) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        approx = "≈" if r["tokens_estimated"] else ""
        best = f"{r['best']} ({r['best_transform']})" if r["best"] else "none accepted"
        lines.append(
            f"| {r['name']} | {r['proposals']} | {r['correct']}/{r['evaluated']} | {best} | "
            f"{_x(r['speedup_over_eager'])} | {_x(r['speedup_over_compile'])} | "
            f"{approx}{r['prompt_tokens']} / {approx}{r['completion_tokens']} |"
        )
    total_eval = sum(r["evaluated"] for r in rows)
    total_ok = sum(r["correct"] for r in rows)
    rate = f"{total_ok}/{total_eval} ({100 * total_ok / total_eval:.0f} %)" if total_eval else "–"
    lines += [
        "",
        f"Correct rate: {rate}; accepted on {sum(r['accepted'] for r in rows)} of {len(rows)} targets.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    runs, cassettes, out, gpu = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    rows = []
    for folder in sorted(p for p in runs.iterdir() if (p / "record.json").is_file()):
        record = json.loads((folder / "record.json").read_text(encoding="utf-8"))
        rows.append(row(folder.name, record, cassettes / folder.name / "cassette"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    (out / "table.md").write_text(render(rows, gpu), encoding="utf-8")
    print(render(rows, gpu))


if __name__ == "__main__":
    main()
