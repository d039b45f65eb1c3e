#!/usr/bin/env bash
# Installs BrainlessLab's build and test dependencies from Debian (run as root).
# Skips apt-get entirely when everything is already installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libtomlplusplus-dev libcmocka-dev libhdf5-dev librandom123-dev libssl-dev zlib1g-dev
  libcsv-dev libcjson-dev
  python3 python3-numpy python3-scipy python3-h5py python3-brian
  clang libclang-rt-14-dev
  libopenmpi-dev openmpi-bin
)
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
