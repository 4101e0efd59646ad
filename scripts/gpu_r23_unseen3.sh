#!/usr/bin/env bash
# Issue 23, generality: the recipes on benchmarks/unseen3 (the third held-out set, 20 entries nobody tuned a
# recipe on). On a GPU machine:
#
#   OUT=/tmp/out bash scripts/gpu_r23_unseen3.sh                    # every entry, split over 2 GPUs
#   OUT=/tmp/out GPUS=4 bash scripts/gpu_r23_unseen3.sh             # over 4 GPUs (about half the time)
#   OUT=/tmp/out ONLY='^(03|04|20)_' GPUS=1 bash scripts/gpu_r23_unseen3.sh   # a subset on one GPU
#
# Each lane (one per GPU, scripts/gpu_lanes.sh) runs scripts/gpu_generalization_bench.sh with
# SET=benchmarks/unseen3 ITER=3 JOBS=bench,optimize on its share of the entries (round robin by entry
# number, after ONLY): `perfagent bench slow.cu fixed.cu` (the textbook fix verified and timed) and
# `perfagent optimize slow.cu --backend recipes --iterations 3`. Writes $OUT/r23_unseen3/lane<k>/
# generalization.md per lane and $OUT/r23_unseen3/unseen3.md (every lane's rows in one table, with the GPU).
# Expected runtime: ~60 s per entry per GPU plus ~40 s of set-up: 20 entries on 2 GPUs ~10-11 min, on 4
# GPUs ~6 min. Knobs (env): ONLY (regex on entry names, default all), GPUS (2), ITER (3), LANE_TIMEOUT (s,
# default 60 s per entry of the largest lane + 120).
# What to look for: the "textbook fix" column (every fixed.cu must verify: a failing fix is a defect of the
# set, not of the rewriter), "share of textbook" per entry (issue 23's bar: >= 80 %), and "rejected (why)":
# an `incorrect` candidate accepted is a rewriter bug; compare with benchmarks/unseen3/TRIAGE.md (CPU).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
ONLY=${ONLY:-.}
GPUS=${GPUS:-2}
mkdir -p "$OUT/r23_unseen3"
mapfile -t NUMBERS < <(find benchmarks/unseen3 -mindepth 2 -maxdepth 2 -name slow.cu -printf '%h\n' | xargs -n1 basename \
  | sort | grep -E -- "$ONLY" | cut -d_ -f1)
[ "${#NUMBERS[@]}" -gt 0 ] || { echo "no unseen3 entry matches ONLY=$ONLY" >&2; exit 2; }
declare -a SHARE
for i in "${!NUMBERS[@]}"; do
  k=$(( i % GPUS ))
  SHARE[$k]="${SHARE[$k]:+${SHARE[$k]}|}${NUMBERS[$i]}"
done
LANES=""
largest=0
for k in "${!SHARE[@]}"; do
  count=$(tr '|' '\n' <<< "${SHARE[$k]}" | wc -l)
  [ "$count" -gt "$largest" ] && largest=$count
  LANES="${LANES:+$LANES;}$k lane$k env SET=benchmarks/unseen3 ONLY='^(${SHARE[$k]})_' ITER=${ITER:-3} JOBS=bench,optimize SUITE_TIMEOUT=$(( largest * 60 + 60 )) bash scripts/gpu_generalization_bench.sh"
done
OUT="$OUT/r23_unseen3" LANE_TIMEOUT=${LANE_TIMEOUT:-$(( largest * 60 + 120 ))} LANES="$LANES" bash scripts/gpu_lanes.sh
python3 - "$OUT/r23_unseen3" "${ITER:-3}" "${!SHARE[@]}" > "$OUT/r23_unseen3/unseen3.md" <<'PY'
# every lane's rows in one table (the header and the GPU line from the first lane that has a table), and the
# count of entries at >= 80 % of the textbook fix's speed-up ("share of textbook" column)
import re, sys
from pathlib import Path
out, iterations, lanes = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
head, rows, missing = [], [], []
for k in lanes:
    table = out / f"lane{k}" / "generalization.md"
    if not table.is_file():
        missing.append(f"lane {k}: no table, see lane{k}/lane.log")
        continue
    lines = table.read_text().splitlines()
    if not head:
        head = [ln for ln in lines if ln.startswith("GPU:") or ln.startswith("| entry") or ln.startswith("|---")]
    rows += [ln for ln in lines if re.match(r"^\| \d\d_", ln)]
rows.sort()
shares = [re.findall(r"\| (\d+)% \|", r) for r in rows]
hit = sum(1 for s in shares if s and int(s[0]) >= 80)
print(f"# benchmarks/unseen3: recipes (--iterations {iterations}) and textbook fixes\n")
print("\n".join(head[:1] + [""] + head[1:] + rows))
print(f"\n{hit}/{len(rows)} entries reach >= 80 % of the textbook fix's speed-up")
print("\n".join(missing))
lanes_txt = out / "lanes.txt"
print("\n" + (lanes_txt.read_text() if lanes_txt.is_file() else ""))
PY
cat "$OUT/r23_unseen3/unseen3.md"
