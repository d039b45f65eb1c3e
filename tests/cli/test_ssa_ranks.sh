#!/usr/bin/env bash
# Stream ownership of `operation = "ssa"` banks from plans (docs/solvers.md,
# "Stochastic banks"): a replicate's stream depends only on its index, so
#   - a bank of 16 is the first 16 replicates of a bank of 64, byte for byte;
#   - 1 thread = 2 threads;
#   - 1 rank = 2 ranks = 3 ranks (mpirun; the bank split by replicate index and
#     gathered on rank 0 into the same counts.npy and events.npy), for the direct
#     method and tau-leaping;
#   - a bank that fails (the event limit) names the same replicate whatever the
#     rank count, in a FAILED record;
#   - a 2-rank job stopped by SIGTERM (to mpirun, which passes it to the ranks)
#     ends within seconds and seals the record FAILED naming the signal, as a
#     connectome job does (the watchdog, src/experiment/xp_guard.c).
set -u
. "$(dirname "$0")/checks_common.sh"
checks_work ssa_ranks

bank() { # $1 id, $2 replicates, $3 extra [ssa] lines
    cat <<EOF
format = "brainlesslab-plan"
format_version = 4
id = "$1"
operation = "ssa"
[ssa]
species = ["A", "B", "C"]
x0 = [100, 80, 0]
replicates = $2
seed = 11
t_end = 4.0
outputs = 9
$3
[[ssa.reaction]]
rate = 0.01
reactants = { A = 1, B = 1 }
products = { C = 1 }
[[ssa.reaction]]
rate = 0.5
reactants = { C = 1 }
products = { A = 1, B = 1 }
EOF
}
run() { # $1 plan, $2 root, then CLI options -> the record dir
    local p=$1 root=$2
    shift 2
    mkdir -p "$root"
    "$BL_CLI" run "$p" --root "$root" --quiet "$@" >/dev/null 2>"$root.err" || { cat "$root.err" >&2; return 1; }
    ls -d "$root"/*/ | head -1
}
same() { # $1 $2 record dirs: counts.npy and events.npy byte for byte
    cmp -s "$1/counts.npy" "$2/counts.npy" && cmp -s "$1/events.npy" "$2/events.npy"
}

for method in direct tau-leap; do
    extra='method = "direct"'
    [ $method = tau-leap ] && extra='method = "tau-leap"
tau = 0.05'
    bank "b16" 16 "$extra" >"$work/b16-$method.toml"
    bank "b64" 64 "$extra" >"$work/b64-$method.toml"
    d16=$(run "$work/b16-$method.toml" "$work/$method-16" --threads 1) || fail "$method bank 16 did not run"
    d64=$(run "$work/b64-$method.toml" "$work/$method-64" --threads 1) || fail "$method bank 64 did not run"
    d64t=$(run "$work/b64-$method.toml" "$work/$method-64t2" --threads 2) || fail "$method bank 64 on 2 threads"
    if /usr/bin/python3 - "$d16" "$d64" <<'EOF'; then ok "$method: bank of 16 = the first 16 of a bank of 64"; else fail "$method: bank 16 is not the first 16 of 64"; fi
import sys, numpy as np
a, b = sys.argv[1], sys.argv[2]
c16, c64 = np.load(a + "/counts.npy"), np.load(b + "/counts.npy")
e16, e64 = np.load(a + "/events.npy"), np.load(b + "/events.npy")
sys.exit(0 if c16.shape[0] == 16 and np.array_equal(c16, c64[:16]) and np.array_equal(e16, e64[:16]) else 1)
EOF
    same "$d64" "$d64t" && ok "$method: 1 thread = 2 threads (64 replicates)" || fail "$method: 1 thread != 2 threads"
done

probe=$("$BL_CLI" simulate --connectome "${BL_SOURCE_DIR:-.}/data/connectomes/celegans-varshney2011" --preset shiu2024 \
  --duration-ms 1 --out "$work/probe" --backend mpi 2>&1 || true)
if ! command -v mpirun >/dev/null || [[ "$probe" == *"unknown backend"* ]]; then
    echo "mpirun part skipped: built without MPI (no mpi backend or no mpirun)"
else
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_WAIT_POLICY=passive
    export LSAN_OPTIONS="suppressions=${BL_SOURCE_DIR:-.}/tests/lsan_openmpi.supp:print_suppressions=0"
    [ "${BL_SANITIZED:-}" = 1 ] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0:symbolize=0:detect_leaks=0"
    for method in direct tau-leap; do
        one=$(ls -d "$work/$method-64"/*/ | head -1)
        for np_threads in "2 1" "3 2"; do
            set -- $np_threads
            root="$work/$method-np$1"
            mkdir -p "$root"
            if mpirun -np "$1" "$BL_CLI" run "$work/b64-$method.toml" --root "$root" --quiet --threads "$2" \
                >/dev/null 2>"$root.err"; then
                d=$(ls -d "$root"/*/ | head -1)
                n=$(ls -d "$root"/*/ | wc -l)
                if [ "$n" = 1 ] && same "$one" "$d" && "$BL_CLI" verify "$d" >/dev/null 2>&1 &&
                    grep -q "\"ranks\":[[:space:]]*$1" "$d/summary.json"; then
                    ok "$method: 1 rank = $1 ranks ($2 threads each): one record, counts.npy and events.npy byte for byte"
                else
                    fail "$method: $1 ranks: $n records, or they differ from one rank's"
                fi
            else
                fail "$method: mpirun -np $1 failed: $(tail -3 "$root.err")"
            fi
        done
    done
    # A failing bank names the lowest failing replicate, whatever the ranks:
    # at 248 events only replicate 10 fails (rank 1's half on 2 ranks); at
    # 245 replicates 5 and 10 (one on each rank) fail, and 5 is named.
    for limit in 248 245; do
        bank "lim$limit" 13 "max_events = $limit" |
            sed 's/^seed = 11/seed = 7/; s/^t_end = 4.0/t_end = 5.0/; s/^outputs = 9/outputs = 11/' >"$work/lim$limit.toml"
        mkdir -p "$work/lim$limit-1" "$work/lim$limit-2"
        "$BL_CLI" run "$work/lim$limit.toml" --root "$work/lim$limit-1" --quiet >/dev/null 2>&1
        mpirun -np 2 "$BL_CLI" run "$work/lim$limit.toml" --root "$work/lim$limit-2" --quiet >/dev/null 2>&1
        m1=$(grep -h '"message"' "$work/lim$limit-1"/*/manifest.json 2>/dev/null)
        m2=$(grep -h '"message"' "$work/lim$limit-2"/*/manifest.json 2>/dev/null)
        if [ -n "$m1" ] && [ "$m1" = "$m2" ] && [ -e "$(ls -d "$work/lim$limit-2"/*/ | head -1)/FAILED" ] &&
            [[ "$m1" == *"event limit"* ]]; then
            ok "event limit $limit: the same FAILED record on 1 and 2 ranks:$(echo "$m1" | sed 's/.*"message"://')"
        else
            fail "event limit $limit under 2 ranks: '$m1' vs '$m2'"
        fi
    done
    # SIGTERM to mpirun mid-bank. A bank of millions of events per replicate
    # runs for minutes; the signal comes once the record is reserved and the
    # ranks are drawing. mpirun passes SIGTERM to the ranks and SIGKILLs them
    # odls_base_sigkill_timeout seconds later (1 by default; the ASan build's
    # sealing is slower, so it gets 10 s, as in test_mpi_record.sh).
    [ "${BL_SANITIZED:-}" = 1 ] && export OMPI_MCA_odls_base_sigkill_timeout=10
    bank "long" 8 "max_events = 2000000000" |
        sed 's/^x0 = .*/x0 = [100000, 80000, 0]/; s/^t_end = 4.0/t_end = 1000.0/' >"$work/long.toml"
    mkdir -p "$work/term"
    mpirun -np 2 "$BL_CLI" run "$work/long.toml" --root "$work/term" --quiet --threads 1 \
        >"$work/term.out" 2>"$work/term.err" &
    job=$!
    for _ in $(seq 1 300); do
        [ -n "$(ls "$work/term" 2>/dev/null)" ] && break
        sleep 0.1
    done
    sleep 1
    kill -TERM "$job" 2>/dev/null
    start=$(date +%s)
    if timeout 60 tail --pid="$job" -f /dev/null; then
        rc=0
        wait "$job" || rc=$?
        took=$(($(date +%s) - start))
        rec=$(ls -d "$work/term"/*/ 2>/dev/null | head -1)
        if [ "$rc" != 0 ] && [ -n "$rec" ] && [ -f "$rec/FAILED" ] && [ ! -f "$rec/DONE" ] &&
            grep -q '"message":.*stopped by SIGTERM' "$rec/manifest.json"; then
            ok "SIGTERM to a 2-rank bank: job exited $rc after ${took} s, record FAILED naming SIGTERM"
        else
            fail "SIGTERM to a 2-rank bank: exit $rc, record '${rec}': $(ls -a "$rec" 2>/dev/null | tr '\n' ' ') $(tail -3 "$work/term.err")"
        fi
    else
        kill -9 "$job" 2>/dev/null
        fail "SIGTERM to a 2-rank bank: the job did not end within 60 s"
    fi
fi

checks_done "ssa ranks"
