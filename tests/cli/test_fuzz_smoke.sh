#!/usr/bin/env bash
# Smoke-fuzz every harness for a fixed count of executions (about 10 seconds each) (tests/fuzz/run_fuzz.sh): the .npy, CSV, Parquet and Arrow readers, the Thrift and flatbuffer layers, plans, connectome directories and record verification,
# where clang with libFuzzer is available; elsewhere skip (exit 0).
set -u
# The harnesses carry their own ASan + UBSan, so the sanitized suite would only
# repeat the same run.
if [ "${BL_SANITIZED:-}" = 1 ]; then
    echo "skipped: already fuzzed (with sanitizers) in the plain suite"
    exit 0
fi
root=${BL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
build=${BL_BUILD_DIR:-$root/build}

cc=${CC_FUZZ:-$(command -v clang || command -v clang-14 || true)}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
cat > "$probe/probe.c" <<'C'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void)data; (void)size; return 0; }
C
if [ -z "$cc" ] || ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/probe.c" \
        -o "$probe/probe" >/dev/null 2>&1; then
    echo "skipped: no libFuzzer"
    exit 0
fi
rm -rf "$probe"
# A fixed seed and a fixed count of executions per harness (about 10 s each on
# a 2-core machine), so that the smoke run is the same run on every machine: a
# time-bounded run went further on CI's faster machine than here and met a
# fault no run here had reached. The 150 s cap only bounds a very slow machine
# (a loaded 2-core machine needs up to ~60 s for the slowest harness).
smoke_runs="npy=60000 csv=35000 parquet=35000 thrift=600000 arrow=7000 flatbuf=3000000 select=2000000
            eqlang=140000 plan=100000 connectome=65000 verify=40000 bundle=50000"
CC_FUZZ=$cc BL_FUZZ_WORK=$build/fuzz-smoke BL_FUZZ_SEED=${BL_FUZZ_SEED:-1} BL_FUZZ_RUNS=${BL_FUZZ_RUNS:-$smoke_runs} \
    exec bash "$root/tests/fuzz/run_fuzz.sh" 150
