/* libFuzzer harness for the model language (src/models/lang/): the parser,
 * names and dimensions, the methods, the lowering and the interpreter, with
 * the production bounds (BL_EQ_MAX_*). The input is split at 0x1f bytes into
 * equations, method selector, threshold, reset, refractory, on_input and
 * up to 8 parameter texts (names p0..p7); a selector "xB" adds on_pre_by
 * blocks made of the reset and on_input texts. A model that compiles is run for a
 * few steps on two neurons, with noise, on_input and its description made;
 * a model that fails leaves a status and a one-line message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/eqmodel.h"
#include "models/lang/eq_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double normal(void *user, uint32_t neuron, uint64_t step, uint32_t k)
{
    (void)user;
    return (double)(int32_t)((neuron * 2654435761u) ^ (uint32_t)step ^ (k << 7)) / 2147483648.0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *field[14] = {0};
    int nf = 0;
    field[nf++] = text;
    for (size_t k = 0; k < size && nf < 14; k++)
        if (text[k] == 0x1f) {
            text[k] = '\0';
            field[nf++] = text + k + 1;
        }
    static const char *const methods[] = {"euler", "rk2", "rk4", "exponential_euler", "linear", "heun"};
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = field[0];
    s.method = methods[(field[1] ? (unsigned char)field[1][0] : 0) % 6];
    s.threshold = field[2];
    s.reset = field[3];
    s.refractory = field[4];
    s.on_input = field[5];
    /* The last field also as a synapses text and on_post (docs/models.md
     * "Synapses"): the per-edge declarations and event-driven forms parse
     * any bytes too. */
    if (nf >= 8) {
        s.synapses = field[nf - 1];
        s.on_post = field[5];
    }
    /* A method selector whose second byte is 'B': on_pre chosen by a column
     * (on_pre_by), value A running the reset text and B the on_input text
     * as their blocks (docs/models.md "Synapses"). */
    const char *by_values[2] = {"A", "B"}, *by_texts[2];
    if (field[1] && field[1][0] && field[1][1] == 'B' && field[3] && field[5]) {
        by_texts[0] = field[3];
        by_texts[1] = field[5];
        s.on_pre_by = "nt";
        s.n_on_pre_by = 2;
        s.on_pre_by_values = by_values;
        s.on_pre_by_texts = by_texts;
    }
    const char *names[8] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};
    const char *values[8];
    size_t np = 0;
    for (int k = 6; k < nf && np < 8; k++)
        values[np++] = field[k];
    s.n_params = np;
    s.param_names = names;
    s.param_values = values;
    bl_eq_model *m = NULL;
    bl_error err;
    memset(&err, 0, sizeof err);
    bl_status st = bl_eq_model_compile(&s, 1e-4, &m, &err);
    if (st) {
        if (err.status != st || !err.message[0] || strchr(err.message, '\n') || m)
            abort();
        free(text);
        return 0;
    }
    char *d = bl_eq_model_describe(m);
    if (!d)
        abort();
    free(d);
    /* the C the model would compile to (not compiled here: too slow per input) */
    char *c = eq_cgen_source(m);
    if (!c || !strstr(c, "bl_eq_update("))
        abort();
    free(c);
    bl_eq_pop *p = NULL;
    if (bl_eq_pop_create(m, 2, &p, &err))
        abort();
    bl_eq_pop_set_noise(p, normal, NULL);
    uint32_t spk[2], ns;
    for (int k = 0; k < 5; k++) {
        if (bl_eq_pop_step(p, spk, &ns, &err) || ns > 2)
            abort();
        if (s.on_input)
            (void)bl_eq_pop_input(p, 1, &err);
    }
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
    free(text);
    return 0;
}
