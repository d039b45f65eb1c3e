#!/usr/bin/env bash
# Screens: every condition equals its own single-plan run, bit for bit (screen_equivalence.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/screen_equivalence.py"
