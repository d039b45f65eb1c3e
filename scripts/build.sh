#!/usr/bin/env bash
# Configures and builds into build/ (or build-asan/ with --sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
# The mpi backend is built by default (install-deps.sh installs Debian's
# Open MPI; CI builds with it); BL_MPI=OFF in the environment builds without.
mpi=${BL_MPI:-ON}
opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DBL_MPI=$mpi)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  opts=(-DCMAKE_BUILD_TYPE=Debug -DBL_SANITIZE=ON -DBL_MPI=$mpi)
fi
cmake -S . -B "$dir" "${opts[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" >/dev/null
echo "$dir"
