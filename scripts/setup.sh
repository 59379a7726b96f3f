#!/usr/bin/env bash
# Installs what the build and the tests need, only what is missing (idempotent):
# Debian's emscripten, Highway, doctest and wabt; with --browser also Debian's
# chromium (without recommends); with --fuzz clang and libFuzzer; the npm
# devDependencies from the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=0
want_fuzz=0
for arg in "$@"; do
  [ "$arg" = "--browser" ] && want_browser=1
  [ "$arg" = "--fuzz" ] && want_fuzz=1
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
command -v emcc >/dev/null 2>&1 || missing+=(emscripten)
[ -f /usr/include/hwy/highway.h ] || missing+=(libhwy-dev)
[ -f /usr/include/doctest/doctest.h ] || missing+=(doctest-dev)
command -v wasm-objdump >/dev/null 2>&1 || missing+=(wabt)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "$want_browser" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (apt, no recommends)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
# The libFuzzer layer (scripts/fuzz.sh): clang and its runtime libraries
# (libclang_rt.fuzzer lives in libclang-rt-<N>-dev on Debian 12).
if [ "$want_fuzz" = 1 ]; then
  fuzz_missing=()
  command -v clang >/dev/null 2>&1 || fuzz_missing+=(clang)
  compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a' >/dev/null ||
    fuzz_missing+=(libclang-rt-dev)
  if [ ${#fuzz_missing[@]} -gt 0 ]; then
    echo "setup: installing ${fuzz_missing[*]} (apt)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${fuzz_missing[@]}" >/dev/null
  fi
fi
# npm ci when node_modules is absent or older than the lockfile. A node_modules
# that is a link (a second worktree sharing one install) is left alone: npm ci
# would empty the install it points to.
if [ ! -L node_modules ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  echo "setup: npm ci"
  # onnxruntime-node (via @huggingface/transformers) would download GPU binaries
  # in its install script: skip it (its CPU binary ships in the npm package).
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi
