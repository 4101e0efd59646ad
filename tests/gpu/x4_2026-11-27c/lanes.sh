#!/usr/bin/env bash
# The unseen2 after-table of 2026-11-27 (afternoon): one suite lane per GPU (entries balanced by last
# session's wall times), each lane: confined preflight (else unconfined, said in its log), the one-worker
# iteration GPU test (else the separate-worker path, PERFAGENT_ITERATION_WORKER=separate), then
# `optimize --backend recipes --iterations 3` + `bench slow.cu fixed.cu` per entry. A fifth lane probes
# the report reader (CPU only). Run from the repo root on a 4-GPU machine: OUT=... bash this.
set -u
cd "$(dirname "$0")/../../.." || exit 1
PRE='bash scripts/gpu_preflight.sh || export PERFAGENT_UNCONFINED=1 && timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_iteration_worker_gpu.py > $OUT/itw.log 2>&1 || export PERFAGENT_ITERATION_WORKER=separate && SET=benchmarks/unseen2 ITER=3 SUITE_TIMEOUT=$((525-SECONDS))'
GEN='bash scripts/gpu_generalization_bench.sh'
LANES="0 u0 $PRE ONLY='^(01|09|13|20|22|23|28)_' $GEN;1 u1 $PRE ONLY='^(04|07|11|12|16|17|27|29)_' $GEN;2 u2 $PRE ONLY='^(02|03|05|08|14|21|26|32)_' $GEN;3 u3 $PRE ONLY='^(06|10|15|24|25|30|31|33)_' $GEN;0 probe bash scripts/gpu_probe_report_reader.sh"
export LANES
LANE_TIMEOUT=${LANE_TIMEOUT:-560} bash scripts/gpu_lanes.sh
