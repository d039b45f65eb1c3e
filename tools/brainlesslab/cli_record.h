/* Record commands, declared here until cli.h lists them with the others. */
#ifndef BRAINLESSLAB_CLI_RECORD_H
#define BRAINLESSLAB_CLI_RECORD_H

/* brainlesslab verify RECORD_DIR: 0 verified, 1 problems (printed), 2 usage. */
int bl_cmd_verify(int argc, char **argv);
/* brainlesslab keygen --out PREFIX: PREFIX.key (private) and PREFIX.pub. */
int bl_cmd_keygen(int argc, char **argv);

#endif
