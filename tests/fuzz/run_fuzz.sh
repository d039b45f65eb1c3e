#!/usr/bin/env bash
# Build the libFuzzer harnesses with clang and run each for a bounded time.
#   npy, csv, parquet, thrift, arrow, flatbuf   a reader alone (small limits)
#   select                     the selector's JSON form with the connectome and selection files alone
#   eqlang                     the model language (src/models/lang/) alone, production bounds
#   plan, connectome, verify, bundle   against the whole library, built with clang into
#                              $BL_FUZZ_WORK/lib (cmake -DBL_FUZZ=ON, no MPI)
#   usage: tests/fuzz/run_fuzz.sh [seconds per harness, default 20] [harness...]
#   BL_FUZZ_RUNS=N (or "npy=N csv=M ..."): stop each harness after N executions
#   instead of a time (seconds > 0 then only caps it); the
#   documented long run: BL_FUZZ_RUNS=1000000 tests/fuzz/run_fuzz.sh 0 plan connectome verify bundle
#   env:   BL_FUZZ_WORK  work folder (binaries, grown corpora, crash files);
#                        default $BL_BUILD_DIR/fuzz, else build/fuzz in the repo
#          CC_FUZZ       the clang to use (default clang, else clang-14)
# The seed corpora in tests/fuzz/corpus/ are read, never written: new inputs
# go to the work folder. Exit status 0 only if no harness found a failure.
set -euo pipefail

secs=${1:-20}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(npy csv parquet thrift arrow flatbuf select eqlang plan connectome verify bundle)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${BL_FUZZ_WORK:-${BL_BUILD_DIR:-$root/build}/fuzz}
mkdir -p "$work"

cc=${CC_FUZZ:-}
if [ -z "$cc" ]; then
    cc=$(command -v clang || command -v clang-14 || true)
fi
if [ -z "$cc" ]; then
    echo "run_fuzz.sh: no clang found" >&2
    exit 2
fi

flags=(-std=c11 -g -O1 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
       -ffp-contract=off -fno-fast-math -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer -I"$root/include" -I"$root/src" -I"$root/tests/fuzz")
# Small CSV limits and read chunks so that short inputs reach the limits and
# straddle chunk boundaries (the defaults are 1 MiB, 100000 fields, 64 KiB),
# and small buffers, which keep the sanitizers' per-allocation cost down.
csv_small=(-DCSV_CHUNK=7 -DCSV_MAX_FIELD_BYTES=64 -DCSV_MAX_FIELDS=32 -DCSV_MAX_ROW_BYTES=512
           -DCSV_GZ_BUFFER=1024 -DCSV_BLOCK=128)

# The Parquet and Arrow readers are built exactly as in production: the same
# expansion bound (BL_TABLE_EXPANSION decoded bytes per file byte, table.h,
# src/io/table_budget.c), no override, so fuzzing explores the bound that
# ships. At -max_len=8192 that is at most 8 MiB decoded per input.
pq_srcs=("$root/src/io/table_parquet.c" "$root/src/io/table_budget.c" "$root/src/io/parquet_chunk.c" "$root/src/io/parquet_thrift.c" "$root/src/io/parquet_meta.c"
         "$root/src/io/parquet_codec.c" "$root/src/io/parquet_decode.c" "$root/src/io/column.c")
pq_libs=(-lsnappy -lz -lzstd -lbrotlidec -llz4 -lcrypto)
# Every reader opens its input through src/core/file.c (regular files only,
# read once and hashed as read), which hashes with libcrypto (src/core/hash.c).
core=("$root/src/core/file.c" "$root/src/core/hash.c")

# The library harnesses: one clang build of the library (no MPI), reused.
lib_built=
build_lib() {
    [ -n "$lib_built" ] && return 0
    local cxx=${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}
    echo "== building the library with $cc for fuzzing ($work/lib)"
    CC=$cc CXX=$cxx cmake -S "$root" -B "$work/lib" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBL_FUZZ=ON \
        -DBL_MPI=OFF >/dev/null
    cmake --build "$work/lib" -j "$(nproc)" --target fuzz_plan fuzz_connectome fuzz_verify fuzz_bundle >/dev/null
    lib_built=1
}

