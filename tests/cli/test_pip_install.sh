# pip install, as a user without a Debian package would: an sdist made by the
# build backend (setuptools, pyproject.toml) from the files it lists, then
# `pip install` of it into a fresh venv of Debian's python3
# (--system-site-packages for NumPy and matplotlib; --no-build-isolation and
# --no-index: no internet), which builds the extension with CMake. Then the
# README's Python example runs there, outside the checkout, with the package
# from the venv.
set -euo pipefail
: "${BL_SOURCE_DIR:?}"
if [ "${BL_SANITIZED:-}" = 1 ]; then echo "skip: pip builds its own plain extension"; exit 77; fi
/usr/bin/python3 -c "import venv, ensurepip" 2>/dev/null || { echo "skip: python3-venv is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bl_pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The sdist, from a copy of the tracked tree (nothing of the caller's build dirs).
mkdir "$tmp/src"
if git -C "$BL_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$BL_SOURCE_DIR" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 cp -P --parents -t "$tmp/src" 2>/dev/null) || true
else
    (cd "$BL_SOURCE_DIR" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$tmp/src"
fi
(cd "$tmp/src" && /usr/bin/python3 -c "from setuptools import build_meta as b; print(b.build_sdist('$tmp/dist'))") \
    >"$tmp/sdist.log" 2>&1 || { cat "$tmp/sdist.log"; fail "build_sdist"; }
sdist=$(ls "$tmp"/dist/brainlesslab-*.tar.gz)

/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$tmp/venv/bin/pip" install --no-build-isolation --no-index --no-deps "$sdist" >"$tmp/pip.log" 2>&1 ||
    { tail -40 "$tmp/pip.log"; fail "pip install $sdist"; }
ls "$tmp"/venv/lib/python3*/site-packages/brainlesslab/_core*.so >/dev/null || fail "no extension in the venv"

mkdir "$tmp/run"
(cd "$tmp/run" && env -u PYTHONPATH MPLBACKEND=Agg "$tmp/venv/bin/python" "$BL_SOURCE_DIR/tests/cli/readme_python.py" \
    "$BL_SOURCE_DIR/README.md" "$BL_SOURCE_DIR") >"$tmp/py.out" 2>&1 || { cat "$tmp/py.out"; fail "README example"; }
grep -q "brainlesslab from $tmp/venv/lib/python3" "$tmp/py.out" || fail "not the venv's package: $(cat "$tmp/py.out")"
# The PyNN backend and its import hook are in the wheel (docs/pynn.md); with
# Debian's python3-pynn visible to the venv, a PyNN script runs on it.
ls "$tmp"/venv/lib/python3*/site-packages/brainlesslab/pynn/__init__.py >/dev/null || fail "no brainlesslab/pynn in the venv"
ls "$tmp"/venv/lib/python3*/site-packages/brainlesslab_pynn_hook.py >/dev/null || fail "no brainlesslab_pynn_hook in the venv"
if "$tmp/venv/bin/python" -c "import pyNN, neo" 2>/dev/null; then
  (cd "$tmp/run" && env -u PYTHONPATH "$tmp/venv/bin/python" -c "
import brainlesslab_pynn_hook
import pyNN.brainlesslab as sim
sim.setup(timestep=0.1)
src = sim.Population(1, sim.SpikeSourceArray(spike_times=[1.0, 2.0, 3.0]))
p = sim.Population(1, sim.IF_cond_exp(tau_refrac=1.0))
sim.Projection(src, p, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.2, delay=0.5))
p.record('spikes')
sim.run(10.0)
print('pyNN.brainlesslab', sim.__file__, p.get_spike_counts())
") >"$tmp/pynn.out" 2>&1 || { cat "$tmp/pynn.out"; fail "PyNN script on the installed package"; }
  grep -q "pyNN.brainlesslab $tmp/venv/lib/python3" "$tmp/pynn.out" || fail "not the venv's PyNN backend: $(cat "$tmp/pynn.out")"
fi
echo "ok   sdist $(basename "$sdist"), pip install into a fresh venv, $(tail -1 "$tmp/py.out")"
