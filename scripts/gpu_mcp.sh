#!/usr/bin/env bash
# The MCP server on a GPU, driven as a coding agent would (official SDK client, stdio, real server):
#
#   OUT=/tmp/out bash scripts/gpu_mcp.sh          # ~3-4 min on one H100/H200
#
# Needs the mcp SDK's wheels in .whl/ (scripts/gpu_wheels.sh mcp mcp-types anyio jsonschema
# jsonschema-specifications referencing rpds-py attrs opentelemetry-api importlib-metadata zipp pyjwt
# python-multipart sse-starlette starlette uvicorn h11 click); without them it writes SKIPPED and exits 0.
# Writes $OUT/mcp/report.md (+ report.json). Per step: success, reply size (tokens), wall time.
# Steps: diagnose a .cu (runs ncu; the run must be saved under the root, absolute path in the reply);
# verify + bench fixed.cu vs slow.cu (progress notifications, each with a total); optimize to the end
# (summary size); optimize cancelled after its first progress line past the baseline: look for
# "job processes gone: true" within the grace period, "GPU idle after cancel: true" (nvidia-smi lists no
# compute process of the job) and the run's record saying "interrupted".
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/mcp"
if ! python3 -c "import mcp" 2>/dev/null; then
  echo "SKIPPED: the mcp SDK is not installed here (see the wheels list at the top of $0)" | tee "$OUT/mcp/report.md"
  exit 0
fi
PROJECT=$(mktemp -d)/project
mkdir -p "$PROJECT"
cp -r examples/cuda/01_transpose_naive examples/cuda/common "$PROJECT/" 2>/dev/null || cp -r examples/cuda/01_transpose_naive "$PROJECT/"
timeout 600 python3 - "$PROJECT" "$OUT/mcp" <<'PY'
import json, os, subprocess, sys, time
from pathlib import Path
import anyio
from mcp import Client, StdioServerParameters
from perfagent.mcp_server.summaries import reply_tokens

project, out = Path(sys.argv[1]), Path(sys.argv[2])
slow, fixed = "01_transpose_naive/slow.cu", "01_transpose_naive/fixed.cu"
rows = []

def gpu_apps() -> list[str]:
    q = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"],
                       capture_output=True, text=True, timeout=30)
    return [line for line in q.stdout.splitlines() if line.strip()]

def workers() -> list[str]:
    q = subprocess.run(["pgrep", "-f", "perfagent.mcp_server.job_worker"], capture_output=True, text=True, timeout=30)
    return q.stdout.split()

async def step(client, name, tool, args, **kw):
    start = time.monotonic()
    totals = []
    async def on_progress(value, total, message):
        totals.append(total)
        if kw.get("event") is not None and message and kw["when"](message):
            kw["event"].set()
    result = await client.call_tool(tool, args, progress_callback=on_progress)
    tokens = reply_tokens([[b.text for b in result.content], result.structured_content])
    rows.append({"step": name, "ok": not result.is_error, "tokens": tokens, "wall_s": round(time.monotonic() - start, 1),
                 "progress": len(totals), "all_with_total": all(t is not None for t in totals),
                 "error": (result.structured_content or {}).get("error")})
    return result

async def main():
    env = dict(os.environ)
    params = StdioServerParameters(command=sys.executable, args=["-m", "perfagent", "mcp", "--root", str(project)], env=env)
    async with Client(params) as c:
        d = await step(c, "diagnose .cu (ncu)", "diagnose", {"target": slow})
        s = d.structured_content.get("summary", {})
        rows[-1]["run"] = s.get("run")
        rows[-1]["run_under_root"] = bool(s.get("run")) and Path(s["run"]).is_relative_to(project.resolve())
        await step(c, "verify fixed vs slow", "verify", {"reference": slow, "candidate": fixed, "device": "cuda"})
        await step(c, "bench fixed vs slow", "bench", {"target": slow, "candidate": fixed, "device": "cuda", "runs": 50})
        await step(c, "optimize to the end", "optimize", {"target": slow, "iterations": 2, "device": "cuda"})
        busy = anyio.Event()
        async with anyio.create_task_group() as tg:
            async def run():
                await step(c, "optimize cancelled", "optimize", {"target": slow, "iterations": 5, "device": "cuda"},
                           event=busy, when=lambda m: "iteration" in m)
            tg.start_soon(run)
            with anyio.move_on_after(300):
                await busy.wait()
            tg.cancel_scope.cancel()
        cancelled = time.monotonic()
        gone = False
        while time.monotonic() - cancelled < 20:
            if not workers():
                gone = True
                break
            await anyio.sleep(0.2)
        rows.append({"step": "after cancel", "job processes gone": gone,
                     "seconds to gone": round(time.monotonic() - cancelled, 2),
                     "GPU idle after cancel": not any("python" in a for a in gpu_apps()), "gpu apps": gpu_apps()})
        latest = await c.call_tool("read_run", {"run": "latest"})
        summary = latest.structured_content.get("summary", {})
        stopped = (summary.get("optimize") or {}).get("stopped") or " ".join(summary.get("notes", []))
        rows[-1]["latest run says"] = stopped

anyio.run(main)
(out / "report.json").write_text(json.dumps(rows, indent=1))
lines = ["# MCP server on a GPU", "", f"GPU: {subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'], capture_output=True, text=True).stdout.strip()}", ""]
lines += [f"- {json.dumps(r)}" for r in rows]
(out / "report.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "exit $?" >> "$OUT/mcp/report.md"
