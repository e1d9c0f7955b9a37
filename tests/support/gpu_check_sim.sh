#!/usr/bin/env bash
# CI dry check of scripts/gpu-check: the script itself runs against the simulated vendor libraries
# of BUILD_DIR on the simulated 8x H100 NVSwitch machine, whose sweeps take real time (its 8 GPUs
# have 28 peer pairs; unbounded, `bw --engine cuda --quick` took 121 s and `run` more than 180 s of
# it). Within a budget a third of the real one (150 s of 450 s, so every step's share is a third
# too), every step must start, end as expected (exit 0, or 130 when its limit interrupted it) and
# keep at least one measured point of each GPU path; the whole run must end within the budget.
#   tests/support/gpu_check_sim.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
budget=${GPU_CHECK_TEST_BUDGET_S:-150}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
t0=$(date +%s)
INTERPROBE_BIN="$build/cli/interprobe" GPU_CHECK_SIM="$build" GPU_CHECK_BUDGET_S=$budget \
  GPU_CHECK_SIM_CONFIG="$src/tests/sim/devices/h100-sxm-8x-nvswitch.json" \
  timeout $(( budget + 60 )) "$src/scripts/gpu-check" "$out" || { echo "gpu-check failed"; exit 1; }
took=$(( $(date +%s) - t0 ))
cat "$out/summary.txt"
fail=0
(( took <= budget + 10 )) || { echo "FAIL: gpu-check took ${took}s against a budget of ${budget}s"; fail=1; }
grep -q "estimate: 11 steps, at most [0-9]*s of step limits within a budget of ${budget}s" "$out/gpu-check.log" \
  || { echo "FAIL: no estimate within the budget"; fail=1; }
for step in version topology virtualization snapshot inventory-live compute-cuda; do
  grep -qE "^$step: rc=0 " "$out/summary.txt" || { echo "FAIL: step $step did not exit 0"; fail=1; }
done
for step in bandwidth-cuda allreduce-nccl allreduce-variants run; do
  grep -qE "^$step: rc=(0|130) " "$out/summary.txt" || { echo "FAIL: step $step did not end as measured or interrupted"; fail=1; }
done
grep -q "^snapshot-replay: equal" "$out/summary.txt" || { echo "FAIL: snapshot replay"; fail=1; }
# The watchdog step (a 1 µs limit) must end within its limit; its exit status is the report's.
grep -qE "^allreduce-watchdog: rc=([0-9]|[1-9][0-9]) " "$out/summary.txt" || { echo "FAIL: watchdog step"; fail=1; }
grep -q "SIMULATED vendor libraries" "$out/gpu-check.log" || { echo "FAIL: not marked simulated"; fail=1; }
for f in bw.json allreduce.json compute.json report.json snapshot.tar.gz extras.tar.gz; do
  [[ -s "$out/$f" ]] || { echo "FAIL: $f missing"; fail=1; }
done
grep -q '"simulated": "interprobe-sim 1"' "$out/report.json" || { echo "FAIL: report not marked simulated"; fail=1; }
# Every GPU path kept a measured point, interrupted or not.
python3 - "$out" <<'PY' || fail=1
import json, sys, os
out = sys.argv[1]
def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)
def cuda_points(r):
    return sum(len(s["points"]) for s in (r.get("bandwidth") or {}).get("sweeps", []) if s.get("engine") == "cuda")
def allreduce_points(r):
    return sum(len(s["points"]) for s in (r.get("collective") or {}).get("allreduce", []) if s.get("backend") == "nccl")
def gemm_points(r):
    return sum(len(e.get("points", [])) for e in (r.get("compute") or {}).get("engines", []) if e.get("engine") == "cuda")
checks = [("bw.json cuda copy points", cuda_points(load("bw.json"))),
          ("allreduce.json nccl points", allreduce_points(load("allreduce.json"))),
          ("compute.json cuda GEMM points", gemm_points(load("compute.json")))]
report = load("report.json")
checks += [("report.json cuda copy points", cuda_points(report)), ("report.json nccl points", allreduce_points(report))]
bad = [f"FAIL: {name}: none" for name, n in checks if n < 1]
for name, n in checks:
    print(f"{name}: {n}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
exit $fail
