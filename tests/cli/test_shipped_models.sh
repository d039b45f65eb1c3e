#!/usr/bin/env bash
# Every shipped model (models/*.toml, docs/models.md "Adding a shipped model"):
# `model list` names each file of models/, `model show NAME` prints that
# file's bytes, `model check NAME` compiles it with no warning, and a preset
# alias compiles the same blocks from the name and from the file.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_shipped.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
listed=$("$BL_CLI" model list | awk 'NR > 1 {print $1}' | sort)
files=$(cd "$src/models" && ls *.toml | sed 's/\.toml$//' | sort)
if [[ "$listed" != "$files" ]]; then
  echo "FAIL model list names [$listed], models/ holds [$files]"; fails=$((fails + 1))
else
  echo "ok   model list names every file of models/: $(echo $files)"
fi
for name in $files; do
  if "$BL_CLI" model show "$name" > "$work/$name.toml" && cmp -s "$work/$name.toml" "$src/models/$name.toml"; then
    echo "ok   $name: model show prints models/$name.toml"
  else
    echo "FAIL $name: model show differs from models/$name.toml"; fails=$((fails + 1))
  fi
  if "$BL_CLI" model check "$name" > "$work/$name.check" 2>&1 && ! grep -q '^warning:' "$work/$name.check"; then
    echo "ok   $name: model check compiles it, no warning"
  else
    echo "FAIL $name: model check: $(tail -3 "$work/$name.check")"; fails=$((fails + 1))
  fi
  (cd "$src" && "$BL_CLI" model check "models/$name.toml") > "$work/$name.file.check" 2>&1 || true
  if cmp -s "$work/$name.check" "$work/$name.file.check"; then
    echo "ok   $name: the name and the file compile to the same blocks"
  else
    echo "FAIL $name: model check NAME and model check models/$name.toml differ"; fails=$((fails + 1))
  fi
done
[[ $fails -eq 0 ]] && echo "ok: every shipped model" || { echo "FAIL: $fails failure(s)"; exit 1; }
