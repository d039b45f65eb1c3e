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
exec /usr/bin/python3 "$(dirname "$0")/resume.py" --mpi
