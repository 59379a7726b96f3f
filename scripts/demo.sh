#!/usr/bin/env bash
# The main job: set up, build, and generate text with the small real model
# (shared/models/austen-kjv-2m), decoding every token with the adaptive
# Bregman decoder (per-token k printed), beside top-k with the same seed.
# Options pass through (see bin/bregman-generate.mjs), e.g. --alpha 2 --lambda 3e-4.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
node bin/bregman-generate.mjs "$@"
