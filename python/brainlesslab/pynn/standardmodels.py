"""PyNN's standard cell, synapse and current-source types for
pyNN.brainlesslab.

Each cell type carries its model in BrainlessLab's model language (Brian2's
conventions, docs/models.md): the equations are those pyNN.brian2 0.10.1
gives Brian2 (pyNN/brian2/standardmodels/cells.py), written anew here, with
every parameter a per-neuron variable as pyNN.brian2 declares it (so the
compiled update follows Brian2's code generation for per-neuron terms), the
same threshold, reset, refractory period and integration method. Native
parameters are SI values computed as pyNN.brian2 computes them
(value * 0.001 for mV and ms, * 1e-9 for nA and nF, * 1e-6 for uS).

Differences from pyNN.brian2, on purpose (docs/pynn.md):
- IF_curr_alpha: Brian2 integrates it exactly (its 'exact' method); the
  model language's linear method does not solve the alpha synapse, so it
  runs with euler. IF_curr_exp runs with linear, bit-identical to Brian2.
- IF_curr_alpha: pyNN.brian2 lets the inhibitory current decay with
  tau_syn_E (a slip in its equations); here it decays with tau_syn_I.
- Izhikevich: a synaptic event adds w (mV) to v (pyNN.brian2 cannot connect
  to it: it adds a weight in nA to a voltage).
"""

import numpy as np
from pyNN.standardmodels import cells, synapses, electrodes, build_translations, StandardCurrentSource
from pyNN.parameters import ParameterSpace, Sequence

from . import simulator

mV = 0.001
ms = 0.001
nA = 1e-9
nF = 1e-9
uS = 1e-6
nS = 1e-9
Hz = 1.0


def _scaled(pynn_name, native_name, scale):
    return (pynn_name, native_name,
            lambda **p: p[pynn_name] * scale, lambda **p: p[native_name] / scale)


leaky_iaf = """
dv/dt = (v_rest-v)/tau_m + (i_syn + i_offset + i_inj)/c_m : volt (unless refractory)
tau_m : second
c_m : farad
v_rest : volt
i_offset : amp
i_inj : amp
"""

threshold_params = """
v_thresh : volt
v_reset : volt
"""

adexp_iaf = """
dv/dt = (delta_T*gL*exp((-v_thresh + v)/delta_T) + I + gL*(v_rest - v) - w_ad )/ c_m : volt (unless refractory)
dw_ad/dt = (a*(v-v_rest) - w_ad)/tau_w : amp
gL = c_m / tau_m : siemens
I = i_syn + i_inj + i_offset : amp
a : siemens
tau_m : second
tau_w : second
c_m : farad
v_rest : volt
v_spike : volt
v_thresh : volt
delta_T : volt
i_offset : amp
i_inj : amp
"""

cond_exp_syn = """
dge/dt = -ge/tau_syn_e : siemens
dgi/dt = -gi/tau_syn_i : siemens
i_syn = ge*(e_rev_e - v) + gi*(e_rev_i - v) : amp
tau_syn_e : second
tau_syn_i : second
e_rev_e : volt
e_rev_i : volt
"""

cond_alpha_syn = """
dge/dt = (2.7182818284590451*ye-ge)/tau_syn_e : siemens
dye/dt = -ye/tau_syn_e : siemens
dgi/dt = (2.7182818284590451*yi-gi)/tau_syn_i : siemens
dyi/dt = -yi/tau_syn_i : siemens
i_syn = ge*(e_rev_e - v) + gi*(e_rev_i - v) : amp
tau_syn_e : second
tau_syn_i : second
e_rev_e : volt
e_rev_i : volt
"""

curr_exp_syn = """
die/dt = -ie/tau_syn_e : amp
dii/dt = -ii/tau_syn_i : amp
i_syn = ie + ii : amp
tau_syn_e : second
tau_syn_i : second
"""

curr_alpha_syn = """
die/dt = (2.7182818284590451*ye-ie)/tau_syn_e : amp
dye/dt = -ye/tau_syn_e : amp
dii/dt = (2.7182818284590451*yi-ii)/tau_syn_i : amp
dyi/dt = -yi/tau_syn_i : amp
i_syn = ie + ii : amp
tau_syn_e : second
tau_syn_i : second
"""

