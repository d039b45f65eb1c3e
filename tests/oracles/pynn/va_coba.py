"""A conductance-based balanced network in the style of PyNN's VA benchmark
(Vogels & Abbott 2005, as in Brette et al. 2007 "COBA"), scaled down to 400
cells with each cell's number of inputs kept (80 excitatory-like sources).
Written for BrainlessLab's tests in PyNN's example style: the simulator is
the first argument, as in PyNN's own examples:

    python3 va_coba.py brian2 --out spikes.npz
    python3 -c "import brainlesslab_pynn_hook, runpy, sys; sys.argv = sys.argv[1:]; \
runpy.run_path(sys.argv[0], run_name='__main__')" va_coba.py brainlesslab

Nothing in it names a backend: it runs unchanged on any PyNN backend.
"""
import os

import numpy as np
from pyNN.utility import get_simulator
from pyNN.random import NumpyRNG, RandomDistribution

sim, options = get_simulator(("--out", "where the spike trains go (npz)", {"default": "va_coba.npz"}),
                             ("--duration", "ms", {"default": 300.0, "type": float}))

n_exc, n_inh, p_connect = 320, 80, 0.2
cell_params = dict(tau_m=20.0, tau_refrac=5.0, v_thresh=-50.0, v_reset=-60.0, v_rest=-60.0, cm=0.2,
                   e_rev_E=0.0, e_rev_I=-80.0, tau_syn_E=5.0, tau_syn_I=10.0, i_offset=0.0)
w_exc, w_inh, delay = 0.004, 0.051, 0.2  # uS, ms (the benchmark's 4 nS and 51 nS)

sim.setup(timestep=0.1, min_delay=0.1, seed=int(os.environ.get("VA_SEED", "1")))
exc = sim.Population(n_exc, sim.IF_cond_exp(**cell_params), label="exc")
inh = sim.Population(n_inh, sim.IF_cond_exp(**cell_params), label="inh")
rng = NumpyRNG(seed=20070301)
v_init = RandomDistribution("uniform", (-60.0, -50.0), rng=rng)
exc.initialize(v=v_init)
inh.initialize(v=v_init)

stim = sim.Population(100, sim.SpikeSourcePoisson(rate=50.0, start=0.0, duration=50.0), label="stim")

syn_exc = sim.StaticSynapse(weight=w_exc, delay=delay)
syn_inh = sim.StaticSynapse(weight=w_inh, delay=delay)
for k, post in enumerate((exc, inh)):
    sim.Projection(exc, post, sim.FixedProbabilityConnector(p_connect, rng=NumpyRNG(seed=11 + k)), syn_exc,
                   receptor_type="excitatory")
    sim.Projection(inh, post, sim.FixedProbabilityConnector(p_connect, rng=NumpyRNG(seed=21 + k)), syn_inh,
                   receptor_type="inhibitory")
    sim.Projection(stim, post, sim.FixedProbabilityConnector(0.5, rng=NumpyRNG(seed=31 + k)),
                   sim.StaticSynapse(weight=0.02, delay=delay), receptor_type="excitatory")

for p in (exc, inh, stim):
    p.record("spikes")
sim.run(options.duration)

data = {}
for p in (exc, inh, stim):
    seg = p.get_data().segments[0]
    for k, st in enumerate(seg.spiketrains):
        data["%s/spikes/%d" % (p.label, k)] = np.asarray(st.magnitude, dtype=float)
    n = sum(len(st) for st in seg.spiketrains)
    print("%s: %d spikes, %.2f Hz" % (p.label, n, n / p.size / (options.duration / 1000.0)))
np.savez(options.out, **data)
sim.end()
