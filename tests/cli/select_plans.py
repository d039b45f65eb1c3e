"""Plan selectors pinned across the move of selection into the library
(bl_select, include/brainlesslab/select.h): every refusal below is the message
`brainlesslab check` printed when selection still lived in src/plan/, and the
plan using every selector form has the hash it had then. The plan layer now
translates TOML to the library's selector and points the library's faults at
line and column; this test keeps both unchanged.

    BL_CLI=build/brainlesslab BL_SOURCE_DIR=. python3 tests/cli/select_plans.py
"""
import os
import subprocess
import sys
import tempfile

CLI = os.path.abspath(os.environ["BL_CLI"])
SRC = os.path.abspath(os.environ["BL_SOURCE_DIR"])
LARVA = os.path.join(SRC, "data/connectomes/larva-winding2023")

HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "selectors-all"
operation = "connectome"
[connectome]
path = "%s"
[run]
duration_ms = 10
seed = 20241002
""" % LARVA

AUDIT_HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "a"
operation = "audit"
[connectome]
path = "%s"
""" % LARVA

BASE = """[[population]]
name = "ORN"
select = { modality = "olfactory", cell_type = "sensory" }
[[population]]
name = "B"
neurons = [1, 2, 3]
"""

# Every selector form, in [[population]], [[stimulus]] and [[silence]] tables.
ALL_FORMS = """[[population]]
name = "ORN"
select = { modality = "olfactory", cell_type = "sensory" }
expect_count = 42
[[population]]
name = "PN_glob"
select = { cell_type = "PN*" }
[[population]]
name = "glob_list"
select = { cell_type = ["?N", "[DK]*", "MBON"] }
[[population]]
name = "not_sensory"
select = { side = "left", cell_type = { not = ["sensory", "KC*"] } }
[[population]]
name = "cluster_range"
select = { cluster = { min = 10, max = 40.5 } }
[[population]]
name = "cluster_low"
select = { cluster = { max = 3.0 } }
[[population]]
name = "depth2"
from = "ORN"
depth = 2
[[population]]
name = "depth1to3_left"
from = "ORN"
depth = { min = 1, max = 3 }
select = { side = "left" }
[[population]]
name = "reach"
from = "ORN"
[[population]]
name = "u"
union = ["glob_list", "PN_glob", "depth2"]
[[population]]
name = "i"
intersect = ["reach", "not_sensory"]
exclude = ["cluster_low"]
[[population]]
name = "s"
union = ["u", "cluster_range"]
sample = 300
[[population]]
name = "ids"
ids = ["29", 37365, "40045"]
[[population]]
name = "combo"
neurons = [5, 2, 3, 1, 0]
ids = [29, "37365"]
select = { side = ["right", "left"] }
[[population]]
name = "dmin"
from = "ORN"
depth = { min = 2 }
[[stimulus]]
name = "a"
neurons = [9, 3, 4]
rate_hz = 100
[[stimulus]]
name = "b"
ids = ["40045", 40152]
rate_hz = 100
[[stimulus]]
name = "c"
select = { cell_type = "PN", side = { not = "left" } }
rate_hz = 50
[[stimulus]]
name = "d"
population = "s"
rate_hz = 50
[[silence]]
name = "q"
population = "depth2"
[[silence]]
name = "q2"
select = { cluster = { min = 1e1 } }
"""
ALL_FORMS_HASH = "0cd04a3be9de0a5e2e580ee781a96c62db9afa90d42242890b824508da8a7f3d"