leaky_iaf_translations = build_translations(
    _scaled('v_rest', 'v_rest', mV),
    _scaled('v_reset', 'v_reset', mV),
    _scaled('cm', 'c_m', nF),
    _scaled('tau_m', 'tau_m', ms),
    _scaled('tau_refrac', 'tau_refrac', ms),
    _scaled('v_thresh', 'v_thresh', mV),
    _scaled('i_offset', 'i_offset', nA))

adexp_iaf_translations = build_translations(
    _scaled('v_rest', 'v_rest', mV),
    _scaled('v_reset', 'v_reset', mV),
    _scaled('cm', 'c_m', nF),
    _scaled('tau_m', 'tau_m', ms),
    _scaled('tau_refrac', 'tau_refrac', ms),
    _scaled('v_thresh', 'v_thresh', mV),
    _scaled('i_offset', 'i_offset', nA),
    _scaled('a', 'a', nS),
    _scaled('b', 'b', nA),
    _scaled('delta_T', 'delta_T', mV),
    _scaled('tau_w', 'tau_w', ms),
    _scaled('v_spike', 'v_spike', mV))

cond_syn_translations = build_translations(
    _scaled('tau_syn_E', 'tau_syn_e', ms),
    _scaled('tau_syn_I', 'tau_syn_i', ms),
    _scaled('e_rev_E', 'e_rev_e', mV),
    _scaled('e_rev_I', 'e_rev_i', mV))

curr_syn_translations = build_translations(
    _scaled('tau_syn_E', 'tau_syn_e', ms),
    _scaled('tau_syn_I', 'tau_syn_i', ms))

# recordable PyNN variable -> (native variable, scale): native = pynn * scale
cond_vars = {'v': ('v', mV), 'gsyn_exc': ('ge', uS), 'gsyn_inh': ('gi', uS)}
curr_vars = {'v': ('v', mV), 'isyn_exc': ('ie', nA), 'isyn_inh': ('ii', nA)}


def _merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


class _Threshold(object):
    """pyNN.brian2's ThresholdNeuronGroup: v > v_thresh, v = v_reset, a
    homogeneous refractory period tau_refrac."""
    threshold = "v > v_thresh"
    reset = "v = v_reset"
    methods = ("linear", "euler")  # Brian2's ('exact', 'euler', 'heun'), as far as ours go
    excluded = ("tau_refrac",)

    @staticmethod
    def refractory(native):
        return native["tau_refrac"]

    def blocks(self, native):
        return self.threshold, self.reset


class IF_curr_exp(_Threshold, cells.IF_curr_exp):
    __doc__ = cells.IF_curr_exp.__doc__
    eqs = leaky_iaf + curr_exp_syn + threshold_params
    translations = _merge(leaky_iaf_translations, curr_syn_translations)
    state_vars = curr_vars
    post_synaptic_variables = {'excitatory': 'ie', 'inhibitory': 'ii'}
    weight_unit = ("1 amp", nA)


class IF_curr_alpha(_Threshold, cells.IF_curr_alpha):
    __doc__ = cells.IF_curr_alpha.__doc__
    eqs = leaky_iaf + curr_alpha_syn + threshold_params
    translations = _merge(leaky_iaf_translations, curr_syn_translations)
    state_vars = curr_vars
    post_synaptic_variables = {'excitatory': 'ye', 'inhibitory': 'yi'}
    weight_unit = ("1 amp", nA)


class IF_cond_exp(_Threshold, cells.IF_cond_exp):
    __doc__ = cells.IF_cond_exp.__doc__
    eqs = leaky_iaf + cond_exp_syn + threshold_params
    translations = _merge(leaky_iaf_translations, cond_syn_translations)
    state_vars = cond_vars
    post_synaptic_variables = {'excitatory': 'ge', 'inhibitory': 'gi'}
    weight_unit = ("1 siemens", uS)


class IF_cond_alpha(_Threshold, cells.IF_cond_alpha):
    __doc__ = cells.IF_cond_alpha.__doc__
    eqs = leaky_iaf + cond_alpha_syn + threshold_params
    translations = _merge(leaky_iaf_translations, cond_syn_translations)
    state_vars = cond_vars
    post_synaptic_variables = {'excitatory': 'ye', 'inhibitory': 'yi'}
    weight_unit = ("1 siemens", uS)


