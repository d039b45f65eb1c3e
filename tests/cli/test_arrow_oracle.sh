# Arrow IPC / Feather v2 reader against apache-arrow (JS): fixtures of every
# type, with nulls, dictionaries, several batches and empty tables, as files
# and streams, uncompressed and LZ4_FRAME / ZSTD, compared value by value
# (tests/js/arrow_fixtures.mjs writes them, tests/tools/table_oracle.c compares).
# Skips (77) when the npm oracles are not installed (cd tests/js && npm ci).
set -euo pipefail
: "${BL_BUILD_DIR:?}" "${BL_SOURCE_DIR:?}"
js=$BL_SOURCE_DIR/tests/js
if [ ! -d "$js/node_modules/apache-arrow" ] || ! command -v node >/dev/null; then
    echo "skipped: no tests/js/node_modules (run: cd tests/js && npm ci)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_arrow_oracle.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$js" && node arrow_fixtures.mjs "$work")
"$BL_BUILD_DIR/tests/table_oracle" "$work"
