"""Signals during run_plan and simulate (issue 26, finding 7).

run_plan in a child process, signalled from this process once its record is
reserved: SIGTERM and SIGHUP end the child by that signal and leave a FAILED
record (not .RESERVED) that verifies as a FAILED record; SIGINT raises
KeyboardInterrupt in the child and the record is FAILED ("cancelled"). Each
plan is one long trial (60 s of simulated time), so only the engine's check
inside a trial (once per delay window) can answer in time: every answer must
come within ANSWER_S. simulate is interrupted inside one long trial on every
backend this build has, likewise within ANSWER_S."""
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import brainlesslab as bl
from support import CLI, LARVA, TempDirCase, main, small_larva_plan

ANSWER_S = 2.0
CHILD = r"""
import sys
import brainlesslab as bl
try:
    bl.run_plan(sys.argv[1], root=sys.argv[2], backend=sys.argv[3], threads=int(sys.argv[4]), force=True)
    print("DONE")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
    sys.exit(3)
"""


def wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.01)
    return None


class RunPlanSignalTest(TempDirCase):
    def run_and_signal(self, sig, backend="cpu", threads=1):
        plan = small_larva_plan(self.tmp, trials=1, duration_ms=60000.0)
        root = os.path.join(self.tmp, "rec-%d-%s-%d" % (sig, backend, threads))
        child = subprocess.Popen([sys.executable, "-c", CHILD, plan, root, backend, str(threads)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # Signalled once the record is reserved and its log says the run started.
            def running():
                recs = glob.glob(os.path.join(root, "*"))
                if len(recs) == 1 and os.path.isfile(os.path.join(recs[0], ".RESERVED")):
                    log = os.path.join(recs[0], "run.log")
                    if os.path.isfile(log):
                        with open(log) as f:
                            if "run " in f.read():
                                return recs[0]
                return None
            rec = wait_for(running, 60)
            self.assertIsNotNone(rec, "the child never reserved a record")
            time.sleep(0.3)  # inside the trial
            t0 = time.monotonic()
            child.send_signal(sig)
            out, err = child.communicate(timeout=30)
            answered = time.monotonic() - t0
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        print("%s on %s/%d: answered in %.3f s" % (signal.Signals(sig).name, backend, threads, answered))
        self.assertLess(answered, ANSWER_S, err)
        self.assertFalse(os.path.exists(os.path.join(rec, ".RESERVED")), err)
        self.assertTrue(os.path.isfile(os.path.join(rec, "FAILED")), err)
        with open(os.path.join(rec, "manifest.json")) as f:
            manifest = json.load(f)
        self.assertIn("cancelled after", manifest["message"])
        self.assertIn("steps of trial 0", manifest["message"])  # stopped inside the trial
        # A FAILED record verifies as what it is: intact, and FAILED.
        v = bl.verify(rec)
        self.assertFalse(v)
        self.assertIn("FAILED", v.message)
        cli = subprocess.run([CLI, "verify", rec], capture_output=True, text=True)
        self.assertIn("FAILED", cli.stdout + cli.stderr)
        self.assertNotIn("mismatch", (cli.stdout + cli.stderr).lower())
        return child.returncode, out, err

    def test_sigterm_fails_the_record_and_ends_the_process(self):
        rc, out, err = self.run_and_signal(signal.SIGTERM)
        self.assertEqual(rc, -signal.SIGTERM, err)

    def test_sighup_fails_the_record_and_ends_the_process(self):
        rc, out, err = self.run_and_signal(signal.SIGHUP)
        self.assertEqual(rc, -signal.SIGHUP, err)

    def test_sigint_is_keyboard_interrupt_and_fails_the_record(self):
        rc, out, err = self.run_and_signal(signal.SIGINT)
        self.assertEqual(rc, 3, err)
        self.assertIn("KeyboardInterrupt", out)

    def test_sigterm_on_the_reference_backend(self):
        rc, out, err = self.run_and_signal(signal.SIGTERM, backend="reference")
        self.assertEqual(rc, -signal.SIGTERM, err)

    def test_sigint_with_two_threads(self):
        rc, out, err = self.run_and_signal(signal.SIGINT, threads=2)
        self.assertEqual(rc, 3, err)

    def test_handlers_are_restored(self):
        # After run_plan the session's handlers are back, whatever it installed.
        seen = []
        old = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
        try:
            plan = small_larva_plan(self.tmp, trials=1, duration_ms=20.0)
            bl.run_plan(plan, root=os.path.join(self.tmp, "r"), backend="cpu", threads=1)
            self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
            os.kill(os.getpid(), signal.SIGTERM)
            wait_for(lambda: seen, 5)
            self.assertEqual(seen, [signal.SIGTERM])
        finally:
            signal.signal(signal.SIGTERM, old)


class SimulateSignalTest(TempDirCase):
    def test_ctrl_c_inside_one_trial(self):
        c = bl.Connectome.load(LARVA)
        stim = [{"select": {"cell_type": "sensory"}, "rate_hz": 150.0}]
        for backend, threads in [("reference", 1), ("cpu", 1), ("cpu", 2)]:
            fired = []
            timer = threading.Timer(0.5, lambda: (fired.append(time.monotonic()),
                                                  os.kill(os.getpid(), signal.SIGINT)))
            timer.start()
            with self.assertRaises(KeyboardInterrupt):
                bl.simulate(c, stimulus=stim, trials=1, duration_ms=120000.0, backend=backend, threads=threads)
            answered = time.monotonic() - fired[0]
            timer.join()
            print("simulate %s/%d: Ctrl-C answered in %.3f s" % (backend, threads, answered))
            self.assertLess(answered, ANSWER_S)
        r = bl.simulate(c, stimulus=stim, trials=1, duration_ms=10.0)  # the library is fine afterwards
        self.assertEqual(r.counts.shape, (1, 2952))


if __name__ == "__main__":
    main()