class IF_curr_delta(_Threshold, cells.IF_curr_delta):
    __doc__ = cells.IF_curr_delta.__doc__
    # pyNN.brian2's voltage_step_synapses: no synaptic current; a synaptic
    # event adds its weight (mV) to v
    eqs = leaky_iaf + """
i_syn = 0*amp : amp
""" + threshold_params
    # Brian2 integrates it exactly; the model language's linear method does
    # not take a decay without a synaptic variable (docs/pynn.md): euler
    methods = ("euler",)
    translations = dict(leaky_iaf_translations)
    state_vars = {'v': ('v', mV)}
    post_synaptic_variables = {'excitatory': 'v', 'inhibitory': 'v'}
    weight_unit = ("1 volt", mV)


adapt_iaf = """
dv/dt = (v_rest-v)/tau_m + (-g_r*(v-E_r) - g_s*(v-E_s) + i_syn + i_offset + i_inj)/c_m : volt (unless refractory)
dg_s/dt = -g_s/tau_s : siemens (unless refractory)
dg_r/dt = -g_r/tau_r : siemens (unless refractory)
tau_m : second
tau_s : second
tau_r : second
c_m : farad
v_rest : volt
i_offset : amp
i_inj : amp
E_r : volt
E_s : volt
"""


class IF_cond_exp_gsfa_grr(cells.IF_cond_exp_gsfa_grr):
    __doc__ = cells.IF_cond_exp_gsfa_grr.__doc__
    # pyNN.brian2's equations (adapt_iaf) with exponential conductances, as
    # the cell type's name and PyNN's documentation say (pyNN.brian2 gives
    # it alpha-shaped ones); the quantal increases q_sfa and q_rr are nS as
    # PyNN documents them (pyNN.brian2 adds q*1e9 nS at a spike); g_r and g_s
    # are recorded in nS, PyNN's unit for them (pyNN.brian2 divides by uS)
    eqs = adapt_iaf + cond_exp_syn
    translations = _merge(leaky_iaf_translations, cond_syn_translations, build_translations(
        _scaled('tau_sfa', 'tau_s', ms),
        _scaled('e_rev_sfa', 'E_s', mV),
        _scaled('q_sfa', 'q_s', nS),
        _scaled('tau_rr', 'tau_r', ms),
        _scaled('e_rev_rr', 'E_r', mV),
        _scaled('q_rr', 'q_r', nS)))
    state_vars = {'v': ('v', mV), 'g_r': ('g_r', nS), 'g_s': ('g_s', nS),
                  'gsyn_exc': ('ge', uS), 'gsyn_inh': ('gi', uS)}
    post_synaptic_variables = {'excitatory': 'ge', 'inhibitory': 'gi'}
    weight_unit = ("1 siemens", uS)
    # pyNN.brian2's AdaptiveNeuronGroup2 leaves the method to Brian2
    # ('exact', 'euler', 'heun'): the g*v products make it euler
    methods = ("linear", "euler")
    excluded = ("tau_refrac", "v_reset", "v_thresh", "q_s", "q_r")

    @staticmethod
    def refractory(native):
        return native["tau_refrac"]

    def blocks(self, native):
        # as pyNN.brian2's AdaptiveNeuronGroup2: the first neuron's values in the code text
        threshold = "v >= {}*mV".format(native["v_thresh"][0] / mV)
        reset = "v = {}*mV; g_r += {}*nS; g_s += {}*nS".format(
            native["v_reset"][0] / mV, native["q_r"][0] / nS, native["q_s"][0] / nS)
        return threshold, reset


