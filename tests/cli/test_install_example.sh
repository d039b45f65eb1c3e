#!/usr/bin/env bash
# The library as an installed product: `cmake --install` into a temporary
# prefix gives the CLI, both libraries (versioned SONAME, only bl_ symbols
# exported), the headers, the pkg-config file and the man page; the example
# (examples/larva_counts.c) builds with nothing but
# `pkg-config --cflags --libs brainlesslab`, shared and --static, and runs.
set -euo pipefail
: "${BL_BUILD_DIR:?}" "${BL_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix
cmake --install "$BL_BUILD_DIR" --prefix "$P" > "$tmp/install.log"

for f in bin/brainlesslab include/brainlesslab.h include/brainlesslab/engine.h include/brainlesslab/export.h \
         lib/libbrainlesslab.a lib/pkgconfig/brainlesslab.pc share/man/man1/brainlesslab.1; do
  [ -e "$P/$f" ] || { echo "FAIL: $f not installed"; cat "$tmp/install.log"; exit 1; }
done
so=$(ls "$P"/lib/libbrainlesslab.so.*.*.* 2>/dev/null | head -1)
[ -n "$so" ] && [ -L "$P/lib/libbrainlesslab.so" ] || { echo "FAIL: no versioned libbrainlesslab.so"; ls -l "$P/lib"; exit 1; }
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
[[ "$soname" =~ ^libbrainlesslab\.so\.[0-9]+ ]] || { echo "FAIL: SONAME '$soname' is not versioned"; exit 1; }
[ -e "$P/lib/$soname" ] || { echo "FAIL: no $soname link"; exit 1; }
# Hidden visibility: the public API is exported, private helpers are not.
syms=$(nm -D --defined-only "$so" | awk '{print $3}')
grep -qx bl_engine_create <<< "$syms" || { echo "FAIL: bl_engine_create not exported"; exit 1; }
grep -qx bl_partition_step <<< "$syms" && { echo "FAIL: private bl_partition_step is exported"; exit 1; }
other=$(grep -v '^bl_' <<< "$syms" || true)
[ -z "$other" ] || { echo "FAIL: non-bl_ symbols exported:"; echo "$other" | head; exit 1; }
"$P/bin/brainlesslab" --version | grep -q "^brainlesslab " || { echo "FAIL: installed CLI does not run"; exit 1; }
grep -q '^\.SS simulate' "$P/share/man/man1/brainlesslab.1" || { echo "FAIL: man page lacks the commands"; exit 1; }

export PKG_CONFIG_PATH=$P/lib/pkgconfig
# Sanitized builds: the example must carry the same runtime as the library.
cflags=${BL_SANITIZE_CFLAGS:-}
cc -std=c11 -Wall -Wextra -Werror $cflags "$BL_SOURCE_DIR/examples/larva_counts.c" -o "$tmp/larva_counts" \
   $(pkg-config --cflags --libs brainlesslab)
LD_LIBRARY_PATH=$P/lib "$tmp/larva_counts" "$BL_SOURCE_DIR/data/connectomes/larva-winding2023" > "$tmp/shared.out"
grep -Eq '^[0-9]+ ORNs stimulated; [1-9][0-9]* spikes in 100 ms; [1-9][0-9]* neurons fired$' "$tmp/shared.out" ||
  { echo "FAIL: unexpected example output:"; cat "$tmp/shared.out"; exit 1; }
ldd "$tmp/larva_counts" | grep -q "$P/lib/$soname" || true
# Static: Requires.private / Libs.private must be enough to link.
cc -std=c11 $cflags "$BL_SOURCE_DIR/examples/larva_counts.c" -o "$tmp/larva_counts_static" \
   $(pkg-config --cflags brainlesslab) "$P/lib/libbrainlesslab.a" $(pkg-config --static --libs-only-other --libs-only-L brainlesslab) \
   $(pkg-config --static --libs brainlesslab | sed 's/-lbrainlesslab//')
"$tmp/larva_counts_static" "$BL_SOURCE_DIR/data/connectomes/larva-winding2023" > "$tmp/static.out"
cmp -s "$tmp/shared.out" "$tmp/static.out" || { echo "FAIL: static and shared examples differ"; cat "$tmp"/*.out; exit 1; }
echo "ok   installed into a prefix; example built with pkg-config (shared and static): $(cat "$tmp/shared.out")"
