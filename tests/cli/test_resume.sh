#!/usr/bin/env bash
# Kill-and-resume (resume.py): runs killed by SIGKILL at 24 seeded points (and
# FAILED by SIGTERM), resumed with run --resume, give the uninterrupted run's
# artifacts byte for byte on cpu at 1 and 2 threads; then 8 kills under
# mpirun -np 2 when the build has MPI.
set -euo pipefail
: "${BL_CLI:?}" "${BL_SOURCE_DIR:?}"
/usr/bin/python3 "$(dirname "$0")/resume.py"
tmp=$(mktemp -d /tmp/bl_resume_probe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
probe=$("$BL_CLI" simulate --connectome "$BL_SOURCE_DIR/data/connectomes/celegans-varshney2011" --preset shiu2024 \
  --duration-ms 1 --out "$tmp/probe" --backend mpi 2>&1 || true)
if ! command -v mpirun >/dev/null || [[ "$probe" == *"unknown backend"* ]]; then
  echo "mpirun part skipped: built without MPI (no mpi backend or no mpirun)"
  exit 0
fi
# Open MPI's own allocations outlive MPI_Finalize, some in plugins it has
# unloaded (no module to suppress by): under the sanitizers the mpirun pass
# checks memory errors but not leaks, as test_mpi_record.sh does; the pass
# above checked the same code's leaks without MPI. A killed rank's survivors
# get the longer grace instrumented sealing needs.
export LSAN_OPTIONS="suppressions=$BL_SOURCE_DIR/tests/lsan_openmpi.supp:print_suppressions=0"
[ "${BL_SANITIZED:-}" = 1 ] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0:symbolize=0:detect_leaks=0"
[ "${BL_SANITIZED:-}" = 1 ] && export OMPI_MCA_odls_base_sigkill_timeout=10
exec /usr/bin/python3 "$(dirname "$0")/resume.py" --mpi
