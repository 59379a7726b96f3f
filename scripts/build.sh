#!/usr/bin/env bash
# Builds both trees from one CMakeLists.txt and assembles the npm package's
# dist/: build/ (native library + doctest suite), build-wasm/ (wasm modules +
# the doctest suite as wasm).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "$@"

# Emscripten 3.1.6 links need Debian's node modules (acorn): TOOLCHAIN pitfall 1.
export NODE_PATH=/usr/share/nodejs
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j"$jobs"
node web/build.mjs build-wasm dist
