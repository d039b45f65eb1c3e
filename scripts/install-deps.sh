#!/usr/bin/env bash
# Installs BrainlessLab's build and test dependencies from Debian (run as root).
# Skips apt-get entirely when everything is already installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  dpkg-dev file   # the Debian package: cpack runs dpkg-shlibdeps and file over the binaries
  libtomlplusplus-dev libcmocka-dev libhdf5-dev librandom123-dev libssl-dev zlib1g-dev
  libcsv-dev libcjson-dev
  libsnappy-dev libzstd-dev libbrotli-dev liblz4-dev
  zstd lz4
  libgsl-dev liblapacke-dev
  python3 python3-dev python3-numpy python3-scipy python3-h5py python3-brian python3-matplotlib
  libcurl4-openssl-dev                                   # brainlesslab fetch
  python3-pandas python3-venv python3-pip python3-setuptools   # the Shiu workflow; pip install . (pyproject.toml)
  clang libclang-rt-14-dev
  libopenmpi-dev openmpi-bin
  python3-pandas  # the Shiu et al. workflow (get_rate, load_exps return pandas objects)
  python3-torch   # the bench's torch-eager peer (the phase4c seed's own tool) and gradient oracles
  python3-pynn    # PyNN scripts: pyNN.brian2 is the oracle for the PyNN backend
  libsundials-dev # stiff solvers and sensitivities (CVODE, CVODES, ARKODE)
  libcurl4-openssl-dev # `brainlesslab fetch`
  python3-venv python3-pip # the pip-install test builds the package in a fresh venv
)
# zstd and lz4 (the command-line tools) compress the Arrow oracle's fixtures
# (tests/js/arrow_fixtures.mjs). Node.js runs the test-only oracles (tests/js); a machine that already has a
# node with npm (another packaging of it) keeps it.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# PyNN's own example scripts (CeCILL-2, so not in this tree) for
# oracle.test_pynn_examples: the installed python3-pynn's upstream tarball
# from Debian's source archive, SHA-256 pinned, cached under ~/.cache. Not
# fatal here: without them that test fails and says why (or skips with
# BL_PYNN_EXAMPLES_OFFLINE=1).
bash "$(dirname "$0")/fetch-pynn-examples.sh" ||
  echo "install-deps: PyNN's example scripts were not fetched; oracle.test_pynn_examples will fail (BL_PYNN_EXAMPLES_OFFLINE=1 skips it)" >&2
