"""Van der Pol (the built-in "vdp" system, and the same equations written in
the model language) integrated by a NumPy loop of the solver's fixed-step
RK4, its sums in the solver's order: test_solver_plans.sh and
test_ode_lang_plans.sh compare a record's y.npy with it bit for bit."""
import numpy as np


def rk4(t, substeps, mu=1.0, x0=(2.0, 0.0)):
    """The state at each time of `t` (the record's t.npy), `substeps` RK4
    steps between two of them."""
    def f(yy):
        return np.array([yy[1], mu * (1.0 - yy[0] * yy[0]) * yy[1] - yy[0]])
    x = np.array(x0)
    out = [x]
    for k in range(len(t) - 1):
        h = (t[k + 1] - t[k]) / float(substeps)
        for _ in range(substeps):
            hh, h6 = h * 0.5, h / 6.0
            k1 = f(x)
            k2 = f(x + hh * k1)
            k3 = f(x + hh * k2)
            k4 = f(x + h * k3)
            x = x + h6 * (((k1 + 2.0 * k2) + 2.0 * k3) + k4)
        out.append(x)
    return np.array(out)
