# Sourced (not run: CTest runs test_*.sh only) by the shell tests that run
# every check and count the failures rather than stop at the first
# (test_solver_plans, test_ode_lang_plans, test_ode_gradient_plans,
# test_ssa_ranks, test_flyvis_plan): the CLI under test, a work directory,
# fail and ok, the refusal check of a malformed plan, and the verdict. The
# NumPy Van der Pol they compare records with is vdp_numpy.py, beside this.
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
failures=0
# The tests pipe plans into their checks (`plan ... | bad NAME TEXT`): the
# last command of a pipeline must run in this shell, or the failures it
# counts are lost with its subshell and the test passes whatever happened.
shopt -s lastpipe

# checks_work TAG: $work, a new directory under $TMPDIR, removed on exit.
checks_work() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/bl_$1.XXXXXX")
    trap 'rm -rf "$work"' EXIT
}

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
ok() { echo "ok   $*"; }

# bad NAME TEXT, the plan on stdin: `check` refuses it with exit 1 and one
# line on stderr that names the file (NAME.toml) and holds TEXT (a grep
# pattern: the key, the equation, the term at fault).
bad() {
    cat >"$work/$1.toml"
    "$BL_CLI" check "$work/$1.toml" >/dev/null 2>"$work/$1.err"
    rc=$?
    if [ $rc -eq 1 ] && [ "$(wc -l <"$work/$1.err")" -eq 1 ] && grep -q "$1.toml" "$work/$1.err" && grep -q -- "$2" "$work/$1.err"; then
        ok "$1: $(cat "$work/$1.err")"
    else
        fail "$1: rc $rc, stderr: $(cat "$work/$1.err")"
    fi
}

# checks_done WHAT: exit 1 after any failure, else say that WHAT passed.
checks_done() {
    if [ $failures -gt 0 ]; then
        echo "$failures failure(s)" >&2
        exit 1
    fi
    echo "$1: all checks passed"
}

# plan_top ID OPERATION: a plan's first lines, up to its operation's table.
plan_top() {
    printf 'format = "brainlesslab-plan"\nformat_version = 4\nid = "%s"\noperation = "%s"\n[%s]\n' "$1" "$2" "$2"
}
