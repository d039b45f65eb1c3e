#!/usr/bin/env bash
# Every public header stands alone and compiles as C11 and as C++ (so also
# from CUDA and from binding generators): no _Noreturn, no C-only syntax.
set -euo pipefail
: "${BL_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=$BL_SOURCE_DIR/include
fail=0
for h in "$inc"/brainlesslab.h "$inc"/brainlesslab/*.h; do
  rel=${h#"$inc"/}
  printf '#include "%s"\nint bl_header_check;\n' "$rel" > "$tmp/t.c"
  gcc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$inc" "$tmp/t.c" 2> "$tmp/err" ||
    { echo "FAIL: $rel as C11:"; cat "$tmp/err"; fail=1; }
  g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$inc" "$tmp/t.c" 2> "$tmp/err" ||
    { echo "FAIL: $rel as C++:"; cat "$tmp/err"; fail=1; }
done
if grep -n '_Noreturn' "$inc"/brainlesslab.h "$inc"/brainlesslab/*.h; then
  echo "FAIL: _Noreturn in a public header"; fail=1
fi
# Every function a public header declares is exported (BL_API).
if grep -nE '^(bl_status|void|int|const|uint|size_t|double|bl_[a-z_]+ \*?)[^;(]*\bbl_[a-z0-9_]+\(' \
     "$inc"/brainlesslab/*.h | grep -v 'BL_API' | grep -v typedef; then
  echo "FAIL: public functions above lack BL_API"; fail=1
fi
[ "$fail" = 0 ] || exit 1
echo "ok   $(ls "$inc"/brainlesslab/*.h | wc -l) public headers + brainlesslab.h compile standalone as C11 and C++"