class EIF_cond_exp_isfa_ista(cells.EIF_cond_exp_isfa_ista):
    __doc__ = cells.EIF_cond_exp_isfa_ista.__doc__
    eqs = adexp_iaf + cond_exp_syn
    translations = _merge(adexp_iaf_translations, cond_syn_translations)
    # the adaptation current is w_ad here (w names an edge's weight in
    # on_pre); it sorts among the other names as w does, so SymPy's term
    # order, and the rounding, are unchanged
    state_vars = {'v': ('v', mV), 'w': ('w_ad', nA), 'gsyn_exc': ('ge', uS), 'gsyn_inh': ('gi', uS)}
    post_synaptic_variables = {'excitatory': 'ge', 'inhibitory': 'gi'}
    weight_unit = ("1 siemens", uS)
    # pyNN.brian2's AdaptiveNeuronGroup asks for rk2 (which Brian2 2.5.1
    # then refuses for this model: "__k_i_syn could not be resolved")
    methods = ("rk2",)
    excluded = ("tau_refrac", "v_reset", "b")

    @staticmethod
    def refractory(native):
        return native["tau_refrac"]

    def blocks(self, native):
        # pyNN.brian2 writes the first neuron's values into the code text
        vcut = native["v_thresh"][0] + native["delta_T"][0] * 5
        threshold = "v > {}*mV".format(vcut / mV)
        reset = "v = {}*mV; w_ad+={}*amp".format(native["v_reset"][0] / mV, native["b"][0] / 1.0)
        return threshold, reset


class Izhikevich(cells.Izhikevich):
    __doc__ = cells.Izhikevich.__doc__
    translations = build_translations(
        _scaled('a', 'a', 1 / ms),
        _scaled('b', 'b', 1 / ms),
        _scaled('c', 'v_reset', mV),
        _scaled('d', 'd', mV / ms),
        _scaled('i_offset', 'i_offset', nA))
    eqs = """
dv/dt = (0.04/ms/mV)*v*v + (5/ms)*v + 140*mV/ms - u + (i_offset + i_inj)/pF : volt (unless refractory)
du/dt = a*(b*v-u) : volt/second (unless refractory)
a : 1/second
b : 1/second
d : volt/second
i_offset : amp
i_inj : amp
"""
    state_vars = {'v': ('v', mV), 'u': ('u', mV / ms)}
    post_synaptic_variables = {'excitatory': 'v', 'inhibitory': 'v'}
    weight_unit = ("1 volt", mV)
    methods = ("euler",)
    excluded = ("v_reset", "d")

    @staticmethod
    def refractory(native):
        return None

    def blocks(self, native):
        return ("v >= 30*mV",
                "v = {}*mV; u+={}*mV/ms".format(native["v_reset"][0] / mV, native["d"][0] / (mV / ms)))


class HH_cond_exp(cells.HH_cond_exp):
    __doc__ = cells.HH_cond_exp.__doc__
    translations = build_translations(
        _scaled('gbar_Na', 'gbar_Na', uS),
        _scaled('gbar_K', 'gbar_K', uS),
        _scaled('g_leak', 'g_leak', uS),
        _scaled('cm', 'c_m', nF),
        _scaled('v_offset', 'v_offset', mV),
        _scaled('e_rev_Na', 'e_rev_Na', mV),
        _scaled('e_rev_K', 'e_rev_K', mV),
        _scaled('e_rev_leak', 'e_rev_leak', mV),
        _scaled('e_rev_E', 'e_rev_e', mV),
        _scaled('e_rev_I', 'e_rev_i', mV),
        _scaled('tau_syn_E', 'tau_syn_e', ms),
        _scaled('tau_syn_I', 'tau_syn_i', ms),
        _scaled('i_offset', 'i_offset', nA))
    eqs = """
dv/dt = (g_leak*(e_rev_leak-v) - gbar_Na*(m*m*m)*h*(v-e_rev_Na) - gbar_K*(n*n*n*n)*(v-e_rev_K) + i_syn + i_offset + i_inj)/c_m : volt
dm/dt = (alpham*(1-m)-betam*m) : 1
dn/dt = (alphan*(1-n)-betan*n) : 1
dh/dt = (alphah*(1-h)-betah*h) : 1
alpham = (0.32/mV)*(13*mV-v+v_offset)/(exp((13*mV-v+v_offset)/(4*mV))-1.)/ms : Hz
betam = (0.28/mV)*(v-v_offset-40*mV)/(exp((v-v_offset-40*mV)/(5*mV))-1)/ms : Hz
alphah = 0.128*exp((17*mV-v+v_offset)/(18*mV))/ms : Hz
betah = 4./(1+exp((40*mV-v+v_offset)/(5*mV)))/ms : Hz
alphan = (0.032/mV)*(15*mV-v+v_offset)/(exp((15*mV-v+v_offset)/(5*mV))-1.)/ms : Hz
betan = .5*exp((10*mV-v+v_offset)/(40*mV))/ms : Hz
e_rev_Na : volt
e_rev_K : volt
e_rev_leak : volt
gbar_Na : siemens
gbar_K : siemens
g_leak : siemens
v_offset : volt
c_m : farad
i_offset : amp
i_inj : amp
""" + cond_exp_syn
    recordable = ['spikes', 'v', 'gsyn_exc', 'gsyn_inh', 'm', 'n', 'h']
    state_vars = {'v': ('v', mV), 'gsyn_exc': ('ge', uS), 'gsyn_inh': ('gi', uS),
                  'm': ('m', 1.0), 'n': ('n', 1.0), 'h': ('h', 1.0)}
    post_synaptic_variables = {'excitatory': 'ge', 'inhibitory': 'gi'}
    weight_unit = ("1 siemens", uS)
    methods = ("euler",)
    excluded = ()

    @staticmethod
    def refractory(native):
        return None

    def blocks(self, native):
        return "v > -40*mV", None