# (table kind, case, the selector keys, the message printed before the move;
# PLAN stands for the plan's path)
CASES = [
    ("population", "nb1", "neurons = []",
     "PLAN:18:11: population[2].neurons: empty selection (an empty array of neuron indices)"),
    ("population", "nb2", "neurons = [1, 99999]",
     "PLAN:18:15: population[2].neurons[1]: neuron index 99999 is out of range 0..2951 (the connectome has 2952 neurons)"),
    ("population", "nb3", "neurons = [-1]",
     "PLAN:18:12: population[2].neurons[0]: neuron index -1 is out of range 0..2951 (the connectome has 2952 neurons)"),
    ("population", "nb4", "neurons = [3, 1, 3]",
     "PLAN:18:11: population[2].neurons: neuron 3 is listed twice"),
    ("population", "nb5", "neurons = [1.5]",
     "PLAN:18:12: population[2].neurons[0]: expected a neuron index (integer), got float 1.5"),
    ("population", "nb6", "neurons = 5",
     "PLAN:18:11: population[2].neurons: expected an array of neuron indices, got integer 5"),
    ("population", "nb7", "neurons = [1.0]",
     "PLAN:18:12: population[2].neurons[0]: expected a neuron index (integer), got float 1"),
    ("population", "nb8", "neurons = [\"a\"]",
     "PLAN:18:12: population[2].neurons[0]: expected a neuron index (integer), got string \"a\""),
    ("population", "id1", "ids = []",
     "PLAN:18:7: population[2].ids: empty selection (an empty array of external ids)"),
    ("population", "id2", "ids = [\"999999999\"]",
     "PLAN:18:8: population[2].ids[0]: unknown external id \"999999999\" (no neuron of the connectome has it)"),
    ("population", "id3", "ids = [\"29\", 29]",
     "PLAN:18:7: population[2].ids: id \"29\" is listed twice"),
    ("population", "id4", "ids = [true]",
     "PLAN:18:8: population[2].ids[0]: expected a string (or an integer id), got boolean true"),
    ("population", "id5", "ids = \"29\"",
     "PLAN:18:7: population[2].ids: expected an array of external ids, got string \"29\""),
    ("population", "id6", "ids = [\"a\\u0000b\"]",
     "PLAN:18:8: population[2].ids[0]: string holds a NUL character"),
    ("population", "id7", "ids = [1979-05-27]",
     "PLAN:18:8: population[2].ids[0]: expected a string (or an integer id), got date 1979-05-27"),
    ("population", "sq1", "select = {}",
     "PLAN:18:10: population[2].select: empty selection (no metadata column given)"),
    ("population", "sq2", "select = { nope = \"x\" }",
     "PLAN:18:19: population[2].select.nope: unknown metadata column (available: cell_type, annotation, side, cluster, modality, transmitter, sign)"),
    ("population", "sq3", "select = { side = [] }",
     "PLAN:18:19: population[2].select.side: empty selection (an empty list of values)"),
    ("population", "sq4", "select = { side = [\"left\", \"left\"] }",
     "PLAN:18:19: population[2].select.side: value \"left\" is listed twice"),
    ("population", "sq5", "select = { side = { not = [] } }",
     "PLAN:18:27: population[2].select.side.not: empty selection (an empty list of values)"),
    ("population", "sq6", "select = { side = { not = [\"a\", \"a\"] } }",
     "PLAN:18:27: population[2].select.side.not: value \"a\" is listed twice"),
    ("population", "sq7", "select = { side = { min = 1 } }",
     "PLAN:18:19: population[2].select.side: column 'side' is not numeric (neuron 0 has \"right\"): a range needs numbers"),
    ("population", "sq8", "select = { cluster = { min = 5, max = 1 } }",
     "PLAN:18:22: population[2].select.cluster: min 5 is above max 1"),
    ("population", "sq9", "select = { cluster = {} }",
     "PLAN:18:22: population[2].select.cluster: empty condition: give values, { not = ... } or { min = ..., max = ... }"),
    ("population", "sq10", "select = { cluster = { min = 1, lo = 2 } }",
     "PLAN:18:38: population[2].select.cluster.lo: unknown key (given integer 2; allowed in [population[2].select.cluster]: min, max)"),
    ("population", "sq11", "select = { cluster = { min = \"a\" } }",
     "PLAN:18:30: population[2].select.cluster.min: expected a number, got string \"a\""),
    ("population", "sq12", "select = { side = { not = \"left\", x = 1 } }",
     "PLAN:18:39: population[2].select.side.x: unknown key (given integer 1; allowed in [population[2].select.side]: not)"),
    ("population", "sq13", "select = { cell_type = \"zzz\" }",
     "PLAN:18:10: population[2].select: empty selection: no neuron matches this metadata query"),
    ("population", "sq14", "select = \"x\"",
     "PLAN:18:10: population[2].select: expected a table of metadata column = value(s), got string \"x\""),
    ("population", "sq15", "select = { side = 1.5 }",
     "PLAN:18:19: population[2].select.side: expected a string (or an integer id), got float 1.5"),
    ("population", "sq16", "select = { side = [1.5] }",
     "PLAN:18:20: population[2].select.side[0]: expected a string (or an integer id), got float 1.5"),
    ("population", "sq17", "select = { \"a\\u0000b\" = \"x\" }",
     "PLAN:18:25: population[2].select.a\\x00b: unknown metadata column (available: cell_type, annotation, side, cluster, modality, transmitter, sign)"),
    ("population", "sq18", "select = { side = \"left\", cell_type = \"zzz*\" }",
     "PLAN:18:10: population[2].select: empty selection: no neuron matches this metadata query"),
    ("population", "sq19", "select = { cluster = { max = 2 }, side = \"nope\" }",
     "PLAN:18:10: population[2].select: empty selection: no neuron matches this metadata query"),
    ("population", "dp1", "depth = 1\nneurons = [1]",
     "PLAN:18:9: population[2].depth: depth needs from = \"POPULATION\" (depth from what?)"),
    ("population", "dp2", "from = \"ORN\"\ndepth = -1",
     "PLAN:19:9: population[2].depth: depth -1 is out of range 0..2147483647"),
    ("population", "dp3", "from = \"ORN\"\ndepth = { min = 3, max = 1 }",
     "PLAN:19:9: population[2].depth: min 3 is above max 1"),
    ("population", "dp4", "from = \"ORN\"\ndepth = 1.5",
     "PLAN:19:9: population[2].depth: expected a depth (integer) or { min = a, max = b }, got float 1.5"),
    ("population", "dp5", "from = \"ZZ\"\ndepth = 1",
     "PLAN:18:8: population[2].from: no [[population]] is named \"ZZ\" (defined: ORN, B, self, later)"),
    ("population", "dp6", "from = 3",
     "PLAN:18:8: population[2].from: expected a population name (string), got integer 3"),
    ("population", "dp7", "from = \"ORN\"\ndepth = { min = -1 }",
     "PLAN:19:17: population[2].depth.min: -1 is out of range 0..2147483647"),
    ("population", "dp8", "from = \"ORN\"\ndepth = { lo = 1 }",
     "PLAN:19:16: population[2].depth.lo: unknown key (given integer 1; allowed in [population[2].depth]: min, max)"),
    ("population", "dp9", "from = \"self\"",
     "PLAN:18:8: population[2].from: population \"self\" is defined below this one (a population may only refer to populations above it)"),
    ("population", "dp10", "depth = \"x\"\nneurons = [1]",
     "PLAN:18:9: population[2].depth: depth needs from = \"POPULATION\" (depth from what?)"),
    ("population", "al1", "union = []",
     "PLAN:18:9: population[2].union: expected a non-empty array of population names, got array of 0 elements"),
    ("population", "al2", "union = [\"ORN\", \"ZZ\"]",
     "PLAN:18:17: population[2].union[1]: no [[population]] is named \"ZZ\" (defined: ORN, B, self, later)"),
    ("population", "al3", "union = [\"ORN\", \"ORN\"]",
     "PLAN:18:17: population[2].union[1]: population \"ORN\" is listed twice"),
    ("population", "al4", "exclude = [\"ORN\"]",
     "PLAN:18:11: population[2].exclude: exclude needs something to exclude from (a selector, from, union or intersect)"),
    ("population", "al5", "union = \"ORN\"",
     "PLAN:18:9: population[2].union: expected a non-empty array of population names, got string \"ORN\""),
    ("population", "al6", "intersect = [\"ORN\", 3]",
     "PLAN:18:21: population[2].intersect[1]: expected a population name (string), got integer 3"),
    ("population", "al7", "union = [\"later\"]",
     "PLAN:18:10: population[2].union[0]: population \"later\" is defined below this one (a population may only refer to populations above it)"),
    ("population", "al8", "intersect = [\"ORN\", \"B\"]\nexclude = [\"B\"]",
     "PLAN:16:1: population[2]: empty selection: population \"self\" has no neurons"),
    ("population", "al9", "union = [\"a\\u0000b\"]",
     "PLAN:18:10: population[2].union[0]: no [[population]] is named \"a\\x00b\" (defined: ORN, B, self, later)"),
    ("population", "sm1", "neurons = [1, 2]\nsample = 3",
     "PLAN:19:10: population[2].sample: sample 3 is more than the 2 neurons selected"),
    ("population", "sm2", "neurons = [1, 2]\nsample = 0",
     "PLAN:19:10: population[2].sample: 0 is out of range 1..2147483647"),
    ("population", "sm3", "neurons = [1, 2]\nsample = \"x\"",
     "PLAN:19:10: population[2].sample: expected an integer, got string \"x\""),
    ("population", "ex1", "neurons = [1, 2]\nexpect_count = 3",
     "PLAN:19:16: population[2].expect_count: population \"self\" has 2 neurons, not the 3 expected"),
    ("population", "ex2", "neurons = [1, 2]\nexpect_count = -1",
     "PLAN:19:16: population[2].expect_count: -1 is out of range 0..2147483647"),
    ("population", "no1", "",
     "PLAN:16:1: population[2]: no selector: give neurons, ids, select, from (+ depth), union or intersect"),
    ("population", "two", "neurons = [1]\nfoo = 2",
     "PLAN:19:7: population[2].foo: unknown key (given integer 2; allowed in [population[2]]: name, neurons, ids, select, from, depth, union, intersect, exclude, sample, expect_count)"),
    ("stimulus", "st1", "neurons = [1]\nids = [\"29\"]",
     "PLAN:20:7: stimulus[0].ids: a population takes exactly one selector, and 'neurons' is given too (choose neurons, ids, select or population)"),
    ("stimulus", "st2", "",
     "PLAN:16:1: stimulus[0]: no selector: give exactly one of neurons = [...], ids = [...], select = { column = value } or population = \"NAME\""),
    ("stimulus", "st3", "population = \"ZZ\"",
     "PLAN:19:14: stimulus[0].population: no [[population]] is named \"ZZ\" (defined: ORN, B)"),
    ("stimulus", "st4", "population = 3",
     "PLAN:19:14: stimulus[0].population: expected a population name (string), got integer 3"),
    ("stimulus", "st5", "select = { side = { not = [\"x\", \"x\"] } }",
     "PLAN:19:27: stimulus[0].select.side.not: value \"x\" is listed twice"),
    ("stimulus", "st6", "neurons = [1, 99999]",
     "PLAN:19:15: stimulus[0].neurons[1]: neuron index 99999 is out of range 0..2951 (the connectome has 2952 neurons)"),
    ("stimulus", "st7", "ids = [\"29\", \"zz\"]",
     "PLAN:19:14: stimulus[0].ids[1]: unknown external id \"zz\" (no neuron of the connectome has it)"),
    ("stimulus", "st8", "population = \"a\\u0000b\"",
     "PLAN:19:14: stimulus[0].population: no [[population]] is named \"a\\x00b\" (defined: ORN, B)"),
    ("stimulus", "st9", "select = { cluster = { min = 2, max = 1 } }",
     "PLAN:19:22: stimulus[0].select.cluster: min 2 is above max 1"),
    ("audit", "au1", "neurons = [1, 2]\nsample = 1",
     "PLAN:10:10: population[0].sample: a sample is drawn from the plan seed, and the plan gives none ([run] seed)"),
    ("audit", "au2", "neurons = [1, 2]\nsample = 3",
     "PLAN:10:10: population[0].sample: sample 3 is more than the 2 neurons selected"),
]


