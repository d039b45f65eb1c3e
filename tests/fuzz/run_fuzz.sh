#!/usr/bin/env bash
# Build the libFuzzer harnesses (fuzz_npy, fuzz_csv, fuzz_parquet, fuzz_thrift, fuzz_arrow, fuzz_flatbuf) with clang and run each
# for a bounded time.
#   usage: tests/fuzz/run_fuzz.sh [seconds per harness, default 20] [harness...]
#   env:   BL_FUZZ_WORK  work folder (binaries, grown corpora, crash files);
#                        default $BL_BUILD_DIR/fuzz, else build/fuzz in the repo
#          CC_FUZZ       the clang to use (default clang, else clang-14)
# The seed corpora in tests/fuzz/corpus/ are read, never written: new inputs
# go to the work folder. Exit status 0 only if no harness found a failure.
set -euo pipefail

secs=${1:-20}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(npy csv parquet thrift arrow flatbuf)

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

# The Parquet reader: rows and string bytes at most 64 per input byte, so that
# no input of -max_len bytes can justify more than a few MiB.
pq_srcs=("$root/src/io/table_parquet.c" "$root/src/io/parquet_thrift.c" "$root/src/io/parquet_meta.c"
         "$root/src/io/parquet_codec.c" "$root/src/io/parquet_decode.c")
pq_libs=(-lsnappy -lz -lzstd -lbrotlidec -llz4)

status=0
for h in "${harnesses[@]}"; do
    case $h in
    npy) srcs=("$root/src/io/npy.c") extra=() libs=() ;;
    csv) srcs=("$root/src/io/csv.c") extra=("${csv_small[@]}") libs=(-lcsv -lz) ;;
    parquet) srcs=("${pq_srcs[@]}") extra=(-DPQ_EXPANSION=64u -I"$root/src") libs=("${pq_libs[@]}") ;;
    thrift) srcs=("$root/src/io/parquet_thrift.c" "$root/src/io/parquet_meta.c") extra=(-I"$root/src") libs=() ;;
    arrow) srcs=("$root"/src/io/table_arrow.c "$root"/src/io/arrow_*.c "$root/src/io/column.c") extra=()
           libs=(-llz4 -lzstd) ;;
    flatbuf) srcs=("$root/src/io/arrow_fb.c" "$root/src/io/arrow_meta.c") extra=() libs=() ;;
    *) echo "run_fuzz.sh: unknown harness '$h' (npy, csv, parquet, thrift, arrow, flatbuf)" >&2; exit 2 ;;
    esac
    bin=$work/fuzz_$h
    echo "== building $bin"
    "$cc" "${flags[@]}" "${extra[@]}" -o "$bin" "$root/tests/fuzz/fuzz_$h.c" "${srcs[@]}" \
        "$root/src/core/error.c" "${libs[@]}"
    corpus=$work/corpus_$h
    mkdir -p "$corpus"
    echo "== running fuzz_$h for ${secs}s"
    # -timeout: an input taking over 10 s counts as a hang; -rss_limit_mb: as a leak of memory.
    if ! (cd "$work" && "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
            -max_len=8192 -print_final_stats=1 -artifact_prefix="$work/crash_${h}_" \
            "$corpus" "$root/tests/fuzz/corpus/$h"); then
        echo "== fuzz_$h FAILED: see $work/crash_${h}_*" >&2
        status=1
    fi
done
exit $status
