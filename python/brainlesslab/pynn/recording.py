"""Recording for pyNN.brainlesslab: the C network keeps every spike of every
population and the samples of the variables asked for (the state after each
step, as pyNN.brian2's StateMonitor with when='end'); this recorder reads them
back in PyNN's units, with the initial values as the first sample, as
pyNN.brian2 does. Spike times are (step * dt_s) / 0.001 ms, as pyNN.brian2
reads them from Brian2."""

import numpy as np
from pyNN import recording

from . import simulator


class Recorder(recording.Recorder):
    _simulator = simulator

    def __init__(self, population=None, file=None):
        recording.Recorder.__init__(self, population, file)
        self._net = None
        self._spike_cursor = 0
        self._sample_cursor = {}
        self._first_row = {}

    def _record(self, variable, new_ids, sampling_interval=None):
        self.sampling_interval = sampling_interval or self._simulator.state.dt
        k = self.sampling_interval / self._simulator.state.dt
        if abs(k - round(k)) > 1e-9 or round(k) < 1:
            raise ValueError("pyNN.brainlesslab: sampling interval %g ms is not a whole number of steps of %g ms"
                             % (self.sampling_interval, self._simulator.state.dt))
        if variable != 'spikes' and self._net is not None:
            native, _ = self.population.celltype.state_vars[variable]
            self._net.record(self.population._pop_id, native)

    def _attach(self, net):
        """The network was built: ask it to sample what is recorded."""
        self._net = net
        self._restart()
        self._net = net
        for variable in self.recorded:
            if variable != 'spikes':
                native, _ = self.population.celltype.state_vars[variable]
                net.record(self.population._pop_id, native)

    def _restart(self):
        self._net = None
        self._spike_cursor = 0
        self._sample_cursor = {}
        self._first_row = {}

    def _spikes(self):
        if self._net is None:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint32)
        steps, idx = self._net.spikes(self.population._pop_id)
        return steps[self._spike_cursor:], idx[self._spike_cursor:]

    def _get_spiketimes(self, requested_ids, clear=False):
        steps, idx = self._spikes()
        dt_s = self._simulator.state.dt_s
        times = (steps.astype(float) * dt_s) / simulator.MS
        ids = idx.astype(int) + self.population.first_id
        mask = np.in1d(ids, np.asarray(requested_ids, dtype=int))
        if clear:
            self._clear_simulator()
        return ids[mask], times[mask]

    def _get_all_signals(self, variable, ids, clear=False):
        native, scale = self.population.celltype.state_vars[variable]
        ids = np.asarray(ids, dtype=int)
        if ids.size == 0:  # a view none of whose cells record the variable
            return np.zeros((0, 0)), None
        index = np.asarray(self.population.id_to_index(ids), dtype=int).reshape(-1)
        if self._net is None:
            rows = np.zeros((0, self.population.size))
        else:
            rows = self._net.samples(self.population._pop_id, native)
        cursor = self._sample_cursor.get(variable, 0)
        rows = rows[cursor:] / scale
        k = int(round(self.sampling_interval / self._simulator.state.dt))
        rows = rows[::k]
        if variable in self._first_row:
            first = self._first_row[variable]
        elif variable in getattr(self.population, "_initial_used", {}):
            first = self.population._initial_used[variable]
        else:
            first = np.asarray(self.population.initial_values[variable].evaluate(simplify=False), dtype=float)
            first = np.broadcast_to(first, (self.population.size,))
        values = np.empty((rows.shape[0] + 1, index.size))
        values[0, :] = first[index]
        values[1:, :] = rows[:, index]
        if clear:
            self._clear_simulator()
        return values, None

    def _local_count(self, variable, filter_ids=None):
        if variable != 'spikes':
            raise ValueError("Only implemented for spikes")
        steps, idx = self._spikes()
        counts = np.bincount(idx.astype(np.int64), minlength=self.population.size)
        N = {}
        for id in self.filter_recorded(variable, filter_ids):
            N[int(id)] = int(counts[self.population.id_to_index(id)])
        return N

    def _clear_simulator(self):
        if self._net is None:
            return
        steps, _ = self._net.spikes(self.population._pop_id)
        self._spike_cursor = steps.size
        for variable in self.recorded:
            if variable == 'spikes':
                continue
            native, scale = self.population.celltype.state_vars[variable]
            rows = self._net.samples(self.population._pop_id, native)
            self._sample_cursor[variable] = rows.shape[0]
            if rows.shape[0]:
                self._first_row[variable] = rows[-1] / scale

    def _reset(self):
        pass
