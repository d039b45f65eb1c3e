#!/usr/bin/env bash
# Plan selectors pinned across the move of selection into the library: select_plans.py.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/select_plans.py"
