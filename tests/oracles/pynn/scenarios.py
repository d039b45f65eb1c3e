"""PyNN scripts run unchanged on pyNN.brian2 and pyNN.brainlesslab by
tests/oracles/test_pynn_brian2.py: `python3 scenarios.py BACKEND OUTDIR CASE...`
writes OUTDIR/CASE.npz for each case: every population's spike trains and
recorded signals (one process runs them all: importing Brian2 takes seconds).

Cases:
  cond     spike sources and current sources into IF_cond_exp, IF_cond_alpha
           and Izhikevich, through AllToAll, OneToOne, FromList,
           FixedProbability and FixedNumberPre connectors (PyNN's own connector
           code draws the connections from a seeded NumpyRNG, the same on both
           backends): both integrate with euler, so identical is the target
  hh       HH_cond_exp (euler, dt 0.01 ms) driven by a DC and a step current
  order    twelve projections into one cell's ge in the same steps: the sums
           round as Brian2 orders its Synapses objects (by name)
  stdp     spike-pair additive STDP (STDPMechanism) from 12 spike sources onto
           4 IF_cond_exp cells: the weights after the run, spikes, v, gsyn
  curr     IF_curr_exp: Brian2 integrates it exactly, pyNN.brainlesslab with
           euler: a measured deviation
  curr_alpha  the same for IF_curr_alpha (Brian2's exact solution of it takes
           SymPy half a minute: not in the short CI run)
  poisson  80 excitatory and 20 inhibitory IF_cond_exp cells with recurrent
           FixedProbability connections, driven by 200 SpikeSourcePoisson:
           the random streams differ, spike counts are compared
"""
import gc
import sys

import numpy as np

import os

backend, outdir, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
if backend == "brian2":
    import brian2
    brian2.prefs.codegen.target = "numpy"  # no C compiler run: seconds, not minutes
    brian2.seed(20261202)  # Brian2's rand() reproducible from run to run
    import pyNN.brian2 as sim
else:
    import brainlesslab_pynn_hook  # noqa: F401  (makes pyNN.brainlesslab importable)
    import pyNN.brainlesslab as sim
from pyNN.random import NumpyRNG

pops = []


def setup(**kw):
    """sim.setup, then a collection: Brian2 names objects after the live ones
    ("synapses", "synapses_1", ...) and runs same-slot objects in name order,
    so the previous case's objects (freed by the cycle collector) must be gone
    for this case to see the names of a fresh process (simulator.brian2_order)."""
    sim.setup(**kw)
    gc.collect()


def case_cond():
    setup(timestep=0.1)
    src = sim.Population(3, sim.SpikeSourceArray(spike_times=[[5.0, 10.0, 10.5, 30.0, 60.2],
                                                              [7.3, 20.0, 21.0, 45.0],
                                                              [12.0, 12.1, 50.0]]), label="src")
    exc = sim.Population(6, sim.IF_cond_exp(tau_refrac=2.0, tau_m=15.0), label="exc")
    alpha = sim.Population(4, sim.IF_cond_alpha(tau_refrac=1.0), label="alpha")
    izh = sim.Population(2, sim.Izhikevich(), label="izh")
    exc.initialize(v=np.linspace(-70.0, -60.0, 6))
    rng = NumpyRNG(seed=42)
    sim.Projection(src, exc, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.03, delay=1.0),
                   receptor_type="excitatory")
    sim.Projection(src, exc[0:3], sim.OneToOneConnector(), sim.StaticSynapse(weight=0.05, delay=1.5),
                   receptor_type="inhibitory")
    sim.Projection(src, alpha, sim.FromListConnector([(0, 0, 0.05, 1.0), (1, 1, 0.08, 2.0), (2, 2, 0.1, 0.5),
                                                      (0, 3, 0.06, 3.0), (1, 3, 0.06, 3.0)]),
                   sim.StaticSynapse(), receptor_type="excitatory")
    sim.Projection(exc, alpha, sim.FixedProbabilityConnector(0.5, rng=rng),
                   sim.StaticSynapse(weight=0.01, delay=0.8), receptor_type="excitatory")
    sim.Projection(exc, exc, sim.FixedNumberPreConnector(2, rng=rng),
                   sim.StaticSynapse(weight=0.005, delay=2.0), receptor_type="inhibitory")
    sim.DCSource(amplitude=0.6, start=20.0, stop=70.0).inject_into(exc[4:6])
    sim.StepCurrentSource(times=[10.0, 40.0, 55.0], amplitudes=[0.8, 1.5, 0.0]).inject_into(alpha[0:2])
    sim.DCSource(amplitude=0.01, start=5.0, stop=80.0).inject_into(izh[0:1])
    exc.record(["spikes", "v", "gsyn_exc", "gsyn_inh"])
    alpha.record("spikes")
    alpha.record("v", sampling_interval=0.5)  # every 5th step, as a StateMonitor with its own dt
    izh.record(["spikes", "v"])
    pops.extend([exc, alpha, izh])
    sim.run(100.0)


def case_hh():
    setup(timestep=0.01)
    hh = sim.Population(3, sim.HH_cond_exp(), label="hh")
    sim.DCSource(amplitude=0.3, start=2.0, stop=20.0).inject_into(hh[0:1])
    sim.StepCurrentSource(times=[5.0, 10.0], amplitudes=[0.6, 0.1]).inject_into(hh[1:3])
    hh.record(["spikes", "v"])
    pops.append(hh)
    sim.run(25.0)


