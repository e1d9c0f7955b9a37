#!/usr/bin/env bash
# Smoke check of bench/repeatability against this build: it must parse the binary's current JSON.
# Exit 0 or 1 of the bench (target met or not) both pass; a crash or a missing headline fails.
#   tests/support/bench_repeatability_smoke.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
out=$("$src/bench/repeatability" --bin "$build/cli/interprobe" --runs 2 --min 1M --max 2M --no-mbw 2>&1)
rc=$?
echo "$out"
[[ $rc -le 1 ]] || { echo "FAIL: bench exited $rc"; exit 1; }
grep -qE "^interprobe run-to-run difference .*median [0-9.]+%" <<<"$out" || { echo "FAIL: no headline"; exit 1; }
grep -qE "^run 1: pages auto, THP " <<<"$out" || { echo "FAIL: no page backing line"; exit 1; }
exit 0
