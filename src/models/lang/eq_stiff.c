/* A warning, not a refusal, for an explicit method that is unstable at this
 * dt (docs/models.md "Methods"): for each differential equation dx/dt = f,
 * the decay rate a = df/dx is taken from the compiled graph by symbolic
 * differentiation (eq_diff.c); where a is a constant of the parameters (a
 * linear decay such as (v_0 - v)/tau: a = -1/tau), the method's step
 * multiplies a deviation by R(a*dt), and |R| > 1 makes it grow and
 * oscillate. R is 1 + z for euler, 1 + z + z^2/2 for rk2 and the Taylor
 * polynomial of degree 4 for rk4; each is stable on the real axis down to
 * z = -2 (euler, rk2) and z = -2.785 (rk4). linear and exponential_euler
 * solve a linear decay exactly and are never warned about. A rate that
 * reads the state or a per-neuron parameter is not judged (the model may
 * still be stiff: the warning is a help, not a proof).
 *
 * Runs after the model is compiled, so the nodes it adds to the arena touch
 * nothing the blocks were lowered from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

static double stable_bound(const char *method)
{
    if (!strcmp(method, "euler") || !strcmp(method, "rk2"))
        return 2.0;
    if (!strcmp(method, "rk4"))
        return 2.785293563405282; /* the real root of 1 + z + z^2/2 + z^3/6 + z^4/24 = 1, z < 0 */
    return INFINITY;
}

void eq_stiffness(bl_eq_model *m)
{
    m->warnings[0] = 0;
    const double bound = stable_bound(m->method);
    if (!isfinite(bound) || m->ode)
        return;
    size_t used = 0;
    for (uint32_t s = 0; s < m->n_vars; s++) {
        int32_t y = m->var_sym[s];
        if (m->syms[y].kind != S_STATE || m->syms[y].expr < 0)
            continue;
        bl_error e = {0};
        int32_t f = eq_expand(m, m->syms[y].expr, &e);
        if (f < 0)
            return;
        uint32_t n = m->n_nodes;
        int32_t *memo = malloc((n ? n : 1) * sizeof *memo);
        if (!memo)
            return;
        for (uint32_t k = 0; k < n; k++)
            memo[k] = EQ_DMEMO_UNSET;
        int32_t d = eq_diff(m, f, y, memo, n, &e);
        free(memo);
        double a;
        if (d < 0 || !eq_is_const(m, d) || eq_const_eval(m, d, &a, &e) || !isfinite(a) || !(a < 0))
            continue;
        double z = -a * m->dt;
        if (!(z > bound))
            continue;
        const eq_text *t = &m->texts[B_EQUATIONS];
        const eq_sym *x = &m->syms[y];
        int span = t->text && x->hi > x->lo && x->hi <= t->len ? (int)(x->hi - x->lo) : 0;
        int w = snprintf(m->warnings + used, sizeof m->warnings - used,
                         "%sequations line %d: '%.*s': method %s is unstable at dt %g s: the decay rate d(d%s/dt)/d%s "
                         "is %.6g 1/s, so dt times it is %.4g, beyond the %.4g where the method's step stops damping "
                         "(the state will oscillate and grow); use a smaller dt, or method = \"linear\" or "
                         "\"exponential_euler\"",
                         used ? "\n" : "", x->line, span > 120 ? 120 : span, span ? t->text + x->lo : "", m->method,
                         m->dt, x->name, x->name, a, z, bound);
        if (w < 0 || (size_t)w >= sizeof m->warnings - used) {
            m->warnings[used] = 0; /* no half a warning */
            return;
        }
        used += (size_t)w;
    }
}

const char *bl_eq_model_warnings(const bl_eq_model *m) { return m && m->warnings[0] ? m->warnings : NULL; }
