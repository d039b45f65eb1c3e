#!/usr/bin/env bash
# Regression tests for the hostile audit's findings (issue 16): hostile.py.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/hostile.py"