class SpikeSourcePoisson(cells.SpikeSourcePoisson):
    __doc__ = cells.SpikeSourcePoisson.__doc__
    translations = build_translations(('rate', 'rate'), ('start', 'start'), ('duration', 'duration'))
    source_kind = "poisson"


class SpikeSourceArray(cells.SpikeSourceArray):
    __doc__ = cells.SpikeSourceArray.__doc__
    translations = build_translations(('spike_times', 'spike_times'))
    source_kind = "array"


class StaticSynapse(synapses.StaticSynapse):
    __doc__ = synapses.StaticSynapse.__doc__
    # weight and delay stay in PyNN units (nA or uS, ms); the projection
    # scales weights to SI (as pyNN.brian2 does, weight * 1e-6 or * 1e-9)
    # and rounds delays to whole steps (as pyNN.brian2 does) when it builds.
    translations = build_translations(('weight', 'weight'), ('delay', 'delay'))

    def _get_minimum_delay(self):
        return simulator.state.dt


class STDPMechanism(synapses.STDPMechanism):
    __doc__ = synapses.STDPMechanism.__doc__
    # weights in nA or uS, delays in ms, as StaticSynapse; the projection
    # gives the rule to the engine in SI (bl_eq_net_set_stdp)
    base_translations = build_translations(('weight', 'weight'), ('delay', 'delay'),
                                           ('dendritic_delay_fraction', 'dendritic_delay_fraction'))

    def __init__(self, timing_dependence=None, weight_dependence=None, voltage_dependence=None,
                 dendritic_delay_fraction=1.0, weight=0.0, delay=None):
        if dendritic_delay_fraction != 0:
            # pyNN.brian2 refuses the same: the rule sees every delay as axonal
            raise ValueError("pyNN.brainlesslab supports only dendritic_delay_fraction=0 for STDP: "
                             "all delays are axonal (the rule sees the postsynaptic spike at once)")
        if not isinstance(timing_dependence, SpikePairRule) or not isinstance(weight_dependence,
                                                                             AdditiveWeightDependence):
            raise NotImplementedError("pyNN.brainlesslab: STDP with SpikePairRule and AdditiveWeightDependence only "
                                      "(pyNN.brian2 computes the additive rule for every weight dependence)")
        super(STDPMechanism, self).__init__(timing_dependence, weight_dependence, voltage_dependence,
                                            dendritic_delay_fraction, weight, delay)
        self.translations = dict(self.translations)  # PyNN updates its class-wide dict otherwise

    def _get_minimum_delay(self):
        return simulator.state.dt


class SpikePairRule(synapses.SpikePairRule):
    __doc__ = synapses.SpikePairRule.__doc__
    translations = build_translations(('A_plus', 'A_plus'), ('A_minus', 'A_minus'),
                                      ('tau_plus', 'tau_plus'), ('tau_minus', 'tau_minus'))


