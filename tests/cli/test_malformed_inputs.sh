#!/usr/bin/env bash
# >= 20 malformed .npy, CSV and connectome-directory inputs, each rejected with
# one line naming the file and the place (see malformed_inputs.py).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/malformed_inputs.py"
