/* Per-edge (synaptic) variables: the `synapses` text of a model
 * (docs/models.md "Synapses").
 *
 * Two kinds of line, as Brian2's Synapses model writes them:
 *   w : 1                                        a per-edge variable
 *   dapre/dt = -apre/taupre : 1 (event-driven)   an event-driven trace
 * Both become declarations `name : unit` appended to the neuron's equations
 * (per-neuron parameters of the compiler, at the last var slots), so that
 * on_pre / on_post statements are checked, lowered and addressed like any
 * variable; the connectome row keeps one value per edge for each.
 *
 * An event-driven trace is advanced only at the edge's events, by the exact
 * solution over the time since its last update. Brian2 2.5.1 solves the
 * equation with its `linear` updater and replaces dt by (t - lastupdate);
 * for dx/dt = -x/tau its numpy target generates (read from the generated
 * code of the classic STDP example)
 *     _lio = 1.0 / tau                                  (a loop invariant)
 *     _x = x * exp(_lio * (- (t - lastupdate)))
 * for every event-driven variable (in name order), before the pathway's
 * statements, and `lastupdate = t` after them. Only that form (a pure
 * decay with a parameter as time constant) is accepted here; the row
 * computes it with these operations in this order. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* An identifier at p: its length (0: none), at most BL_EQ_MAX_IDENT. */
static size_t ident(const char *p, const char *end)
{
    size_t n = 0;
    if (p < end && (isalpha((unsigned char)*p) || *p == '_'))
        while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
            n++;
    return n;
}

static int add_name(char dst[BL_EQ_MAX_IDENT + 1], const char *p, size_t n)
{
    if (n == 0 || n > BL_EQ_MAX_IDENT)
        return 0;
    memcpy(dst, p, n);
    dst[n] = '\0';
    return 1;
}

bl_status eq_syn_parse(const char *text, eq_syn *syn, char *decl, size_t cap, bl_error *err)
{
    memset(syn, 0, sizeof *syn);
    syn->w_slot = -1;
    size_t len = strnlen(text, (size_t)BL_EQ_MAX_TEXT + 1), used = 0;
    if (len > BL_EQ_MAX_TEXT)
        return bl_fail(err, BL_ERR_INVALID, "synapses: longer than %u bytes", BL_EQ_MAX_TEXT);
    decl[0] = '\0';
    const char *p = text, *end = text + len;
    for (unsigned line = 1; p < end; line++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const char *hash = memchr(p, '#', (size_t)(eol - p)), *stop = hash ? hash : eol;
        const char *q = skip_ws(p, stop), *colon = memchr(q, ':', (size_t)(stop - q));
        if (q == stop) {
            p = eol + (eol < end);
            continue;
        }
#define SYN_FAIL(...)                                                                                                  \
    do {                                                                                                               \
        char what_[160];                                                                                               \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                                    \
        return bl_fail(err, BL_ERR_INVALID, "synapses line %u: '%.*s': %s", line, (int)(stop - q > 120 ? 120 : stop - q), \
                       q, what_);                                                                                      \
    } while (0)
        if (!colon)
            SYN_FAIL("expected 'name : unit' or 'dx/dt = -x/tau : unit (event-driven)'");
        char name[BL_EQ_MAX_IDENT + 1];
        const char *unit = colon + 1, *unit_end = stop;
        size_t n = ident(q, colon);
        if (!n)
            SYN_FAIL("a line starts with a name or dx/dt");
        const char *r = skip_ws(q + n, colon);
        if (r == colon) {
            /* name : unit */
            if (!add_name(name, q, n))
                SYN_FAIL("a name of more than %u characters", BL_EQ_MAX_IDENT);
        } else {
            /* dx/dt = -x/tau : unit (event-driven) */
            char x[BL_EQ_MAX_IDENT + 1], tau[BL_EQ_MAX_IDENT + 1];
            if (q[0] != 'd' || !add_name(name, q + 1, n - 1) || *r != '/')
                SYN_FAIL("expected 'name : unit' or 'dx/dt = ...'");
            r = skip_ws(r + 1, colon);
            if (ident(r, colon) != 2 || strncmp(r, "dt", 2))
                SYN_FAIL("expected dt in dx/dt");
            r = skip_ws(r + 2, colon);
            if (*r != '=')
                SYN_FAIL("expected '=' after dx/dt");
            r = skip_ws(r + 1, colon);
            if (*r != '-')
                SYN_FAIL("event-driven equations are pure decays, dx/dt = -x/tau (tau a parameter)");
            r = skip_ws(r + 1, colon);
            size_t nx = ident(r, colon);
            if (!add_name(x, r, nx) || strcmp(x, name))
                SYN_FAIL("event-driven equations are pure decays, dx/dt = -x/tau (tau a parameter)");
            r = skip_ws(r + nx, colon);
            if (*r != '/')
                SYN_FAIL("event-driven equations are pure decays, dx/dt = -x/tau (tau a parameter)");
            r = skip_ws(r + 1, colon);
            size_t nt = ident(r, colon);
            if (!add_name(tau, r, nt) || skip_ws(r + nt, colon) != colon)
                SYN_FAIL("event-driven equations are pure decays, dx/dt = -x/tau (tau a parameter)");
            /* The flag, at the end of the unit. */
            const char *f = memchr(unit, '(', (size_t)(stop - unit));
            if (!f)
                SYN_FAIL("a differential equation of the synapses must be (event-driven): nothing steps per-edge "
                         "variables every time step");
            unit_end = f;
            const char *g = skip_ws(f + 1, stop);
            if ((size_t)(stop - g) < 12 || strncmp(g, "event-driven", 12))
                SYN_FAIL("the only flag here is (event-driven)");
            g = skip_ws(g + 12, stop);
            if (g == stop || *g != ')' || skip_ws(g + 1, stop) != stop)
                SYN_FAIL("the only flag here is (event-driven)");
            if (syn->n_ed >= BL_EQ_MAX_VARS)
                SYN_FAIL("more than %u event-driven variables", BL_EQ_MAX_VARS);
            /* Name order, as Brian2 generates them (they are independent,
             * so the order changes no bit; it is kept for the record). */
            uint32_t k = syn->n_ed;
            while (k > 0 && strcmp(syn->ed_var[k - 1], name) > 0) {
                memcpy(syn->ed_var[k], syn->ed_var[k - 1], sizeof syn->ed_var[0]);
                memcpy(syn->ed_tau[k], syn->ed_tau[k - 1], sizeof syn->ed_tau[0]);
                k--;
            }
            memcpy(syn->ed_var[k], name, sizeof name);
            memcpy(syn->ed_tau[k], tau, sizeof tau);
            syn->n_ed++;
        }
        if (memchr(unit, '(', (size_t)(unit_end - unit)) && r == colon)
            SYN_FAIL("a per-edge variable takes no flags");
        int wrote = snprintf(decl + used, cap - used, "%s : %.*s\n", name, (int)(unit_end - unit), unit);
        if (wrote < 0 || (size_t)wrote >= cap - used)
            SYN_FAIL("the synapses text is longer than %u bytes of declarations", EQ_SYN_TEXT_MAX);
        used += (size_t)wrote;
        syn->n++;
        p = eol + (eol < end);
#undef SYN_FAIL
    }
    if (!syn->n)
        return bl_fail(err, BL_ERR_INVALID, "synapses: no per-edge variable");
    return BL_OK;
}