# One thread per harness: the loaders' OpenMP would only add thread start-up
# to every execution.
export OMP_NUM_THREADS=1
status=0
for h in "${harnesses[@]}"; do
    bin=$work/fuzz_$h
    case $h in
    npy) srcs=("$root/src/io/npy.c" "${core[@]}") extra=(-I"$root/src") libs=(-lcrypto) ;;
    csv) srcs=("$root/src/io/csv.c" "${core[@]}") extra=("${csv_small[@]}" -I"$root/src") libs=(-lcsv -lz -lcrypto) ;;
    plan|connectome|verify|bundle) build_lib; bin=$work/lib/fuzz_$h ;;
    parquet) srcs=("${pq_srcs[@]}" "${core[@]}") extra=(-I"$root/src") libs=("${pq_libs[@]}") ;;
    thrift) srcs=("$root/src/io/parquet_thrift.c" "$root/src/io/parquet_meta.c") extra=(-I"$root/src") libs=() ;;
    arrow) srcs=("$root"/src/io/table_arrow.c "$root"/src/io/arrow_*.c "$root/src/io/table_budget.c" "$root/src/io/column.c"
           "${core[@]}") extra=()
           libs=(-llz4 -lzstd -lcrypto) ;;
    flatbuf) srcs=("$root/src/io/arrow_fb.c" "$root/src/io/arrow_meta.c") extra=() libs=() ;;
    select) srcs=("$root"/src/connectome/select*.c "$root/src/connectome/connectome.c"
                  "$root/src/connectome/connectome_depth.c" "$root/src/core/text.c" "$root/src/core/json_check.c") extra=()
           libs=(-lcjson) ;;
    eqlang) srcs=("$root"/src/models/lang/eq_units.c "$root"/src/models/lang/eq_parse.c
                  "$root"/src/models/lang/eq_check.c "$root"/src/models/lang/eq_method.c
                  "$root"/src/models/lang/eq_linear.c "$root"/src/models/lang/eq_lower.c
                  "$root"/src/models/lang/eq_vm.c "$root"/src/models/lang/eq_model.c
                  "$root"/src/models/lang/eq_pop.c "$root"/src/models/lang/eq_brian2.c
                  "$root"/src/models/lang/eq_syn.c "$root"/src/models/lang/eq_cgen.c
                  "$root"/src/models/lang/eq_diff.c "$root"/src/models/lang/eq_stiff.c "${core[@]}" "$root/src/core/json_check.c") extra=(-I"$root/src")
           libs=(-lcjson -lcrypto -ldl -lm) ;;
    *) echo "run_fuzz.sh: unknown harness '$h' (npy, csv, parquet, thrift, arrow, flatbuf, select, eqlang, plan, connectome," \
            "verify, bundle)" >&2; exit 2 ;;
    esac
    case $h in
    plan|connectome|verify|bundle) ;;
    *) echo "== building $bin"
       "$cc" "${flags[@]}" "${extra[@]}" -o "$bin" "$root/tests/fuzz/fuzz_$h.c" "${srcs[@]}" \
           "$root/src/core/error.c" "${libs[@]}" ;;
    esac
    corpus=$work/corpus_$h
    mkdir -p "$corpus"
    limit=(-max_total_time="$secs")
    # BL_FUZZ_RUNS: one count for every harness ("1000000"), or one per
    # harness ("npy=60000 csv=35000 ..."); with seconds > 0 as well, the time
    # is only a cap. A count, not a time, makes a run the same on any machine.
    runs=${BL_FUZZ_RUNS:-}
    if [[ $runs == *=* ]]; then
        runs=$(tr ' ' '\n' <<<"$runs" | sed -n "s/^$h=//p")
    fi
    if [ -n "$runs" ]; then
        limit=(-runs="$runs")
        [ "$secs" != 0 ] && limit+=(-max_total_time="$secs")
    fi
    # BL_FUZZ_SEED: a fixed libFuzzer seed (CI's smoke run), so a smoke failure reproduces.
    [ -n "${BL_FUZZ_SEED:-}" ] && limit+=(-seed="$BL_FUZZ_SEED")
    echo "== running fuzz_$h (${limit[*]})"
    # -timeout: an input taking over 10 s counts as a hang; -rss_limit_mb: as a leak of memory.
    if ! (cd "$work" && "$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
            -max_len=8192 -print_final_stats=1 -artifact_prefix="$work/crash_${h}_" \
            "$corpus" "$root/tests/fuzz/corpus/$h"); then
        echo "== fuzz_$h FAILED: see $work/crash_${h}_*" >&2
        status=1
    fi
done
exit $status
