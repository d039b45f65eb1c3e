#!/usr/bin/env bash
# check/run/verify end to end, tampering, overwrite refusal, SIGKILL (run_record.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/run_record.py"
