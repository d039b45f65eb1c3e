"""Python argument checks (issue 26, finding 7): values that used to be
truncated or passed through silently are refused with a clear error.
seed=2**64+7 ran seed 7, trials=2**32+2 ran 2 trials, float neuron indices
were truncated, and a parameter a plan refuses (w_syn_mv=1.79e308) returned
a non-finite state."""
import os
import unittest

import brainlesslab as bl

from support import LARVA


class Arguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = bl.Connectome.load(LARVA)

    def sim(self, **kw):
        args = dict(stimulus=[{"neurons": [0, 1, 2], "rate_hz": 150.0}], trials=1, duration_ms=20.0, seed=1)
        args.update(kw)
        return bl.simulate(self.c, **args)

    def test_seed_out_of_range(self):
        with self.assertRaisesRegex(ValueError, r"seed must be an integer in 0\.\.18446744073709551615"):
            self.sim(seed=2**64 + 7)
        with self.assertRaisesRegex(ValueError, "seed"):
            self.sim(seed=-1)
        with self.assertRaisesRegex(TypeError, "seed must be an integer"):
            self.sim(seed=7.5)

    def test_trials_out_of_range(self):
        with self.assertRaisesRegex(ValueError, r"trials must be an integer in 1\.\.4294967295"):
            self.sim(trials=2**32 + 2)
        with self.assertRaisesRegex(ValueError, "trials"):
            self.sim(trials=0)
        with self.assertRaisesRegex(TypeError, "trials must be an integer"):
            self.sim(trials=2.9)

    def test_float_neuron_indices(self):
        with self.assertRaisesRegex(TypeError, "integer neuron indices"):
            self.sim(stimulus=[{"neurons": [0.0, 1.7], "rate_hz": 150.0}])
        with self.assertRaisesRegex(TypeError, "integer neuron indices"):
            self.sim(silence=[[1.5]])
        # select hands its criteria to the library's selector, which refuses them itself
        with self.assertRaisesRegex(bl.Error, r"neurons\[0\]: expected a neuron index \(integer\), got number 2.5"):
            self.c.select(neurons=[2.5])

    def test_parameters_plans_refuse(self):
        with self.assertRaisesRegex(bl.Error, "w_syn_mv"):
            self.sim(params={"w_syn_mv": 1.79e308})

    def test_good_arguments_still_run(self):
        import numpy as np

        r = self.sim(seed=2**64 - 1, trials=np.int64(2), stimulus=[{"neurons": np.array([0, 1], np.int32),
                                                                     "rate_hz": 150.0}])
        self.assertEqual(r.counts.shape[0], 2)


if __name__ == "__main__":
    unittest.main()
