/* libFuzzer harness for the selector's JSON form (bl_select_json) on a small
 * connectome with numeric, text and empty metadata and three named
 * populations. Beyond "never crash": a refusal carries a message that starts
 * with its key path; a selection is sorted, unique, in range and non-empty;
 * and its canonical JSON selects the same neurons and renders to itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 8
static bl_connectome *conn;
static const int32_t pop_a[] = {0, 1}, pop_b[] = {1, 2, 3}, pop_c[] = {6};

static bl_status lookup(void *user, const char *name, bl_select_named *out, bl_error *err)
{
    (void)user;
    if (!strcmp(name, "A"))
        *out = (bl_select_named){"A", pop_a, 2};
    else if (!strcmp(name, "B"))
        *out = (bl_select_named){"B", pop_b, 3};
    else if (!strcmp(name, "C"))
        *out = (bl_select_named){"C", pop_c, 1};
    else
        return bl_fail(err, BL_ERR_INVALID, "no such population");
    return BL_OK;
}

static void make_connectome(void)
{
    static const int64_t off[N + 1] = {0, 2, 3, 4, 5, 6, 6, 7, 7};
    static const int32_t tgt[] = {1, 2, 3, 3, 4, 5, 7};
    static const int32_t cnt[] = {1, 2, 3, 4, 5, 6, -7};
    static const char *const ids[N] = {"100", "101", "102", "103", "104", "105", "106", "720575940379279001"};
    static const char *const type[N] = {"PN", "PN_a", "KC", "KC", "LN", "MBON", "PN", "KC"};
    static const char *const size[N] = {"1", "2.5", "3", "", "10", "-1", "7", "0"};
    int64_t *o = malloc(sizeof off);
    int32_t *t = malloc(sizeof tgt), *c = malloc(sizeof cnt);
    bl_error err;
    if (!o || !t || !c)
        abort();
    memcpy(o, off, sizeof off);
    memcpy(t, tgt, sizeof tgt);
    memcpy(c, cnt, sizeof cnt);
    if (bl_connectome_adopt(N, 7, o, t, c, &conn, &err) || bl_connectome_set_external_ids(conn, ids, &err) ||
        bl_connectome_add_column(conn, "cell_type", type, &err) || bl_connectome_add_column(conn, "size", size, &err))
        abort();
}

static void check_selection(const bl_selection *s)
{
    size_t n = bl_selection_size(s);
    const int32_t *v = bl_selection_neurons(s);
    if (n == 0 || !v || !bl_selection_json(s))
        abort();
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= N || (i && v[i] <= v[i - 1]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!conn)
        make_connectome();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const bl_select_options opt = {"P", lookup, NULL, 1, 42, 7, NULL};
    bl_selection *s = NULL, *again = NULL;
    bl_select_fault f;
    bl_error err;
    bl_status st = bl_select_json(conn, text, &opt, &s, &f, &err);
    free(text);
    if (st) {
        /* One line, its status, led by the key path at fault. */
        if (s || err.status != st || !err.message[0] || strchr(err.message, '\n') ||
            strncmp(err.message, f.path, strlen(f.path)) || (st != BL_ERR_NOMEM && !f.message[0])) {
            fprintf(stderr, "bad error report: status %d/%d message \"%s\"\n", (int)st, (int)err.status, err.message);
            abort();
        }
        return 0;
    }
    check_selection(s);
    /* The canonical form means the same selection and renders to itself. */
    if (bl_select_json(conn, bl_selection_json(s), &opt, &again, NULL, &err))
        abort();
    check_selection(again);
    if (bl_selection_size(again) != bl_selection_size(s) ||
        memcmp(bl_selection_neurons(again), bl_selection_neurons(s), bl_selection_size(s) * sizeof(int32_t)) ||
        strcmp(bl_selection_json(again), bl_selection_json(s)))
        abort();
    bl_selection_destroy(again);
    bl_selection_destroy(s);
    return 0;
}
