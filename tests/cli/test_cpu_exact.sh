#!/usr/bin/env bash
# The fast cpu backend is bit-identical to the reference (see cpu_exact.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/cpu_exact.py"
