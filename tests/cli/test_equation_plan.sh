#!/usr/bin/env bash
# Issue 23, first acceptance item: the shiu2024 model written in the model
# language, pasted into the larva plan in place of `preset = "shiu2024"`,
# runs on the reference backend through the interpreter and gives the
# preset's spikes, counts and final state byte for byte (the stimulus rules,
# such as the Poisson-target refractory rule, unchanged), and so do the cpu
# (1, 2, 4 threads), auto and mpi (1 and 2 ranks) backends. Also: preset and
# equations together, a missing delay and an unknown key are refused naming
# the key.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
plan_work eqplan
need_larva

head_plan() { plan_head larva-orn-150hz-short; orn_run "$1" 3 200.0 20241002; } # $1: backend
model_block() {
cat <<'T'
[model]
method = "linear"
equations = """
dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)
dg/dt = -g / tau : volt (unless refractory)
"""
threshold = "v > v_th"
reset = "v = v_rst; g = 0*mV"
refractory = "t_rfc"
on_pre = "g += w"
weight = "count * sign * w_syn"
delay = "1.8 ms"
on_input = "v += f_poi * w_syn"
[model.parameters]
v_0 = "-52 mV"
v_rst = "-52 mV"
v_th = "-45 mV"
t_mbr = "20 ms"
tau = "5 ms"
t_rfc = "2.2 ms"
w_syn = "0.275 mV"
f_poi = 250
T
}
{ head_plan reference; printf '[model]\npreset = "shiu2024"\n'; } >"$work/preset.toml"
{ head_plan reference; model_block; } >"$work/eq.toml"
{ head_plan auto; model_block; } >"$work/eq_auto.toml"

