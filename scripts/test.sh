#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test; then
# the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The test-only JavaScript oracles (apache-arrow, parquet-wasm), exactly as pinned.
(cd tests/js && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
jobs=$(nproc)
echo "== plain build"
bash scripts/build.sh >/dev/null
ctest --test-dir build --output-on-failure -j "$jobs"
# What the oracles and exactness tests compared (CTest keeps passing output in its log).
grep -hE "^(oracle |ok   cpu-vs-reference|ok   mpi|ok   malformed)" build/Testing/Temporary/LastTest.log | sort | uniq || true
# Release (-O3) must build with warnings as errors too; its tests are the
# RelWithDebInfo build's (same code, same -ffp-contract=off).
echo "== Release build (compile only)"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DBL_MPI="${BL_MPI:-ON}" >/dev/null
cmake --build build-release -j "$jobs" >/dev/null
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build"
bash scripts/build.sh --sanitize >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  BL_SANITIZED=1 ctest --test-dir build-asan --output-on-failure -j "$jobs"
