#!/usr/bin/env bash
# Kill-and-resume for a model from equations (resume.py --equations): the
# larva plan with shiu2024 written in the model language, checkpointed within
# its trials on the cpu backend (the equations row's partition kernel keeps
# its state variables in partition fields, so a snapshot holds them), killed
# by SIGKILL at seeded points and resumed: every record byte-identical to the
# uninterrupted run's, at 1 and 2 threads, and at least one resume continued
# a trial from a checkpoint within it.
set -euo pipefail
: "${BL_CLI:?}" "${BL_SOURCE_DIR:?}"
[[ -f "$BL_SOURCE_DIR/data/connectomes/larva-winding2023/manifest.json" ]] || { echo "SKIP: no larva connectome"; exit 77; }
exec /usr/bin/python3 "$(dirname "$0")/resume.py" --equations
