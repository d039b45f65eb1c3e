#!/usr/bin/env bash
# The mpi backend is bit-identical to the reference for 1-4 ranks (see mpi_exact.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/mpi_exact.py"
