"""ODE systems from Python (docs/solvers.md, "From Python").

    import numpy as np, brainlesslab as bl
    r = bl.solve_ode(equations="dx/dt = -k * x : 1", parameters={"k": 0.5}, init={"x": 1.0},
                     observe={"x2": "x**2"}, t=np.linspace(0, 1, 11), method="rk4", substeps=10,
                     gradient_weights=[1.0])          # L = sum of the final state
    r["y"], r["observations"], r["gradient"]          # NumPy arrays viewing the library's memory

Every array in the result is a view of one C block owned by a capsule (the
array's .base): nothing is copied, and the block lives while any view does.
"""

import numpy as np

from . import _core


def solve_ode(equations=None, *, plan=None, system=None, states=0, parameters=None, init=None, observe=None,
              t=None, method="rk4", substeps=1, rtol=1e-6, atol=1e-9, max_steps=100000, params=None, y0=None,
              sensitivities=False, gradient_weights=None, hessian=False):
    """Solve a system in the model language (equations, with parameters and init
    as dicts name -> value and observe as name -> expression) or a built-in
    (system="vdp", "exponential" with states=n, "hier-g4-s2", ...) on the grid t.

    params / y0 override the reference values (arrays in the system's order).
    sensitivities=True adds "sensitivities" (times x states x params; euler,
    rk4, cvode-bdf). gradient_weights w (states, or times x states) adds the
    gradient of L = sum_k w_k . y(t_k) by the discrete adjoint ("gradient",
    "gradient_y0", "value"; euler, rk4). hessian=True adds "hessian" (params x
    params, forward over adjoint; needs gradient_weights and a system with
    second derivatives).

    plan="path.toml": an `operation = "ode"` plan, loaded and resolved by the
    library (its system, grid, method, parameters, initial state,
    observations, sensitivities and [ode.gradient]: its objective, weights or
    expression, at "every" or "final", and Hessian give "gradient",
    "gradient_y0" (euler, rk4), "value" and "hessian" by the code the record's
    are made with). Keywords given here override params, y0 and
    sensitivities; gradient_weights replaces the plan's objective; hessian=True
    adds the Hessian of the plan's. The same values as `brainlesslab run`'s
    record, in memory.

    Returns a dict: t, y, observations (when observe), sensitivities, gradient,
    gradient_y0, value, stats, state_names, param_names, observe_names."""
    if plan is not None:
        import os

        v = _core.ode_plan(os.fspath(plan))
        names = v["param_names"]
        return _core.solve_ode(
            v["equations"], None if v["equations"] is not None else v["system"], v["states"],
            names if names is not None else None,
            np.asarray(v["params"] if params is None else params, dtype=np.float64) if names is not None else None,
            None, None, v["observe_names"], v["observe_exprs"], v["t"], v["method"], v["substeps"], v["rtol"],
            v["atol"], v["max_steps"],
            np.ascontiguousarray(v["params"] if params is None else params, dtype=np.float64),
            np.ascontiguousarray(v["y0"] if y0 is None else y0, dtype=np.float64),
            bool(v["sensitivities"] or sensitivities),
            None if gradient_weights is None else np.ascontiguousarray(gradient_weights, dtype=np.float64),
            bool(hessian), v["plan"])
    if t is None:
        raise TypeError("solve_ode needs the grid t (or a plan)")
    parameters = dict(parameters or {})
    init = dict(init or {})
    observe = dict(observe or {})
    return _core.solve_ode(
        equations, system, int(states),
        list(parameters), np.array(list(parameters.values()), dtype=np.float64),
        list(init), np.array(list(init.values()), dtype=np.float64),
        list(observe), [str(e) for e in observe.values()],
        np.ascontiguousarray(t, dtype=np.float64), method, int(substeps), float(rtol), float(atol), int(max_steps),
        None if params is None else np.ascontiguousarray(params, dtype=np.float64),
        None if y0 is None else np.ascontiguousarray(y0, dtype=np.float64),
        bool(sensitivities),
        None if gradient_weights is None else np.ascontiguousarray(gradient_weights, dtype=np.float64),
        bool(hessian))
