#!/usr/bin/env bash
# Generated C against the interpreter byte for byte, the cache (hit, miss,
# damaged objects, concurrent runs) and the fallbacks without a compiler:
# tests/cli/model_codegen.py says what each case proves.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: no numpy"; exit 77; }
exec /usr/bin/python3 "$here/model_codegen.py"
