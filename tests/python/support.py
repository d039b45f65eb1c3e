"""Shared setup of the Python package tests (run by CTest with
PYTHONPATH=<build>/python; BL_CLI, BL_SOURCE_DIR set by tests/CMakeLists.txt)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("BL_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
CLI = os.environ.get("BL_CLI", os.path.join(SOURCE, "build", "brainlesslab"))
LARVA = os.path.join(SOURCE, "data", "connectomes", "larva-winding2023")
JS = os.path.join(SOURCE, "tests", "js")


def small_larva_plan(dir, trials=3, duration_ms=200.0, silence=False):
    """The shipped larva plan, shortened, with its connectome path made absolute."""
    with open(os.path.join(SOURCE, "plans", "larva-orn-150hz.toml")) as f:
        text = f.read()
    text = text.replace("trials = 30", "trials = %d" % trials).replace("duration_ms = 1000.0", "duration_ms = %r" % duration_ms)
    text = text.replace('path = "../data/connectomes/larva-winding2023"', 'path = "%s"' % LARVA)
    if silence:
        text += '\n[[silence]]\nname = "PNs"\nselect = { cell_type = "PN" }\n'
    path = os.path.join(dir, "plan.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def node_oracle_ready():
    return shutil.which("node") is not None and os.path.isdir(os.path.join(JS, "node_modules", "parquet-wasm"))


def parquet_oracle(*args):
    r = subprocess.run(["node", os.path.join(JS, "parquet_io.mjs")] + list(args), capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout) if args[0] == "read" else None


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bl-py-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    # unittest's exit status, with 77 (CTest SKIP_RETURN_CODE) when everything was skipped.
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    if not r.wasSuccessful():
        sys.exit(1)
    if r.testsRun and len(r.skipped) == r.testsRun:
        sys.exit(77)
    sys.exit(0)
