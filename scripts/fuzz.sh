#!/usr/bin/env bash
# Runs the libFuzzer target (fuzz/decoder_fuzz.cc) under ASan + UBSan for a
# bounded time: bash scripts/fuzz.sh [SECONDS] (default 120; `npm run fuzz --
# 3600` for an hour). Starts from the committed seed corpus fuzz/corpus/
# (read only) and keeps what it finds in build-fuzz/corpus/; a failing input is
# written to build-fuzz/artifacts/ and the script exits non-zero. Replay one:
#   ./build-fuzz/bd_fuzz_decoder build-fuzz/artifacts/crash-...
# Fold new finds into the committed corpus (minimised):
#   ./build-fuzz/bd_fuzz_decoder -merge=1 fuzz/corpus build-fuzz/corpus
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
bash scripts/setup.sh --fuzz
jobs=$(nproc 2>/dev/null || echo 2)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBD_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target bd_fuzz_decoder >/dev/null
rm -rf build-fuzz/artifacts  # a failure of an earlier run is not this run's
mkdir -p build-fuzz/corpus build-fuzz/artifacts
echo "fuzz: bd_fuzz_decoder for ${seconds}s from $(ls fuzz/corpus | wc -l) seed inputs"
status=0
BD_FUZZ_STATS=1 ./build-fuzz/bd_fuzz_decoder build-fuzz/corpus fuzz/corpus \
  -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=1024 -len_control=0 \
  -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 >build-fuzz/fuzz.log 2>&1 || status=$?
# The log without libFuzzer's per-input progress lines.
grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse|RELOAD)' build-fuzz/fuzz.log || true
if [ "$status" -ne 0 ] || compgen -G 'build-fuzz/artifacts/*' >/dev/null; then
  echo "fuzz: FAILED (exit $status); failing inputs in build-fuzz/artifacts/:"
  ls build-fuzz/artifacts/ || true
  exit 1
fi
