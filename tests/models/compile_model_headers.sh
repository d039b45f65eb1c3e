#!/usr/bin/env bash
# Compile src/models' equation headers as C++ (g++) or CUDA (nvcc, with FMA
# contraction off as the exact kernels require). Exit 77 (skipped) when the
# compiler is absent. Usage: compile_model_headers.sh cxx|cuda
set -euo pipefail
src=${BL_SOURCE_DIR:?}
probe=$src/tests/models/probe_model_headers.c
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
inc=(-I"$src/include" -I"$src/src")
case "${1:-}" in
  cxx)
    command -v g++ >/dev/null || { echo "g++ not found: skipped"; exit 77; }
    g++ -x c++ -std=c++17 -Wall -Wextra -Werror -ffp-contract=off "${inc[@]}" -c "$probe" -o "$out/probe.o"
    gcc -x c -std=c11 -Wall -Wextra -Werror -ffp-contract=off "${inc[@]}" -c "$probe" -o "$out/probe_c.o"
    ;;
  cuda)
    nvcc=${BL_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    [ -x "$nvcc" ] || { echo "nvcc not found: skipped"; exit 77; }
    "$nvcc" --fmad=false -x cu "${inc[@]}" -c "$probe" -o "$out/probe_cu.o"
    ;;
  *) echo "usage: $0 cxx|cuda" >&2; exit 2 ;;
esac
echo "model headers compile ($1)"
