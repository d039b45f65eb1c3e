#!/usr/bin/env bash
# Regression tests for the third reliability audit (issue 26): reliability.py,
# one or more checks per finding (map: docs/reliability.md).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/reliability.py"
