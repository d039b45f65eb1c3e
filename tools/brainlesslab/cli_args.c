/* GNU command-line conventions, once for every subcommand (main.c applies
 * them before dispatch, so no command's own loop needs to know them):
 *   --opt=value   is the same as   --opt value
 *   --            ends the options: what follows is an operand even when it
 *                 starts with '-' (it is passed on as "./-name", the same path)
 * and a mistyped option or command is answered with the nearest known name.
 * Known option names are read from the command's usage text, the one place
 * that documents them, so the suggestion cannot drift from the help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Optimal string alignment distance (adjacent transpositions count one),
 * capped: names are short and only distances <= 2 are ever used. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    enum { MAX = 64 };
    if (la >= MAX || lb >= MAX)
        return (size_t)-1;
    size_t d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* How far a guess may be from a name to be offered: a third of the name,
 * at least 1 and at most 2 edits. */
static size_t tolerance(size_t len) { return len < 4 ? 1 : len < 7 ? 2 : 2; }

static int name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; }

int bl_cli_suggest_option(const char *arg, const char *usage, char *out, size_t size)
{
    if (!arg || !usage || strncmp(arg, "--", 2) != 0)
        return 0;
    const char *eq = strchr(arg, '=');
    size_t la = eq ? (size_t)(eq - arg) : strlen(arg), best = (size_t)-1;
    for (const char *p = strstr(usage, "--"); p; p = strstr(p + 2, "--")) {
        size_t lb = 2;
        while (name_char(p[lb]))
            lb++;
        if (lb == 2 || (p > usage && name_char(p[-1])))
            continue;
        size_t d = edit_distance(arg, la, p, lb);
        if (d > 0 && d < best && d <= tolerance(la - 2)) {
            best = d;
            snprintf(out, size, "%.*s", (int)lb, p);
        }
    }
    return best != (size_t)-1;
}

int bl_cli_suggest_name(const char *arg, const char *const *names, size_t n, const char **out)
{
    size_t la = strlen(arg), best = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(arg, la, names[i], strlen(names[i]));
        if (d > 0 && d < best && d <= tolerance(la)) {
            best = d;
            *out = names[i];
        }
    }
    return best != (size_t)-1;
}

int bl_cli_unknown_option(const char *command, const char *arg, const char *usage)
{
    char near[80];
    if (bl_cli_suggest_option(arg, usage, near, sizeof near))
        fprintf(stderr, "brainlesslab %s: unknown option '%s' (did you mean %s?)\n", command, arg, near);
    else
        fprintf(stderr, "brainlesslab %s: unknown option '%s' (brainlesslab %s --help lists them)\n", command, arg,
                command);
    return 2;
}

char **bl_cli_normalize(int argc, char **argv, int *out_argc)
{
    /* One block, freed once by the caller: the pointer array (at most one
     * extra slot per argument, for a split --opt=value), then room for the
     * strings it makes (each at most its argument plus "./" and a NUL). */
    size_t slots = (size_t)argc * 2 + 1, text = 0;
    for (int i = 0; i < argc; i++)
        text += strlen(argv[i]) + 3;
    char **out = malloc(slots * sizeof *out + text);
    if (!out)
        return NULL;
    char *store = (char *)(out + slots);
    int n = 0, operands = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && !operands && !strcmp(a, "--")) {
            operands = 1;
            continue;
        }
        if (operands && a[0] == '-') {
            size_t len = strlen(a);
            memcpy(store, "./", 2);
            memcpy(store + 2, a, len + 1);
            out[n++] = store;
            store += len + 3;
            continue;
        }
        const char *eq = (!operands && i > 0 && a[0] == '-' && a[1] == '-') ? strchr(a, '=') : NULL;
        if (eq && eq > a + 2) {
            size_t len = (size_t)(eq - a);
            memcpy(store, a, len);
            store[len] = '\0';
            out[n++] = store;
            store += len + 1;
            out[n++] = (char *)(eq + 1);
            continue;
        }
        out[n++] = (char *)a;
    }
    out[n] = NULL;
    *out_argc = n;
    return out;
}