"$BL_CLI" run "$work/preset.toml" --root "$work/rec" >"$work/preset.log" 2>&1 || { cat "$work/preset.log"; fail "preset run"; }
"$BL_CLI" run "$work/eq.toml" --root "$work/rec" >"$work/eq.log" 2>&1 || { cat "$work/eq.log"; fail "equation run"; }
# Each run writes its own record: the preset's and the equation model's.
mapfile -t recs < <(ls -d "$work"/rec/*/ | sort)
[[ ${#recs[@]} -eq 2 ]] || fail "expected 2 records, got ${#recs[@]}: ${recs[*]}"
/usr/bin/python3 - "$work" "${recs[@]}" <<'PY' || fail "equation model differs from the preset"
import sys, os, json, glob, numpy as np
work, recs = sys.argv[1], sys.argv[2:]
def kind(r):
    for name in ("plan.resolved.json", "plan.json", "record.json"):
        p = os.path.join(r, name)
        if os.path.exists(p):
            return "equations" if '"equations"' in open(p).read() else "preset"
    txt = "".join(open(f, errors="replace").read() for f in glob.glob(os.path.join(r, "*.json")))
    return "equations" if "equations" in txt else "preset"
by = {kind(r): r for r in recs}
assert set(by) == {"preset", "equations"}, by
a, b = by["preset"], by["equations"]
fa = sorted(os.path.relpath(f, a) for f in glob.glob(os.path.join(a, "**", "*"), recursive=True)
            if os.path.isfile(f) and (f.endswith(".npy") or "spikes" in f))
bad = 0
for rel in fa:
    if not any(rel.endswith(x) for x in ("counts.npy", "final_v.npy", "final_g.npy")) and "spikes" not in rel:
        continue
    pa, pb = os.path.join(a, rel), os.path.join(b, rel)
    if not os.path.exists(pb):
        print("missing in the equation record:", rel); bad = 1; continue
    if open(pa, "rb").read() == open(pb, "rb").read():
        print("identical:", rel); continue
    bad = 1
    if rel.endswith(".npy"):
        x, y = np.load(pa), np.load(pb)
        d = np.argwhere(x != y)
        i = tuple(d[0]) if len(d) else None
        print(f"DIFFER: {rel}: first at {i}: preset {x[i]!r} equations {y[i]!r}" if i is not None
              else f"DIFFER: {rel}: shapes {x.shape} {y.shape}")
    else:
        print("DIFFER:", rel)
need = [r for r in fa if r.endswith(("counts.npy", "final_v.npy", "final_g.npy"))]
if len(need) < 3 or not any("spikes" in r for r in fa):
    print("the records lack counts/final_v/final_g/spikes:", fa); bad = 1
c = np.load(os.path.join(a, [r for r in fa if r.endswith("counts.npy")][0]))
if c.sum() == 0:
    print("no spikes at all: the comparison proves nothing"); bad = 1
print("spikes in the preset run:", int(c.sum()))
sys.exit(bad)
PY

# The shipped model file (models/shiu2024.toml, the preset's alias), named by
# the plan relative to itself, gives the preset's record byte for byte too; so
# does the shipped text itself through `file =` with an absolute path.
mkdir -p "$work/models"
cp "$root/models/shiu2024.toml" "$work/models/shiu2024.toml"
{ head_plan reference; printf '[model]\nfile = "models/shiu2024.toml"\n'; } >"$work/file.toml"
"$BL_CLI" run "$work/file.toml" --root "$work/recf" >"$work/file.log" 2>&1 || { cat "$work/file.log"; fail "file run"; }
prec=$(grep -L '"equations"' "$work"/rec/*/manifest.json | xargs dirname)
frec=$(ls -d "$work"/recf/*/)
for f in counts.npy final_v.npy final_g.npy $(cd "$prec" && find spikes -type f | sort); do
    cmp -s "$prec/$f" "$frec/$f" || fail "model file: $f differs from the preset's"
done
echo "identical: preset = \"shiu2024\" and file = \"models/shiu2024.toml\" (counts, final state, spikes)"
# The file is an input of the record, named by the SHA-256 of the bytes read.
sha=$(sha256sum "$root/models/shiu2024.toml" | cut -d' ' -f1)
grep -rq "$sha" "$frec"/manifest.json || fail "model file: its SHA-256 is not in the record's manifest"
# The shipped text and the plan's block compile to the same model: the inline
# record's and the file record's resolved model tables are the same JSON.
/usr/bin/python3 - "$work" <<'PY' || fail "model file: recorded model differs from the inline block's"
import sys, json, glob
w = sys.argv[1]
def model(pattern):
    for m in glob.glob(pattern):
        d = json.load(open(m))
        s = json.dumps(d, sort_keys=True)
        if '"equations"' in s:
            def find(x):
                if isinstance(x, dict):
                    if "model" in x and isinstance(x["model"], dict) and "equations" in x["model"]:
                        return x["model"]
                    for v in x.values():
                        r = find(v)
                        if r is not None:
                            return r
                return None
            return find(d)
a, b = model(w + "/rec/*/manifest.json"), model(w + "/recf/*/manifest.json")
assert a is not None and a == b, (a, b)
print("the same recorded model: inline block and model file")
PY
# Refusals: file with another key, a missing file, a file whose model is wrong
# (named by the file's own path and line).
{ head_plan reference; printf '[model]\nfile = "models/shiu2024.toml"\nmethod = "euler"\n'; } >"$work/file_extra.toml"
if "$BL_CLI" check "$work/file_extra.toml" >"$work/o" 2>&1; then fail "file with method accepted"; fi
grep -q "method" "$work/o" || { cat "$work/o"; fail "file+method: message"; }
{ head_plan reference; printf '[model]\nfile = "models/nope.toml"\n'; } >"$work/file_missing.toml"
if "$BL_CLI" check "$work/file_missing.toml" >"$work/o" 2>&1; then fail "missing model file accepted"; fi
grep -q 'model.file: "models/nope.toml"' "$work/o" || { cat "$work/o"; fail "missing file: message"; }
sed 's/^threshold = "v > v_th"/threshold = "u > v_th"/' "$root/models/shiu2024.toml" >"$work/models/bad.toml"
{ head_plan reference; printf '[model]\nfile = "models/bad.toml"\n'; } >"$work/file_bad.toml"
if "$BL_CLI" check "$work/file_bad.toml" >"$work/o" 2>&1; then fail "bad model file accepted"; fi
grep -q "models/bad.toml" "$work/o" && grep -q "'u'" "$work/o" || { cat "$work/o"; fail "bad file: message"; }
# model list names the shipped models; model check reads a shipped one by name.
"$BL_CLI" model list | grep -q '^shiu2024 .*models/shiu2024.toml .*yes' || fail "model list"
"$BL_CLI" model check shiu2024 >"$work/chk_name" || fail "model check shiu2024"
"$BL_CLI" model check "$root/models/shiu2024.toml" >"$work/chk_file" || fail "model check models/shiu2024.toml"
cmp -s "$work/chk_name" "$work/chk_file" || fail "model check: the shipped text and the file compile differently"
"$BL_CLI" model show shiu2024 | cmp -s - "$root/models/shiu2024.toml" || fail "model show: not the file's text"

# The cpu and mpi backends run the model through the "equations" row's
# partition kernel (src/models/eq_part.c): byte-identical to the reference
# run of the same plan (and so to the preset), at 1, 2 and 4 threads with
# the trials split into partitions (BL_CPU_PARTITION_MIN_EDGES=1; 4 threads
# > 3 trials splits each trial), with retirement off (BL_EQ_RETIRE=0), and
# under mpirun with 2 ranks. auto picks whichever backend its regression
# finds exact and fastest: byte-identical too.
eqrec=$(grep -l '"equations"' "$work"/rec/*/manifest.json | xargs dirname)
same_as_ref() { same_records "$eqrec" "$1" "$2" 6; } # $1: record directory, $2: what
{ head_plan cpu; model_block; } >"$work/eq_cpu.toml"
for threads in 1 2 4; do
    for retire in 1 0; do
        d="$work/cpu_${threads}_$retire"
        BL_CPU_PARTITION_MIN_EDGES=1 BL_EQ_RETIRE=$retire OMP_WAIT_POLICY=passive \
            "$BL_CLI" run "$work/eq_cpu.toml" --root "$d" --threads "$threads" >"$work/cpu.log" 2>&1 ||
            { cat "$work/cpu.log"; fail "cpu run, $threads threads"; }
        grep -q "prepared: backend cpu" "$d"/*/run.log || fail "cpu ($threads threads): did not run on the cpu backend"
        ! grep -q "interpreted on the reference backend" "$d"/*/run.log || fail "cpu: fell back to the reference"
        same_as_ref "$(ls -d "$d"/*/)" "cpu, $threads thread(s), BL_EQ_RETIRE=$retire"
    done
