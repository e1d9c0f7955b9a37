#!/usr/bin/env bash
# Smoke check of the bench/ scripts against this build: they must parse the binary's current JSON
# (each once broke on a renamed key). A bench's verdict (exit 0 met, 1 not met) does not matter
# here; a crash or a missing headline fails.
#   tests/support/bench_smoke.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
fail=0
out=$("$src/bench/repeatability" --bin "$build/cli/interprobe" --runs 2 --min 1M --max 2M --no-mbw 2>&1)
rc=$?
echo "$out"
[[ $rc -le 1 ]] || { echo "FAIL: bench/repeatability exited $rc"; fail=1; }
grep -qE "^interprobe run-to-run difference .*median [0-9.]+%" <<<"$out" || { echo "FAIL: repeatability headline"; fail=1; }
grep -qE "^run 1: pages auto, THP " <<<"$out" || { echo "FAIL: repeatability page backing line"; fail=1; }
if command -v mbw >/dev/null; then
  out=$("$src/bench/host-bandwidth" --bin "$build/cli/interprobe" --size-mib 64 --rounds 1 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -le 1 ]] || { echo "FAIL: bench/host-bandwidth exited $rc"; fail=1; }
  grep -qE "^median ratio interprobe best / mbw memcpy: [0-9.]+" <<<"$out" || { echo "FAIL: host-bandwidth headline"; fail=1; }
else
  echo "mbw not installed: bench/host-bandwidth not checked"
fi
exit $fail
