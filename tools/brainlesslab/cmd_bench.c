/* brainlesslab bench: parse the options, run the benchmark program's driver
 * (bench/src/, linked into the CLI, not part of the library), print its
 * progress on stderr and the summary table on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "cli_bench.h"

static const char usage_text[] =
    "usage: brainlesslab bench [--workloads w1,w2,w3] [--repetitions 3] [--timeout-s 600]\n"
    "         [--work DIR] [--receipt FILE.json] [--threads N] [--quick] [--cases LIST]\n"
    "         [--python PATH] [--source-dir DIR] [--keep-outputs] [--ranks 1,2,4]\n"
    "         [--background-load K]\n"
    "Qualifies every case against the reference backend, then times it in fresh worker processes\n"
    "(alternating order, >= 3 repetitions) and writes a JSON receipt (docs/benchmark.md).\n"
    "  --workloads LIST  w1 (FlyWire-scale synthetic, sugar-like input), w2 (same graph, runaway\n"
    "                    activity), w3 (larva, ORNs, 30 trials); default all three. Reservoirs:\n"
    "                    r1 (SORN and Falandays, N 64/256/1024 x batch 1/8/32/128, against the\n"
    "                    NumPy oracle), r1-sorn, r1-falandays (one node), r2 (Falandays in closed\n"
    "                    loop on tracking, 128 trials in one batch); never by default.\n"
    "                    w1-bank: w1's task as 30 trials, 1..29 in one engine call (threads run\n"
    "                    trials in parallel), bl-cpu at every --threads count; never by default.\n"
    "                    Imports: import-flywire, import-malecns (generated FlyWire / male CNS scale\n"
    "                    inputs, once, by bench/make_import_inputs.py; never by default)\n"
    "                    COBA: coba, coba-10s (Vogels-Abbott, 4,000 neurons, 1 s / 10 s, ours vs Brian2\n"
    "                    C++ standalone; never by default)\n"
    "  --repetitions R   fresh-process repetitions per case (>= 3; default 3)\n"
    "  --timeout-s S     bound on every worker process; later killed and censored (default 600)\n"
    "  --work DIR        cached inputs (generated graphs) and run files (default bench-work)\n"
    "  --receipt FILE    the JSON receipt (default bench-receipt.json)\n"
    "  --threads N       threads given to every case (0 = all usable cores; default 0); or a\n"
    "                    list, e.g. 1,2: every case gets the first, w1-bank times bl-cpu at each\n"
    "  --background-load K  K processes spin on arithmetic beside the whole run (default 0)\n"
    "  --quick           tiny versions of the workloads (the receipt-format test)\n"
    "  --cases LIST      time only these cases: bl-reference, bl-cpu, brian2-cpp, brian2-numpy,\n"
    "                    bl-reference-phase4c, bl-cpu-phase4c, torch-eager, bl-cpu-eq (shiu2024 from\n"
    "                    its equations, generated C; w1 and w3), bl-mpi (default all)\n"
    "  --ranks LIST      bl-mpi: rank counts of the strong-scaling points, each run as\n"
    "                    mpirun -np R simulate --backend mpi (default 1,2,4,... up to the usable\n"
    "                    cores, at least 1,2; --quick: 1,2)\n"
    "  --python PATH     interpreter of the peers (default /usr/bin/python3)\n"
    "  --source-dir DIR  tree holding bench/peers/ and data/ (default $BL_SOURCE_DIR, else the\n"
    "                    tree this binary was built from)\n"
    "  --keep-outputs    keep every worker's arrays under DIR/runs (default: deleted once compared)\n";

static void log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static int parse_int(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

int bl_cmd_bench(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    bl_bench_options o;
    bl_bench_options_default(&o);
    o.argc = argc;
    o.argv = argv;
    o.log = log_line;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "--quick")) {
            o.quick = 1;
            continue;
        }
        if (!strcmp(opt, "--keep-outputs")) {
            o.keep_outputs = 1;
            continue;
        }
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) {
            fprintf(stderr, "brainlesslab bench: option %s needs a value\n%s", opt, usage_text);
            return 2;
        }
        i++;
        int ok = 1;
        if (!strcmp(opt, "--workloads")) o.workloads = val;
        else if (!strcmp(opt, "--repetitions")) ok = parse_int(val, 3, 1000, &o.repetitions);
        else if (!strcmp(opt, "--threads") && strchr(val, ',')) {
            /* A list: every case gets the first count, w1-bank times bl-cpu at each. */
            int counts[BL_BENCH_MAX_THREAD_COUNTS], n = 0;
            bl_error e = {0};
            if (bl_bench_parse_threads(val, counts, &n, &e)) {
                fprintf(stderr, "brainlesslab bench: %s\n%s", e.message, usage_text);
                return 2;
            }
            o.threads_list = val;
            o.threads = counts[0];
        } else if (!strcmp(opt, "--threads")) ok = parse_int(val, 0, 4096, &o.threads);
        else if (!strcmp(opt, "--background-load")) ok = parse_int(val, 0, 64, &o.background_load);
        else if (!strcmp(opt, "--work")) o.work_dir = val;
        else if (!strcmp(opt, "--receipt")) o.receipt_path = val;
        else if (!strcmp(opt, "--cases")) o.cases = val;
        else if (!strcmp(opt, "--ranks")) o.ranks = val;
        else if (!strcmp(opt, "--python")) o.python = val;
        else if (!strcmp(opt, "--source-dir")) o.source_dir = val;
        else if (!strcmp(opt, "--timeout-s")) {
            char *end;
            errno = 0;
            o.timeout_s = strtod(val, &end);
            ok = !errno && end != val && !*end && o.timeout_s > 0 && o.timeout_s <= 86400;
        } else {
            return bl_cli_unknown_option("bench", opt, usage_text);
        }
        if (!ok) {
            fprintf(stderr, "brainlesslab bench: %s '%s' is out of range (--repetitions 3..1000, --threads "
                            "0..4096 or a list of 1..4096, --background-load 0..64, --timeout-s (0, 86400])\n",
                    opt, val);
            return 2;
        }
    }
    if (o.quick && o.timeout_s == 600)
        o.timeout_s = 150; /* tiny workloads: a stuck worker should not hold CI for long */
    bl_error err = {0};
    char *table = NULL;
    if (bl_bench_run(&o, &table, &err))
        return bl_cli_report("bench", &err);
    if (table)
        fputs(table, stdout);
    printf("receipt: %s\n", o.receipt_path);
    free(table);
    return 0;
}
