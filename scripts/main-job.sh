#!/usr/bin/env bash
# The main job: install what is missing, build, and run the shipped larva plan
# (ORNs at 150 Hz, 30 x 1 s) into a new sealed record under records/, then verify it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
./build/brainlesslab run plans/larva-orn-150hz.toml --root records
record=$(ls -d records/larva-orn-150hz-* | tail -n 1)
./build/brainlesslab verify "$record"
