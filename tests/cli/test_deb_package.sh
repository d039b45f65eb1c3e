#!/usr/bin/env bash
# The Debian package as a user gets it: CPack builds brainlesslab_<version>_amd64.deb
# from this build; it is unpacked with `dpkg -x` into a fresh directory (no
# root, no chroot: the package's paths are relative to its prefix, the
# extension finds libbrainlesslab.so through $ORIGIN, `brainlesslab plot`
# finds the Python package beside its own binary and the pkg-config file is
# relocatable), and run from there: the larva plan (then verify), the C
# example built with the unpacked pkg-config file, `python3 -c "import
# brainlesslab"` and `brainlesslab plot` on the record. Everything runs from a
# scratch directory, outside any checkout, on what the package ships under
# /usr/share/brainlesslab (plans, data, examples, docs): the shipped larva
# plan, `import larva` without --data, the README's Python example and the C
# example; and the package's pkg-config --cflags names only its own headers.
set -euo pipefail
: "${BL_BUILD_DIR:?}" "${BL_SOURCE_DIR:?}"
# A package of instrumented binaries is no product: the plain build's run is
# the check (the sanitizers cover the same code in every other test).
if [ "${BL_SANITIZED:-}" = 1 ]; then echo "skip: the Debian package is checked in the plain build"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^project(brainlesslab VERSION \([0-9.]*\).*/\1/p' "$BL_SOURCE_DIR/CMakeLists.txt")
arch=$(dpkg --print-architecture)
(cd "$BL_BUILD_DIR" && cpack -G DEB -B "$tmp/pkg" > "$tmp/cpack.log" 2>&1) ||
  { echo "FAIL: cpack"; cat "$tmp/cpack.log"; exit 1; }
deb=$tmp/pkg/brainlesslab_${version}_${arch}.deb
[ -f "$deb" ] || { echo "FAIL: $deb not built"; ls "$tmp/pkg"; exit 1; }

dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/contents"
for f in ./usr/bin/brainlesslab ./usr/lib/libbrainlesslab.a ./usr/include/brainlesslab.h \
         ./usr/include/brainlesslab/engine.h ./usr/lib/pkgconfig/brainlesslab.pc \
         ./usr/share/man/man1/brainlesslab.1 ./usr/lib/python3/dist-packages/brainlesslab/__init__.py \
         ./usr/lib/python3/dist-packages/brainlesslab/plot.py ./usr/lib/python3/dist-packages/brainlesslab/shiu.py \
         ./usr/lib/python3/dist-packages/brainlesslab/pynn/__init__.py \
         ./usr/lib/python3/dist-packages/brainlesslab-pynn.pth ./usr/lib/python3/dist-packages/brainlesslab_pynn_hook.py \
         ./usr/share/brainlesslab/plans/larva-orn-150hz.toml ./usr/share/brainlesslab/plans/reservoir/sorn-core.toml \
         ./usr/share/brainlesslab/data/connectomes/larva-winding2023/manifest.json \
         ./usr/share/brainlesslab/data/connectomes/celegans-varshney2011/manifest.json \
         ./usr/share/brainlesslab/data/drosophila-larva-winding2023/edges_all_compartments.csv.gz \
         ./usr/share/brainlesslab/data/celegans-varshney2011/varshney_chemical_edges.csv \
         ./usr/share/brainlesslab/examples/larva_counts.c ./usr/share/brainlesslab/docs/python.md \
         ./usr/share/brainlesslab/docs/data.md ./usr/share/brainlesslab/README.md \
         ./usr/share/brainlesslab/models/shiu2024.toml; do
  grep -qx -- "$f" "$tmp/contents" || { echo "FAIL: $f not in the package"; cat "$tmp/contents"; exit 1; }
done
grep -Eq '^\./usr/lib/libbrainlesslab\.so\.[0-9]+\.[0-9]+$' "$tmp/contents" || { echo "FAIL: no versioned shared library"; exit 1; }
grep -Eq '^\./usr/lib/python3/dist-packages/brainlesslab/_core\..*\.so$' "$tmp/contents" || { echo "FAIL: no extension module"; exit 1; }
# Nothing in the package may point back into this build tree.
dpkg -x "$deb" "$tmp/peek"
for so in "$tmp"/peek/usr/lib/python3/dist-packages/brainlesslab/_core.*.so "$tmp"/peek/usr/bin/brainlesslab; do
  if readelf -d "$so" | grep -E 'R(UN)?PATH' | grep -q "$BL_BUILD_DIR"; then
    echo "FAIL: $(basename "$so") has a RUNPATH into the build tree: $(readelf -d "$so" | grep -E 'R(UN)?PATH')"; exit 1
  fi
done
rm -rf "$tmp/peek"
depends=$(dpkg-deb -f "$deb" Depends)
for d in python3-numpy libhdf5 libssl3 libcurl; do
  grep -q "$d" <<< "$depends" || { echo "FAIL: Depends lacks $d: $depends"; exit 1; }
done

R=$tmp/root
dpkg -x "$deb" "$R"
B=$R/usr/bin/brainlesslab
S=$R/usr/share/brainlesslab
cd "$tmp"   # outside any checkout from here on
unset BL_DATA_DIR
"$B" --version | grep -q "^brainlesslab $version" || { echo "FAIL: unpacked CLI does not run"; exit 1; }
# The larva plan as the package ships it (its connectome path is relative to the plan file).
"$B" run "$S/plans/larva-orn-150hz.toml" --root "$tmp/records" --quiet > "$tmp/run.out"
rec=$(tail -1 "$tmp/run.out")
"$B" verify "$rec" > /dev/null || { echo "FAIL: verify of $rec"; exit 1; }
# `import larva` finds the shipped data beside the executable, and imports what the package ships.
"$B" import larva --out "$tmp/larva" > "$tmp/import.out" 2>/dev/null || { echo "FAIL: import larva without --data"; exit 1; }
cmp -s "$tmp/larva/offsets.npy" "$S/data/connectomes/larva-winding2023/offsets.npy" ||
  { echo "FAIL: import larva differs from the shipped connectome"; cat "$tmp/import.out"; exit 1; }

# pkg-config: only the package's own include directory (no toml++, HDF5 or Open MPI paths).
pc_cflags=$(PKG_CONFIG_PATH=$R/usr/lib/pkgconfig pkg-config --cflags brainlesslab)
[ "$(echo $pc_cflags)" = "-I$R/usr/lib/pkgconfig/../../include" ] || { echo "FAIL: pkg-config --cflags: $pc_cflags"; exit 1; }

# The C example as shipped, against the unpacked headers, library and pkg-config file.
cflags=${BL_SANITIZE_CFLAGS:-}
PKG_CONFIG_PATH=$R/usr/lib/pkgconfig cc -std=c11 -Wall -Wextra -Werror $cflags \
  "$S/examples/larva_counts.c" -o "$tmp/larva_counts" $(PKG_CONFIG_PATH=$R/usr/lib/pkgconfig pkg-config --cflags --libs brainlesslab)
LD_LIBRARY_PATH=$R/usr/lib "$tmp/larva_counts" "$S/data/connectomes/larva-winding2023" > "$tmp/example.out"
grep -Eq 'spikes in 100 ms' "$tmp/example.out" || { echo "FAIL: example output:"; cat "$tmp/example.out"; exit 1; }

if [ "${BL_SANITIZED:-}" = 1 ]; then
  # An instrumented extension needs the sanitizer runtimes preloaded into
  # python3; tests/python covers it under ASan, the package check stops here.
  echo "ok   $(basename "$deb") unpacked; larva plan, verify and the C example ran from it (Python part skipped under sanitizers)"
  exit 0
fi
# Python, from the unpacked tree only (no build directory on the path).
PY=$R/usr/lib/python3/dist-packages
(cd "$tmp" && env -u PYTHONPATH PYTHONPATH="$PY" /usr/bin/python3 -c "
import brainlesslab, sys
assert brainlesslab.__file__.startswith('$PY'), brainlesslab.__file__
r = brainlesslab.Record('$rec')
assert r.verify(), r.verify()
print('python ok', len(r.spikes), 'spikes')
") > "$tmp/py.out" || { echo "FAIL: import brainlesslab from the package"; cat "$tmp/py.out"; exit 1; }
# The README's Python example, on the shipped files.
mkdir "$tmp/readme"
(cd "$tmp/readme" && env -u PYTHONPATH PYTHONPATH="$PY" MPLBACKEND=Agg /usr/bin/python3 \
  "$BL_SOURCE_DIR/tests/cli/readme_python.py" "$S/README.md" "$S") > "$tmp/readme.out" 2>&1 ||
  { echo "FAIL: the README's Python example from the package"; cat "$tmp/readme.out"; exit 1; }
grep -q "brainlesslab from $PY" "$tmp/readme.out" || { echo "FAIL: README example used another package"; cat "$tmp/readme.out"; exit 1; }
env -u PYTHONPATH "$B" plot "$rec" --root "$tmp/figs" --figure psth > "$tmp/plot.out" ||
  { echo "FAIL: brainlesslab plot from the package"; cat "$tmp/plot.out"; exit 1; }
"$B" verify "$(head -1 "$tmp/plot.out")" > /dev/null
echo "ok   $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) unpacked with dpkg -x; from $tmp: shipped larva plan + verify, import larva, C example, import brainlesslab, plot: $(cat "$tmp/py.out"); $(tail -1 "$tmp/readme.out")"
