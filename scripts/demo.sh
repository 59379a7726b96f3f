#!/usr/bin/env bash
# The main job: set up, build, and decode a sample logits row with the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
node bin/bregman-decode.mjs "$@"