done
echo "identical: cpu at 1, 2, 4 threads, retirement on and off"
# Checkpoints within a trial save the partition fields, which hold the
# state variables too (eq_part.c's state arrays): an equation model
# checkpoints within its trials, and taking the checkpoints changes no bit.
# (Killed and resumed from them: test_resume_equations.sh.)
"$BL_CLI" run "$work/eq_cpu.toml" --root "$work/ckw" --checkpoint-every 20ms >"$work/o" 2>&1 || { cat "$work/o"; fail "cpu run with --checkpoint-every"; }
grep -q "checkpoints: after every trial, and within a trial every" "$work"/ckw/*/run.log ||
    fail "--checkpoint-every: an equation model must checkpoint within its trials"
same_as_ref "$(ls -d "$work"/ckw/*/)" "cpu with --checkpoint-every 20ms"
"$BL_CLI" run "$work/eq_auto.toml" --root "$work/rec2" >"$work/auto.log" 2>&1 || { cat "$work/auto.log"; fail "auto run"; }
same_as_ref "$(ls -d "$work"/rec2/*/)" "auto"
# A model the stimulus cannot drive (no on_input) gives auto's regression
# network no spikes to qualify a fast backend: it runs on the reference
# backend, and the run log says so.
{ head_plan auto | sed 's/^duration_ms = 200.0/duration_ms = 20.0/'; model_block | grep -v '^on_input'; } >"$work/noin.toml"
"$BL_CLI" run "$work/noin.toml" --root "$work/noin" --quiet >"$work/o" 2>&1 || { cat "$work/o"; fail "auto, no on_input"; }
grep -q "prepared: backend reference" "$work"/noin/*/run.log || fail "auto, no on_input: not the reference backend"
grep -q "interpreted on the reference backend (backend 'auto' asked" "$work"/noin/*/run.log ||
    fail "auto, no on_input: no word of the reference backend"
{ head_plan mpi; model_block; } >"$work/eq_mpi.toml"
"$BL_CLI" check "$work/eq_mpi.toml" >"$work/o" 2>&1 || { cat "$work/o"; fail "mpi refused for an equation model"; }
mpi_no_leak_check
if command -v mpirun >/dev/null && "$BL_CLI" run "$work/eq_mpi.toml" --root "$work/mpi1" >"$work/o" 2>&1; then
    same_as_ref "$(ls -d "$work"/mpi1/*/)" "mpi, one process"
    mpirun_2 "$work/eq_mpi.toml" "$work/mpi2" >"$work/o" 2>&1 || { cat "$work/o"; fail "mpirun -np 2"; }
    same_as_ref "$(ls -d "$work"/mpi2/*/)" "mpi, 2 ranks"
    echo "identical: mpi as one process and as 2 ranks"
else
    echo "skipped: mpi (no mpirun or no mpi backend)"
fi