/* Does a program touch a register in [lo, hi)? */
static int touches(const eq_prog *p, uint32_t lo, uint32_t hi, uint32_t *reg)
{
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *i = &p->code[k];
        uint32_t r[4] = {i->dst, i->op == O_XI ? 0 : i->a, i->b, i->c};
        for (int j = 0; j < 4; j++)
            if (r[j] >= lo && r[j] < hi) {
                *reg = r[j];
                return 1;
            }
    }
    return 0;
}

bl_status eq_syn_finish(bl_eq_model *m, bl_error *err)
{
    eq_syn *y = &m->syn;
    if (y->n > m->n_vars)
        return bl_fail(err, BL_ERR_INVALID, "synapses: per-edge variables also declared in the equations");
    y->first = m->n_vars - y->n;
    /* The declarations were appended last; a name declared twice was refused
     * by the equations parser, so these slots are exactly the per-edge ones. */
    y->w_slot = -1;
    for (uint32_t k = 0; k < y->n; k++) {
        const eq_sym *s = &m->syms[m->var_sym[y->first + k]];
        if (s->kind != S_PARAM_N)
            return bl_fail(err, BL_ERR_INVALID, "synapses: '%s' is not a per-edge variable", s->name);
        if (!strcmp(s->name, "w"))
            y->w_slot = (int32_t)(y->first + k);
    }
    for (uint32_t k = 0; k < y->n_ed; k++) {
        int32_t s = eq_sym_find(m, y->ed_var[k]), t = eq_sym_find(m, y->ed_tau[k]);
        if (s < 0 || m->syms[s].slot < (int32_t)y->first)
            return bl_fail(err, BL_ERR_INVALID, "synapses: event-driven '%s' is not a per-edge variable", y->ed_var[k]);
        if (t < 0 || m->syms[t].kind != S_CONST)
            return bl_fail(err, BL_ERR_INVALID, "synapses: d%s/dt: the time constant '%s' is not a parameter "
                           "([model.parameters])", y->ed_var[k], y->ed_tau[k]);
        const eq_dim d = m->syms[t].dim;
        if (d.e[2] != 2 || d.e[0] || d.e[1] || d.e[3] || d.e[4] || d.e[5] || d.e[6])
            return bl_fail(err, BL_ERR_INVALID, "synapses: d%s/dt: the time constant '%s' is not a time",
                           y->ed_var[k], y->ed_tau[k]);
        if (!(m->syms[t].value != 0.0))
            return bl_fail(err, BL_ERR_INVALID, "synapses: d%s/dt: division by zero (the time constant '%s' is 0)",
                           y->ed_var[k], y->ed_tau[k]);
        y->ed_slot[k] = m->syms[s].slot;
        y->ed_lio[k] = 1.0 / m->syms[t].value;
    }
    /* Only the edge's own blocks see per-edge variables: the neuron's update,
     * threshold, reset and stimulus input run per neuron, where an edge's
     * value has no meaning. */
    const struct {
        const eq_prog *p;
        int has;
        const char *name;
    } blocks[] = {{&m->update, 1, "equations"},
                  {&m->threshold, m->has_threshold, "threshold"},
                  {&m->reset, m->has_reset, "reset"},
                  {&m->on_input, m->has_on_input, "on_input"}};
    uint32_t reg;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        if (blocks[b].has && touches(blocks[b].p, EQ_VBASE + y->first, EQ_VBASE + m->n_vars, &reg))
            return bl_fail(err, BL_ERR_INVALID, "%s: '%s' is a per-edge variable (synapses): only on_pre and on_post "
                           "use it", blocks[b].name, m->syms[m->var_sym[reg - EQ_VBASE]].name);
    return BL_OK;
}
