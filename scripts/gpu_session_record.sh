#!/usr/bin/env bash
# GPU session, part 1 (run through the device tool): build and run the examples, record their
# reports with perfagent's targeted metrics, check which targeted metrics the chip provided,
# and diagnose every recorded report. Results land in $OUT.
set -u
source scripts/gpu_env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv; ncu --version | tail -1; nvcc --version | tail -1; } > "$OUT/machine.txt" 2>&1
EXAMPLE_REPS=10 bash scripts/run_examples.sh > "$OUT/run_examples.txt" 2>&1
bash scripts/record_fixtures.sh /tmp/reports > "$OUT/record.log" 2>&1
python3 scripts/check_targeted_metrics.py /tmp/reports/suite.ncu-rep > "$OUT/targeted_metrics.txt" 2>&1
for r in /tmp/reports/*.ncu-rep; do
  n=$(basename "$r" .ncu-rep)
  python3 -m perfagent diagnose "$r" --format json -o "/tmp/reports/$n.diagnosis.json" --force 2>>"$OUT/diagnose.log"
  python3 -m perfagent diagnose "$r" --format text --no-save 2>>"$OUT/diagnose.log" >> "$OUT/diagnoses.txt"
done
tar czf "$OUT/reports.tar.gz" -C /tmp reports
cat "$OUT/machine.txt" "$OUT/targeted_metrics.txt"; tail -30 "$OUT/run_examples.txt"; tail -25 /tmp/reports/MANIFEST.md
