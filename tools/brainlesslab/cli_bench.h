/* brainlesslab bench: the benchmark command (docs/benchmark.md). Kept in its
 * own header so that main.c's command table only needs this include and a
 * {"bench", bl_cmd_bench, "..."} row. */
#ifndef BRAINLESSLAB_CLI_BENCH_H
#define BRAINLESSLAB_CLI_BENCH_H

/* Returns 0 when the receipt was written, 1 on failure (message printed), 2 on
 * a usage error. argv[0] is "bench". */
int bl_cmd_bench(int argc, char **argv);

#endif
