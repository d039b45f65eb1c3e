/* Record commands, declared here until cli.h lists them with the others. */
#ifndef BRAINLESSLAB_CLI_RECORD_H
#define BRAINLESSLAB_CLI_RECORD_H

/* brainlesslab verify RECORD_DIR: 0 verified, 1 problems (printed), 2 usage. */
int bl_cmd_verify(int argc, char **argv);
/* brainlesslab keygen --out PREFIX: PREFIX.key (private) and PREFIX.pub. */
int bl_cmd_keygen(int argc, char **argv);
/* brainlesslab compare A B --root DIR: 0 identical, 3 different, 1 error, 2 usage. */
int bl_cmd_compare(int argc, char **argv);
/* brainlesslab plot RECORD [--root DIR]: figures into a derived record (execs python3). */
int bl_cmd_plot(int argc, char **argv);

#endif
