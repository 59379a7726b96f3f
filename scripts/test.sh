#!/usr/bin/env bash
# Runs every test: native doctest (ctest), the same suite under ASan/UBSan,
# libFuzzer over the native API for about two minutes (BD_FUZZ_SECONDS),
# the same suite as wasm under node
# (ctest), the JS tests through the package (node --test, including typings,
# SIMD-in-the-wasm and pack-and-install), the browser tests in headless
# Chromium (bundlers included) and a Next.js app. Sets up and builds first; fails on the first failing layer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --browser
jobs=$(nproc 2>/dev/null || echo 2)

echo "== native tests (ctest, doctest)"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== native tests under AddressSanitizer + UndefinedBehaviorSanitizer (doctest)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBD_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" --target bd_tests >/dev/null
./build-asan/bd_tests --no-colors=true
echo "== libFuzzer over the native API, ASan + UBSan (${BD_FUZZ_SECONDS:-120}s; npm run fuzz -- SECONDS for longer)"
bash scripts/fuzz.sh "${BD_FUZZ_SECONDS:-120}"
echo "== wasm tests (ctest, doctest under node)"
ctest --test-dir build-wasm -V
# Node 20 can hang for good when a test file's process runs its event loop
# empty while a concurrent TurboFan job waits for a garbage collection on the
# main thread (nodejs/node#54918: the main thread waits in DrainTasks for that
# job; seen here once in validation.test.mjs, at its exit, under load). The
# npm scripts run node --test with --no-concurrent-recompilation and
# --no-concurrent-osr, which the test runner passes to every test file's
# process: optimising on the main thread removes such jobs (the tests check
# results, not speed). One place for the flags: package.json.
echo "== JS tests (npm run test:js: node --test, through the package)"
npm run --silent test:js
echo "== browser tests (npm run test:browser: headless Chromium; the bundler tests install pinned bundlers from the npm registry)"
npm run --silent test:browser
echo "== a Next.js client component (npm run test:next: next build with Turbopack and webpack, next dev; pinned, from the npm registry)"
npm run --silent test:next
