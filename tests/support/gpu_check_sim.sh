#!/usr/bin/env bash
# CI dry check of scripts/gpu-check (issue 14 item 7): the script itself runs against the
# simulated vendor libraries of BUILD_DIR; every step must exit as expected and the outputs exist.
#   tests/support/gpu_check_sim.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
INTERPROBE_BIN="$build/cli/interprobe" GPU_CHECK_SIM="$build" timeout 600 "$src/scripts/gpu-check" "$out" || { echo "gpu-check failed"; exit 1; }
cat "$out/summary.txt"
fail=0
for step in version topology virtualization bandwidth-cuda compute-cuda allreduce-nccl allreduce-variants snapshot inventory-live run; do
  grep -qE "^$step: rc=0 " "$out/summary.txt" || { echo "FAIL: step $step did not exit 0"; fail=1; }
done
# The watchdog step (a 1 µs limit) must end within its limit; its exit status is the report's.
grep -qE "^allreduce-watchdog: rc=([0-9]|[1-9][0-9]) " "$out/summary.txt" || { echo "FAIL: watchdog step"; fail=1; }
grep -q "SIMULATED vendor libraries" "$out/gpu-check.log" || { echo "FAIL: not marked simulated"; fail=1; }
for f in bw.json allreduce.json compute.json report.json snapshot.tar.gz extras.tar.gz; do
  [[ -s "$out/$f" ]] || { echo "FAIL: $f missing"; fail=1; }
done
grep -q '"simulated": "interprobe-sim 1"' "$out/report.json" || { echo "FAIL: report not marked simulated"; fail=1; }
exit $fail