# Refusals name the key.
{ head_plan reference; model_block | sed 's/^method = "linear"/preset = "shiu2024"\nmethod = "linear"/'; } >"$work/both.toml"
if "$BL_CLI" check "$work/both.toml" >"$work/o" 2>&1; then fail "preset and equations accepted"; fi
grep -q "either a preset or equations" "$work/o" || { cat "$work/o"; fail "both: message"; }
{ head_plan reference; model_block | grep -v '^delay'; } >"$work/nodelay.toml"
if "$BL_CLI" check "$work/nodelay.toml" >"$work/o" 2>&1; then fail "missing delay accepted"; fi
grep -q "delay" "$work/o" || { cat "$work/o"; fail "no delay: message"; }
{ head_plan reference; model_block | sed 's/^delay = "1.8 ms"/delay = "1.85 ms"/'; } >"$work/halfdelay.toml"
if "$BL_CLI" check "$work/halfdelay.toml" >"$work/o" 2>&1; then fail "a delay of 18.5 steps accepted"; fi
grep -q 'delay "1.85 ms" is not a whole number of 0.1 ms steps' "$work/o" || { cat "$work/o"; fail "half delay: message"; }
{ head_plan reference; model_block | sed 's/^delay = "1.8 ms"/delay = "1.8 mV"/'; } >"$work/voltdelay.toml"
if "$BL_CLI" check "$work/voltdelay.toml" >"$work/o" 2>&1; then fail "a delay in volts accepted"; fi
grep -q "delay" "$work/o" && grep -q "time" "$work/o" || { cat "$work/o"; fail "delay in volts: message"; }
{ head_plan reference; model_block | sed 's/^threshold = "v > v_th"/threshold = "u > v_th"/'; } >"$work/badthr.toml"
if "$BL_CLI" check "$work/badthr.toml" >"$work/o" 2>&1; then fail "threshold on an unknown variable accepted"; fi
grep -q "u" "$work/o" || { cat "$work/o"; fail "bad threshold: message"; }
# A screen cannot vary an equation model's parameters yet (a LIF field would change nothing).
{ sed -e 's/^operation = "connectome"/operation = "screen"/' -e '/^\[outputs\]/,$d' <(head_plan reference); model_block
  printf '[[screen.axis]]\nparameter = "v_th_mv"\nvalues = [-45.0, -44.0]\n'; } >"$work/screen.toml"
if "$BL_CLI" check "$work/screen.toml" >"$work/o" 2>&1; then fail "screen parameter axis accepted for an equation model"; fi
grep -q "cannot vary the parameters of a model from equations" "$work/o" || { cat "$work/o"; fail "screen: message"; }
# A screen (two rates) with the equation model matches the preset's screen byte for byte.
screen_plan() { # $1: the [model] block's generator
  sed -e 's/^operation = "connectome"/operation = "screen"/' -e 's/^duration_ms = 200.0/duration_ms = 50.0/' \
      -e '/^\[outputs\]/,$d' <(head_plan reference); $1
  printf '[[screen.axis]]\nrate = [75.0, 150.0]\nstimulus = "ORN"\n'; }
preset_block() { printf '[model]\npreset = "shiu2024"\n'; }
screen_plan preset_block >"$work/scr_preset.toml"
screen_plan model_block >"$work/scr_eq.toml"
"$BL_CLI" run "$work/scr_preset.toml" --root "$work/scrp" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "preset screen"; }
"$BL_CLI" run "$work/scr_eq.toml" --root "$work/scre" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "equation screen"; }
sp=$(ls -d "$work"/scrp/*/); se=$(ls -d "$work"/scre/*/)
for f in counts.npy final_v.npy final_g.npy conditions.csv $(cd "$sp" && find spikes -type f | sort); do
    cmp -s "$sp/$f" "$se/$f" || fail "screen: $f differs between the preset and the equation model"
done
"$BL_CLI" run "$work/scr_eq.toml" --root "$work/scrc" --backend cpu --threads 2 --quiet >/dev/null 2>"$work/o" ||
    { cat "$work/o"; fail "equation screen on cpu"; }
sc=$(ls -d "$work"/scrc/*/)
for f in counts.npy final_v.npy final_g.npy conditions.csv $(cd "$sp" && find spikes -type f | sort); do
    cmp -s "$sp/$f" "$sc/$f" || fail "screen on cpu: $f differs between the preset and the equation model"
done
echo "identical: the screen's counts, final state, conditions and spikes (equation model on reference and cpu)"
echo "ok"
