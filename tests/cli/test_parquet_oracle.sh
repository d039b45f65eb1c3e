#!/usr/bin/env bash
# The Parquet reader and writer against an independent implementation
# (parquet-wasm, pinned in tests/js): fixtures written by parquet-wasm are read
# by our reader value by value (tests/parquet/parquet_oracle.c), and files our
# writer wrote are read back by parquet-wasm (tests/js/parquet_readback.mjs).
# Skips (77) only when the npm oracles are not installed (cd tests/js && npm ci).
set -euo pipefail
src=${BL_SOURCE_DIR:?}
oracle=${BL_PARQUET_ORACLE:-${BL_BUILD_DIR:?}/tests/parquet_oracle}
js=$src/tests/js
if [ ! -d "$js/node_modules/parquet-wasm" ] || [ ! -d "$js/node_modules/apache-arrow" ]; then
    echo "SKIP: tests/js/node_modules missing (cd tests/js && npm ci)"
    exit 77
fi
if ! command -v node >/dev/null; then
    echo "SKIP: node not found"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node "$js/parquet_fixtures.mjs" "$work/fx"
"$oracle" read "$work/fx"

mkdir -p "$work/ours"
"$oracle" write "$work/ours"
node "$js/parquet_readback.mjs" "$work/ours"
echo "parquet oracle: ok"
