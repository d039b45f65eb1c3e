#!/usr/bin/env bash
# The repository stands on its own: no project file may send a reader (or a
# test) to a directory beside the checkout. A fresh clone has nothing there,
# so such a reference is a dead end for a user and a hidden input for a test.
# The contract documents are in docs/ (docs/connectome-lif.md, docs/streams.md,
# docs/plans-and-records.md, docs/reservoir.md, docs/benchmark.md).
set -euo pipefail
root=${BL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
# Spelled in pieces so that this file does not match itself.
up="../"
dir="shared"

# The project's files: in a git checkout, the tracked ones and the untracked
# ones git does not ignore (so build trees, records and node_modules are not
# read); otherwise (an unpacked tarball) everything but those.
files=$(mktemp)
trap 'rm -f "$files"' EXIT
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$root" ls-files -z --cached --others --exclude-standard > "$files"
else
  find . \( -name .git -o -name node_modules -o -name 'build*' -o -name __pycache__ -o -name records \) -prune \
    -o -type f -printf '%P\0' > "$files"
fi
search() { # grep options..., over the project's files
  xargs -0 -r grep -nIH "$@" < "$files" || true
}
status=0

# 1. No relative path out of the repository into that directory, anywhere.
hits=$(search -F -e "${up}${dir}")
if [ -n "$hits" ]; then
  echo "FAIL: references to ${up}${dir} (outside the repository):"
  echo "$hits"
  status=1
fi

# 2. No path into its spec, seeds or data folders either (they are not in the
#    repository). Benchmark receipts written before the contract moved into
#    docs/ record the old location in their "contract" field; they are kept
#    byte for byte as the measurements wrote them, so they are exempt.
hits=$(search -E -e "${dir}/(spec|seeds|data)/" | grep -Ev '^docs/receipts/[^:]*\.json:' || true)
if [ -n "$hits" ]; then
  echo "FAIL: paths into a ${dir}/ folder that is not part of the repository:"
  echo "$hits"
  status=1
fi

# 3. Nothing the tests, scripts or build reads such a directory from the environment.
hits=$(search -E -e "BL_${dir^^}_DIR" | grep -v '^tests/docs/' || true)
if [ -n "$hits" ]; then
  echo "FAIL: a file names a ${dir} directory variable:"
  echo "$hits"
  status=1
fi

[ $status -eq 0 ] && echo "ok   no reference outside the repository (${up}${dir}, ${dir}/spec|seeds|data) in $(tr -cd '\0' < "$files" | wc -c) files"
exit $status
