#!/usr/bin/env bash
# Builds issue 39's text corpus: every regular file (not a symbolic link) whose
# name has no dot, directly in /usr/share/games/fortunes (Debian's `fortunes`
# package), sorted by name in byte order, concatenated as bytes. Checks the
# result is the corpus the reference figures were measured on (43 files,
# 2,576,674 bytes, sha256 fbc2d796…b3fc3cd7) and writes it to OUT.
#
#   bash scripts/fortunes_corpus.sh OUT     (default: build/fortunes.txt)
#   gltrain train examples/models/char-transformer.json --data text:OUT
#
# The other files there are the same texts in other forms (NAME.dat indexes,
# NAME.u8 links to the UTF-8 copies), hence "no dot" and "not a link".
set -euo pipefail
dir=/usr/share/games/fortunes
out="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/fortunes.txt}"
files=43 bytes=2576674 sha_head=fbc2d796 sha_tail=b3fc3cd7

if [ ! -d "$dir" ]; then
  echo "fortunes_corpus: $dir is missing: install Debian's fortunes package (apt-get install fortunes," >&2
  echo "  or bash scripts/setup.sh, which installs it)" >&2
  exit 1
fi
mapfile -t names < <(find "$dir" -mindepth 1 -maxdepth 1 -type f ! -name '*.*' -printf '%f\n' | LC_ALL=C sort)
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$dir" && cat -- "${names[@]}") > "$tmp"
got_bytes=$(wc -c < "$tmp")
got_sha=$(sha256sum "$tmp" | cut -d' ' -f1)
if [ "${#names[@]}" != "$files" ] || [ "$got_bytes" != "$bytes" ] || [ "${got_sha:0:8}" != "$sha_head" ] ||
   [ "${got_sha: -8}" != "$sha_tail" ]; then
  echo "fortunes_corpus: $dir gives ${#names[@]} files, $got_bytes bytes, sha256 $got_sha;" >&2
  echo "  the reference corpus is $files files, $bytes bytes, sha256 $sha_head…$sha_tail (Debian 12's fortunes" >&2
  echo "  1:1.99.1-7.3); figures measured on this text are not comparable" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "fortunes_corpus: $out ($files files, $bytes bytes, sha256 $got_sha)"