class AdditiveWeightDependence(synapses.AdditiveWeightDependence):
    __doc__ = synapses.AdditiveWeightDependence.__doc__
    translations = build_translations(('w_max', 'w_max'), ('w_min', 'w_min'))


# ---- current sources -------------------------------------------------------

class _CurrentSource(StandardCurrentSource):
    """A current into i_inj, in pyNN.brian2's rule: a list of (time,
    amplitude) changes; at the step whose time is within dt/2 of the next
    change, i_inj += amplitude - previous amplitude (for each target)."""

    def __init__(self, **parameters):
        super(StandardCurrentSource, self).__init__(**parameters)
        self.cell_list = []
        self._native = {}
        simulator.state.add_current_source(self)
        parameter_space = ParameterSpace(self.default_parameters, self.get_schema(), shape=(1,))
        parameter_space.update(**parameters)
        parameter_space = self.translate(parameter_space)
        self.set_native_parameters(parameter_space)

    def set_native_parameters(self, parameters):
        if simulator.state.net is not None:
            raise NotImplementedError("pyNN.brainlesslab: changing a current source after the network has run; "
                                      "call reset() first")
        parameters.evaluate(simplify=True)
        for name, value in parameters.items():
            if isinstance(value, Sequence):
                value = value.value
            self._native[name] = value

    def get_native_parameters(self):
        return ParameterSpace(dict(self._native), self.get_schema(), shape=(1,))

    def inject_into(self, cells):
        for cell in cells:
            if not cell.celltype.injectable:
                raise TypeError("Can't inject current into a spike source.")
        self.cell_list.extend(cells)
        if simulator.state.net is not None:
            raise NotImplementedError("pyNN.brainlesslab: injecting a current after the network has run; "
                                      "call reset() first")

    def _changes(self, dt_ms):
        """(times in s, amplitudes in A) as pyNN.brian2 builds them."""
        raise NotImplementedError

    @staticmethod
    def _steps(times):
        """The steps at which pyNN.brian2's pointer meets each change time (s):
        the step whose time in ms is within dt/2 of it. The list ends at the
        first change it cannot reach (the pointer stops there)."""
        dt_ms = simulator.state.dt
        steps = []
        for time_s in times:
            s = int(round(time_s * 1e3 / dt_ms))
            found = None
            for cand in (s - 1, s, s + 1):
                if cand >= 0 and abs((cand * simulator.state.dt_s) / simulator.MS - time_s * 1e3) < dt_ms / 2.0:
                    found = cand
                    break
            if found is None or (steps and found <= steps[-1]):
                break
            steps.append(found)
        return steps

    def _build(self, net):
        if not self.cell_list:
            return
        times, amps = self._changes(simulator.state.dt)
        steps = self._steps(times)
        values = [float(a) for a in amps[:len(steps)]]
        by_pop = {}
        for cell in self.cell_list:
            by_pop.setdefault(cell.parent, []).append(cell.parent.id_to_index(cell))
        for pop, idx in by_pop.items():
            net.add_current(pop._pop_id, "i_inj", np.asarray(idx, dtype=np.uint32),
                            np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=float))

    def record(self):
        pass

    def _get_data(self):
        raise NotImplementedError("pyNN.brainlesslab does not record current sources yet")


class DCSource(_CurrentSource, electrodes.DCSource):
    __doc__ = electrodes.DCSource.__doc__
    translations = build_translations(('amplitude', 'amplitude', nA), ('start', 'start', ms), ('stop', 'stop', ms))

    def _changes(self, dt_ms):
        start, stop, amp = self._native["start"], self._native["stop"], self._native["amplitude"]
        if start == 0:
            return [start, stop], [amp, 0.0]
        return [0.0, start, stop], [0.0, amp, 0.0]


