#!/usr/bin/env bash
# Fetches PyNN's own example scripts (examples/ of PyNN's source release) for
# the installed python3-pynn, from Debian's source archive, into a cache
# directory; tests/oracles/test_pynn_examples.py runs them unchanged on
# pyNN.brainlesslab and pyNN.brian2 (docs/pynn.md, "PyNN's example scripts").
#
# Why fetched and not in the tree: PyNN is CeCILL-2 (copyleft); BrainlessLab
# is MIT, so PyNN's files are not copied into it. Debian's binary package
# installs no examples; its source package's upstream tarball
# (pynn_<version>.orig.tar.gz) holds them.
#
#   scripts/fetch-pynn-examples.sh [DEST]
#
# DEST (or $BL_PYNN_EXAMPLES_DIR; default
# ${XDG_CACHE_HOME:-$HOME/.cache}/brainlesslab/pynn-examples-<version>)
# receives examples/ and a stamp file. The tarball itself is kept in
# ${XDG_CACHE_HOME:-$HOME/.cache}/brainlesslab/ (or $BL_PYNN_TARBALL_CACHE),
# so a later call with another DEST (the test's build tree) needs no network.
# The tarball's SHA-256 must equal the value pinned below for the installed
# version; an unpinned version is refused (pin it after checking the hash
# against Debian's .dsc).
#
# Idempotent: a DEST whose stamp names the pinned hash is left as it is.
# Exit status: 0 done; 1 refused or failed (the reason on stderr; offline is
# one such reason).
set -euo pipefail

die() { echo "fetch-pynn-examples: $*" >&2; exit 1; }

# upstream version -> SHA-256 of pynn_<version>.orig.tar.gz (the hash in
# Debian's pynn_0.10.1-2.dsc, Checksums-Sha256)
pinned_sha256() {
  case "$1" in
    0.10.1) echo b11817579915acd7b905f49a37369d0f203f1870267f51d8caa6d78ac35cd5c2 ;;
    *) return 1 ;;
  esac
}

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script reads the installed python3-pynn's version from Debian's package database"
pkg_version=$(dpkg-query -W -f='${Version}' python3-pynn 2>/dev/null) ||
  die "python3-pynn is not installed (scripts/install-deps.sh installs it)"
[ -n "$pkg_version" ] || die "python3-pynn is not installed (scripts/install-deps.sh installs it)"
src_pkg=$(dpkg-query -W -f='${source:Package}' python3-pynn)
src_version=$(dpkg-query -W -f='${source:Version}' python3-pynn)
upstream=${src_version#*:}   # drop an epoch
upstream=${upstream%-*}      # drop the Debian revision
sha=$(pinned_sha256 "$upstream") ||
  die "python3-pynn $pkg_version (upstream $upstream) has no pinned SHA-256 here; add it to pinned_sha256 after checking it against Debian's ${src_pkg}_${src_version}.dsc"

cache_root=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/brainlesslab
dest=${1:-${BL_PYNN_EXAMPLES_DIR:-$cache_root/pynn-examples-$upstream}}
tar_dir=${BL_PYNN_TARBALL_CACHE:-$cache_root}
tarball_name="${src_pkg}_${upstream}.orig.tar.gz"
tarball="$tar_dir/$tarball_name"
stamp="$dest/.fetched-sha256"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && [ -d "$dest/examples" ]; then
  echo "fetch-pynn-examples: $dest/examples is there (PyNN $upstream, sha256 $sha)"
  exit 0
fi

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Download into a temporary file and keep it only when its bytes hash to the pin.
download() {
  local tmpdir="$1" uris="$2" got=""
  mkdir -p "$tar_dir" || die "cannot create $tar_dir"
  for uri in $uris; do
    echo "fetch-pynn-examples: downloading $uri"
    if curl -fsSL --retry 2 --connect-timeout 20 -o "$tmpdir/$tarball_name" "$uri"; then
      got=$(sha_of "$tmpdir/$tarball_name")
      if [ "$got" = "$sha" ]; then
        mv "$tmpdir/$tarball_name" "$tarball"
        return 0
      fi
      echo "fetch-pynn-examples: $uri: SHA-256 $got, not the pinned $sha; not used" >&2
    else
      echo "fetch-pynn-examples: $uri: download failed" >&2
    fi
  done
  return 1
}

# deb-src entries for the machine's own configured Debian archives: deb822
# .sources files (Types: deb -> deb-src) and one-line .list entries
# (deb ... -> deb-src ...). apt runs with private state and lists in a
# temporary directory, so the system's apt state is not touched.
apt_uris() {
  local tmpdir="$1" parts="$1/sources.list.d" f
  mkdir -p "$parts" "$tmpdir/lists/partial" "$tmpdir/cache/archives/partial"
  : > "$tmpdir/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed -E 's/^Types:.*/Types: deb-src/' "$f" > "$parts/$(basename "$f")"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f" >> "$tmpdir/sources.list"
  done
  local opts=(-o "Dir::Etc::SourceList=$tmpdir/sources.list" -o "Dir::Etc::SourceParts=$parts"
              -o "Dir::State::Lists=$tmpdir/lists" -o "Dir::Cache=$tmpdir/cache"
              -o "Dir::State::status=/var/lib/dpkg/status" -o Debug::NoLocking=1
              -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -qq update >"$tmpdir/apt-update.log" 2>&1 || {
    sed 's/^/  apt: /' "$tmpdir/apt-update.log" >&2
    return 1
  }
  apt-get "${opts[@]}" -qq source --print-uris "$src_pkg=$src_version" 2>"$tmpdir/apt-source.log" |
    sed -nE "s/^'([^']*\/$tarball_name)'.*/\1/p"
}

# The pool path as a last resort (the archive's layout; the hash decides).
pool_uris() {
  local f prefix
  case "$src_pkg" in lib*) prefix=${src_pkg:0:4} ;; *) prefix=${src_pkg:0:1} ;; esac
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    { sed -nE 's/^URIs:[[:space:]]*//p' "$f" | tr ' ' '\n'
      sed -nE 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' "$f"; } |
      grep -E '^https?://' | grep -v -- '-security' || true
  done | sort -u | sed "s#/*\$#/pool/main/$prefix/$src_pkg/$tarball_name#"
}

if [ ! -f "$tarball" ] || [ "$(sha_of "$tarball")" != "$sha" ]; then
  command -v curl >/dev/null 2>&1 || die "curl not found (apt-get install curl)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  uris=$(apt_uris "$tmp" || true)
  uris="$uris $(pool_uris)"
  [ -n "${uris// /}" ] || die "no Debian archive is configured in /etc/apt/sources.list{,.d} to fetch $tarball_name from"
  download "$tmp" "$uris" ||
    die "could not fetch $tarball_name with SHA-256 $sha (offline, or the archive no longer has PyNN $upstream; tried: $(echo $uris))"
fi

# Extract examples/ only, into a fresh directory, then move it into place.
mkdir -p "$dest" || die "cannot create $dest"
work=$(mktemp -d "$dest/.extract.XXXXXX")
# (tar's listing stops at the first name: its SIGPIPE is not a failure here)
top=$( (tar -tzf "$tarball" || true) | head -n 1 | cut -d/ -f1)
[ -n "$top" ] || die "$tarball: empty archive"
tar -xzf "$tarball" -C "$work" "$top/examples" || die "$tarball holds no $top/examples"
rm -rf "$dest/examples"
mv "$work/$top/examples" "$dest/examples"
rm -rf "$work"
echo "$sha" > "$stamp"
echo "fetch-pynn-examples: PyNN $upstream examples in $dest/examples (sha256 $sha)"