def case_curr(celltype="IF_curr_exp"):
    setup(timestep=0.1)
    src = sim.Population(2, sim.SpikeSourceArray(spike_times=[[5.0, 10.0, 10.5, 30.0], [7.3, 20.0, 21.0]]),
                         label="src")
    curr = sim.Population(3, getattr(sim, celltype)(tau_refrac=2.0), label=celltype)
    for p in (curr,):
        sim.Projection(src, p, sim.AllToAllConnector(), sim.StaticSynapse(weight=1.5, delay=1.0),
                       receptor_type="excitatory")
        sim.DCSource(amplitude=0.8, start=0.0, stop=50.0).inject_into(p)
        p.record(["spikes", "v"])
        pops.append(p)
    sim.run(60.0)


projections = []


def case_stdp():
    setup(timestep=0.1)
    times = np.random.RandomState(5).uniform(1.0, 190.0, size=(12, 8))
    times = [sorted(np.round(row, 1).tolist()) for row in times]
    src = sim.Population(12, sim.SpikeSourceArray(spike_times=times), label="src")
    post = sim.Population(4, sim.IF_cond_exp(tau_refrac=2.0), label="post")
    sim.DCSource(amplitude=0.45, start=0.0, stop=200.0).inject_into(post)
    stdp = sim.STDPMechanism(
        timing_dependence=sim.SpikePairRule(tau_plus=20.0, tau_minus=15.0, A_plus=0.01, A_minus=0.012),
        weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=0.04),
        weight=0.02, delay=1.0, dendritic_delay_fraction=0)
    projections.append(sim.Projection(src, post, sim.FixedProbabilityConnector(0.7, rng=NumpyRNG(seed=9)), stdp,
                                      receptor_type="excitatory", label="stdp"))
    post.record(["spikes", "v", "gsyn_exc"])
    pops.append(post)
    sim.run(200.0)


def case_order():
    # twelve projections add into one neuron's ge in the same step: the sum's
    # rounding depends on the order, which is Brian2's (by object name)
    setup(timestep=0.1)
    cell = sim.Population(1, sim.IF_cond_exp(tau_refrac=2.0), label="cell")
    for k, w in enumerate([0.0111, 0.0233, 0.0377, 0.0419, 0.0531, 0.0613, 0.0797, 0.0811, 0.0929, 0.1013,
                           0.1117, 0.1231]):
        src = sim.Population(1, sim.SpikeSourceArray(spike_times=[5.0, 12.0, 13.0 + k * 0.1]))
        sim.Projection(src, cell, sim.AllToAllConnector(), sim.StaticSynapse(weight=w, delay=1.0))
    cell.record(["spikes", "gsyn_exc", "v"])
    pops.append(cell)
    sim.run(30.0)


def case_poisson():
    setup(timestep=0.1, seed=int(os.environ.get("BL_PYNN_SEED", "7")))
    drive = sim.Population(200, sim.SpikeSourcePoisson(rate=30.0), label="drive")
    exc = sim.Population(80, sim.IF_cond_exp(tau_refrac=2.0), label="exc")
    inh = sim.Population(20, sim.IF_cond_exp(tau_refrac=2.0), label="inh")
    for k, p in enumerate((exc, inh)):
        # one generator per connector: PyNN draws a connector's matrix from
        # the generator's start, so a shared one would wire inh like exc
        sim.Projection(drive, p, sim.FixedProbabilityConnector(0.2, rng=NumpyRNG(seed=100 + k)),
                       sim.StaticSynapse(weight=0.003, delay=1.0), receptor_type="excitatory")
        sim.Projection(exc, p, sim.FixedProbabilityConnector(0.1, rng=NumpyRNG(seed=200 + k)),
                       sim.StaticSynapse(weight=0.004, delay=1.5), receptor_type="excitatory")
        sim.Projection(inh, p, sim.FixedProbabilityConnector(0.1, rng=NumpyRNG(seed=300 + k)),
                       sim.StaticSynapse(weight=0.02, delay=1.5), receptor_type="inhibitory")
        p.record("spikes")
        pops.append(p)
    drive.record("spikes")
    pops.append(drive)
    sim.run(500.0)


CASES = {"order": case_order, "cond": case_cond, "hh": case_hh, "curr": case_curr, "stdp": case_stdp,
         "curr_alpha": lambda: case_curr("IF_curr_alpha"), "poisson": case_poisson}
for case in cases:
    del pops[:]
    del projections[:]
    CASES[case]()
    data = {}
    for j in projections:  # plastic weights after the run, (pre, post) with NaN where no connection
        data["%s/weight" % j.label] = np.asarray(j.get("weight", format="array"), dtype=float)
    for p in pops:
        seg = p.get_data().segments[0]
        for k, st in enumerate(seg.spiketrains):
            data["%s/spikes/%d" % (p.label, k)] = np.asarray(st.magnitude, dtype=float)
        for sig in seg.analogsignals:
            data["%s/%s" % (p.label, sig.name)] = np.asarray(sig.magnitude, dtype=float)
    np.savez(os.path.join(outdir, case + ".npz"), **data)
    sim.end()
