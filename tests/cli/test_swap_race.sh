#!/usr/bin/env bash
# The file-swap race (issue 16, finding 1), short CI version: 30 runs.
# The audit's full 150: BL_CLI=build/brainlesslab BL_SOURCE_DIR=. python3 tests/cli/swap_race.py 150
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/swap_race.py" "${BL_SWAP_RACE_RUNS:-30}"
