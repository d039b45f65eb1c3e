#!/usr/bin/env bash
# Kill-and-resume: runs killed by SIGKILL at 24 seeded points (and FAILED by
# SIGTERM), resumed with run --resume, give the uninterrupted run's artifacts
# byte for byte on cpu at 1 and 2 threads (resume.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/resume.py" "$@"