def plan_text(group, body):
    if group == "population":
        return (HEAD + BASE + '[[population]]\nname = "self"\n' + body +
                '\n[[population]]\nname = "later"\nneurons = [1]\n')
    if group == "stimulus":
        return HEAD + BASE + '[[stimulus]]\nname = "s"\nrate_hz = 10\n' + body + "\n"
    return AUDIT_HEAD + '[[population]]\nname = "x"\n' + body + "\n"


def main():
    if not os.path.isdir(LARVA):
        print("SKIP: the shipped larva connectome is absent")
        return 77
    bad = []
    with tempfile.TemporaryDirectory(prefix="bl_select_plans_") as tmp:
        path = os.path.join(tmp, "all.toml")
        with open(path, "w") as f:
            f.write(HEAD + ALL_FORMS)
        r = subprocess.run([CLI, "check", path], capture_output=True, text=True)
        got = [line for line in r.stdout.splitlines() if line.startswith("plan hash:")]
        ok = r.returncode == 0 and got == ["plan hash: " + ALL_FORMS_HASH]
        print(("ok   " if ok else "FAIL ") + "every selector form: " + (got[0] if got else r.stderr.strip()))
        if not ok:
            bad.append("all forms")
        for group, name, body, want in CASES:
            path = os.path.join(tmp, name + ".toml")
            with open(path, "w") as f:
                f.write(plan_text(group, body))
            r = subprocess.run([CLI, "check", path], capture_output=True, text=True)
            got = r.stderr.strip().replace("brainlesslab check: " + path, "PLAN")
            ok = r.returncode == 1 and got == want
            print(("ok   " if ok else "FAIL ") + "%s %s: %s" % (group, name, got))
            if not ok:
                print("     want: " + want)
                bad.append(name)
    print("PASS" if not bad else "FAIL: " + ", ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
