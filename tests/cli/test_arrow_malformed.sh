# Malformed Arrow IPC / Feather inputs (tests/cli/arrow_malformed.py): each
# fails with exit 1 and one line naming the file and the place.
set -euo pipefail
: "${BL_BUILD_DIR:?}" "${BL_SOURCE_DIR:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_arrow_bad.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$BL_SOURCE_DIR/tests/cli/arrow_malformed.py" "$BL_BUILD_DIR/tests/table_read" "$work" \
    "$BL_SOURCE_DIR/tests/fuzz/corpus/arrow"