class StepCurrentSource(_CurrentSource, electrodes.StepCurrentSource):
    __doc__ = electrodes.StepCurrentSource.__doc__
    translations = build_translations(('amplitudes', 'amplitudes', nA), ('times', 'times', ms))

    def _changes(self, dt_ms):
        times = np.asarray(self._native["times"], dtype=float)
        amplitudes = np.asarray(self._native["amplitudes"], dtype=float)
        if times.size != amplitudes.size:
            raise ValueError("StepCurrentSource: %d times and %d amplitudes" % (times.size, amplitudes.size))
        if times.size == 0:
            return [], []
        if not (times >= 0.0).all():
            raise ValueError("Step current cannot accept negative timestamps.")
        if not (np.diff(times) > 0.0).all():
            raise ValueError("Step current timestamps should be monotonically increasing.")
        times = self._round_timestamp(times, dt_ms * 1e-3)
        out_t, out_a = [], []
        for t0, a0, t1 in zip(times, amplitudes, times[1:]):
            if t0 != t1:
                out_t.append(t0)
                out_a.append(a0)
        out_t.append(times[-1])
        out_a.append(amplitudes[-1])
        return out_t, out_a


class ACSource(_CurrentSource, electrodes.ACSource):
    __doc__ = electrodes.ACSource.__doc__
    translations = build_translations(
        ('amplitude', 'amplitude', nA), ('start', 'start', ms), ('stop', 'stop', ms),
        ('frequency', 'frequency', Hz), ('offset', 'offset', nA), ('phase', 'phase', 1))

    def _changes(self, dt_ms):
        p = self._native
        dt = dt_ms * 1e-3
        n = int(round(((p["stop"] + dt) - p["start"]) / dt))
        times = [p["start"] + (i * dt) for i in range(n)]
        amps = [p["offset"] + p["amplitude"] * np.sin((t - p["start"]) * 2 * np.pi * p["frequency"]
                                                      + 2 * np.pi * p["phase"] / 360) for t in times]
        if amps:  # pyNN.brian2 takes the current back to 0 at the last sample's step
            amps[-1] = 0.0
        return times, amps


class NoisyCurrentSource(_CurrentSource, electrodes.NoisyCurrentSource):
    """pyNN.brian2's noise: at start, every max(dt, timestep) after it and at
    stop, each target cell gets its own draw mean + stdev * N(0, 1) from
    NumPy's global generator (np.random.randn); after stop the current is 0.
    pyNN.brian2 draws while it runs: at each change time, for each noisy
    source in creation order, for each target cell in injection order. The
    draws here are made when the network is built, in that same order, so
    that a script that seeds NumPy's generator gets pyNN.brian2's currents
    when nothing else draws from it during the run (Brian2's numpy target
    draws its rand() from it too, so a script with Poisson sources does
    not)."""
    __doc__ = electrodes.NoisyCurrentSource.__doc__
    translations = build_translations(
        ('mean', 'mean', nA), ('start', 'start', ms), ('stop', 'stop', ms),
        ('stdev', 'stdev', nA), ('dt', 'dt', ms))

    def _times(self):
        p = self._native
        step = max(p["dt"], simulator.state.dt * 1e-3)
        n = int(round((p["stop"] - p["start"]) / step))
        return [p["start"] + (i * step) for i in range(n)] + [p["stop"]]

    def _build(self, net):
        if not self.cell_list:
            return
        times = self._times()
        steps = self._steps(times)
        draws = self._draws  # (len(steps), cells), set by draw_noise()
        for c, cell in enumerate(self.cell_list):
            values = [float(v) for v in draws[:, c]]
            if values and len(steps) == len(times):
                values[-1] = 0.0  # pyNN.brian2 takes the current back to 0 after the last change
            net.add_current(cell.parent._pop_id, "i_inj",
                            np.asarray([cell.parent.id_to_index(cell)], dtype=np.uint32),
                            np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=float))


def draw_noise(current_sources):
    """Draw every NoisyCurrentSource's values in pyNN.brian2's order: by
    step, then source in creation order, then target cell."""
    events = []
    for k, src in enumerate(current_sources):
        if isinstance(src, NoisyCurrentSource):
            n = len(src._steps(src._times())) if src.cell_list else 0
            src._draws = np.zeros((n, len(src.cell_list)))
            events.extend((step, k, j) for j, step in enumerate(src._steps(src._times())[:n]))
    for step, k, j in sorted(events):
        src = current_sources[k]
        for c in range(len(src.cell_list)):
            src._draws[j, c] = src._native["mean"] + src._native["stdev"] * np.random.randn()
