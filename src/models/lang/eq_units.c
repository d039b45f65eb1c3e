/* Units and dimensions of the model language. A unit's scale is the decimal
 * literal of its prefix (milli = 0.001, nano = 1e-9), the same doubles
 * Brian2 2.5.1's units hold (float(mV) == 0.001, float(nS) == 1e-9), so
 * that a parameter written "-52 mV" is computed as Brian2 computes -52*mV:
 * (-52.0) * 0.001. */
#include <stdio.h>
#include <string.h>

#include "models/lang/eq_impl.h"

/* Exponents in halves: index 0 m, 1 kg, 2 s, 3 A, 4 K, 5 mol, 6 cd. */
typedef struct base_unit {
    const char *name;
    int8_t e[EQ_NDIM];
    int bare; /* usable without a prefix */
} base_unit;

/* Brian2's names: the long names stand alone and take prefixes (mvolt,
 * nsiemens); the short ones (V, A, S, F, s, m, mol) only with a prefix (mV,
 * nA, nS, pF, ms, cm), as in Brian2, where a bare m or s would shadow model
 * variables; Hz stands alone too. */
static const base_unit bases[] = {
    {"volt", {4, 2, -6, -2, 0, 0, 0}, 1},   {"V", {4, 2, -6, -2, 0, 0, 0}, 0},
    {"amp", {0, 0, 0, 2, 0, 0, 0}, 1},      {"ampere", {0, 0, 0, 2, 0, 0, 0}, 1},
    {"A", {0, 0, 0, 2, 0, 0, 0}, 0},        {"siemens", {-4, -2, 6, 4, 0, 0, 0}, 1},
    {"S", {-4, -2, 6, 4, 0, 0, 0}, 0},      {"farad", {-4, -2, 8, 4, 0, 0, 0}, 1},
    {"F", {-4, -2, 8, 4, 0, 0, 0}, 0},      {"ohm", {4, 2, -6, -4, 0, 0, 0}, 1},
    {"second", {0, 0, 2, 0, 0, 0, 0}, 1},   {"s", {0, 0, 2, 0, 0, 0, 0}, 0},
    {"hertz", {0, 0, -2, 0, 0, 0, 0}, 1},   {"Hz", {0, 0, -2, 0, 0, 0, 0}, 1},
    {"metre", {2, 0, 0, 0, 0, 0, 0}, 1},    {"meter", {2, 0, 0, 0, 0, 0, 0}, 1},
    {"m", {2, 0, 0, 0, 0, 0, 0}, 0},        {"mole", {0, 0, 0, 0, 0, 2, 0}, 1},
    {"mol", {0, 0, 0, 0, 0, 2, 0}, 0},      {"kelvin", {0, 0, 0, 0, 2, 0, 0}, 1},
};

typedef struct prefix {
    const char *p;
    double scale;
} prefix;

static const prefix prefixes[] = {
    {"f", 1e-15}, {"p", 1e-12}, {"n", 1e-9}, {"u", 1e-6}, {"m", 1e-3}, {"c", 1e-2},
    {"k", 1e3},   {"M", 1e6},   {"G", 1e9},
};

int eq_unit_lookup(const char *name, double *scale, eq_dim *dim)
{
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
        if (bases[i].bare && !strcmp(name, bases[i].name)) {
            memcpy(dim->e, bases[i].e, EQ_NDIM);
            *scale = 1.0;
            return 1;
        }
    for (size_t j = 0; j < sizeof prefixes / sizeof prefixes[0]; j++) {
        size_t pl = strlen(prefixes[j].p);
        if (strncmp(name, prefixes[j].p, pl))
            continue;
        for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
            if (!strcmp(name + pl, bases[i].name)) {
                memcpy(dim->e, bases[i].e, EQ_NDIM);
                *scale = prefixes[j].scale;
                return 1;
            }
    }
    return 0;
}

int eq_dim_eq(eq_dim a, eq_dim b) { return !memcmp(a.e, b.e, EQ_NDIM); }

int eq_dim_is_one(eq_dim a)
{
    for (int i = 0; i < EQ_NDIM; i++)
        if (a.e[i])
            return 0;
    return 1;
}

int eq_dim_mul(eq_dim a, eq_dim b, int sign, eq_dim *out)
{
    for (int i = 0; i < EQ_NDIM; i++) {
        int v = a.e[i] + sign * b.e[i];
        if (v < -100 || v > 100)
            return 0;
        out->e[i] = (int8_t)v;
    }
    return 1;
}

/* a^(num/den) where the exponents (halves) must stay whole halves. */
int eq_dim_scale(eq_dim a, int num, int den, eq_dim *out)
{
    for (int i = 0; i < EQ_NDIM; i++) {
        long v = (long)a.e[i] * num;
        if (v % den)
            return 0;
        v /= den;
        if (v < -100 || v > 100)
            return 0;
        out->e[i] = (int8_t)v;
    }
    return 1;
}

void eq_dim_name(eq_dim a, char *buf, size_t size)
{
    static const char *const named[] = {"volt", "amp", "siemens", "farad", "ohm", "second", "hertz", "metre",
                                        "mole"};
    if (eq_dim_is_one(a)) {
        snprintf(buf, size, "1");
        return;
    }
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        double s;
        eq_dim d;
        if (eq_unit_lookup(named[k], &s, &d) && eq_dim_eq(a, d)) {
            snprintf(buf, size, "%s", named[k]);
            return;
        }
    }
    static const char *const sym[EQ_NDIM] = {"m", "kg", "s", "A", "K", "mol", "cd"};
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < EQ_NDIM && o < size; i++) {
        int e = a.e[i];
        if (!e)
            continue;
        int n;
        if (e == 2)
            n = snprintf(buf + o, size - o, "%s%s", o ? " " : "", sym[i]);
        else if (e % 2 == 0)
            n = snprintf(buf + o, size - o, "%s%s^%d", o ? " " : "", sym[i], e / 2);
        else
            n = snprintf(buf + o, size - o, "%s%s^%.1f", o ? " " : "", sym[i], e / 2.0);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}
