#!/usr/bin/env bash
# The main job: set up, build, and generate text with the small real model
# (models/austen-kjv-2m), decoding every token with two decoders side by side
# (default: adaptive Bregman and top-k 40, same seed; per-token k, p and q).
# Options pass through (see bin/bregman-generate.mjs), e.g. --a top-p:0.9 --b min-p:0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
# The build's own output is hidden (errors still reach stderr); say what runs,
# since a first run installs packages and compiles for minutes.
echo "demo: set-up and build (scripts/build.sh; minutes on a fresh machine, seconds after)" >&2
bash scripts/build.sh >/dev/null
node bin/bregman-generate.mjs "$@"
