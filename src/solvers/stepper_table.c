/* The fixed-step methods: one row per stepper file (euler.c, rk4.c).
 * Adding a fixed-step explicit Runge-Kutta method is one file and one row. */
#include <string.h>

#include "solvers/solvers_impl.h"

static const bl_ode_stepper *const steppers[] = {&bl_ode_stepper_euler, &bl_ode_stepper_rk4};

const bl_ode_stepper *bl_ode_stepper_find(const char *name)
{
    for (size_t i = 0; i < sizeof steppers / sizeof steppers[0]; i++)
        if (name && !strcmp(steppers[i]->name, name))
            return steppers[i];
    return NULL;
}
