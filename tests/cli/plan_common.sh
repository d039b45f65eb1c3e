# Sourced (not run: CTest runs test_*.sh only) by the shell tests of
# connectome plans: test_equation_plan, test_codegen_plan, test_current_plan,
# test_eq_noise_plan, test_per_neuron_plan, test_synapse_plan,
# test_model_file_exact. What each of them wrote out before: the CLI under
# test, the repository, a work directory, fail, the larva connectome (or a
# skip), a plan's first lines, and the comparisons of records with a
# reference run. A test sets its own shell options before sourcing it.
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }

# plan_work TAG: $work, a new directory under $TMPDIR, removed on exit
# unless KEEP is set (to look at the plans and records of a failure).
plan_work() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/bl_$1.XXXXXX")
    trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
}

# need_larva: $conn, the shipped larva connectome; the test skips (77)
# without it (data/connectomes is fetched, not committed).
need_larva() {
    conn="$root/data/connectomes/larva-winding2023"
    [[ -f "$conn/manifest.json" ]] || { echo "SKIP: no larva connectome"; exit 77; }
}

# plan_head ID: a connectome plan's first lines, on the larva ($conn).
plan_head() {
cat <<T
format = "brainlesslab-plan"
format_version = 4
id = "$1"
operation = "connectome"
[connectome]
path = "$conn"
T
}

# orn_run BACKEND TRIALS DURATION_MS SEED: the larva's olfactory receptor
# neurons at 150 Hz (issue 23's stimulus), one thread, and every output the
# comparisons read (spikes, counts, final state).
orn_run() {
cat <<T
[[stimulus]]
name = "ORN"
select = { cell_type = "sensory", modality = "olfactory" }
rate_hz = 150.0
[run]
trials = $2
duration_ms = $3
seed = $4
backend = "$1"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
T
}

# same_records REF OUT WHAT MIN: counts, final v and g and every spike file
# of the record REF are OUT's byte for byte, and at least MIN files were
# compared (a record without spikes proves nothing).
same_records() {
    local f n=0
    for f in counts.npy final_v.npy final_g.npy $(cd "$1" && find spikes -type f | sort); do
        cmp -s "$1/$f" "$2/$f" || fail "$3: $f differs from the reference run"
        n=$((n + 1))
    done
    [[ $n -ge $4 ]] || fail "$3: only $n files compared"
}

# mpi_no_leak_check: under the sanitizers Open MPI's own allocations outlive
# MPI_Finalize (test_resume.sh): the mpi runs, one process or two ranks,
# skip the leak check.
mpi_no_leak_check() {
    if [ "${BL_SANITIZED:-}" = 1 ]; then export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"; fi
}

# mpirun_2 PLAN ROOT: the plan run by 2 ranks on this one machine (as root
# in a container, oversubscribed, shared memory, ranks yielding when idle).
mpirun_2() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_WAIT_POLICY=passive \
        timeout 300 mpirun -np 2 "$BL_CLI" run "$1" --root "$2" --quiet
}

# python_test TAG, a Python test on stdin: runs it with the CLI and a new
# $work as its arguments and tests/oracles (blconn) on its path, and exits
# with its status (77: skipped). Not exec: the trap then removes $work.
python_test() {
    plan_work "$1"
    export PYTHONPATH="$here/../oracles${PYTHONPATH:+:$PYTHONPATH}"
    /usr/bin/python3 - "$BL_CLI" "$work" || exit $?
    exit 0
}
