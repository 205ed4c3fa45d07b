#!/usr/bin/env bash
# A language model's ms/step natively, on each engine, through the gltrain command line
# (bench/TRANSFORMER.md; Chromium's figures come from bench/compare's W5 and W6):
#   bash bench/cli_step_ms.sh MODEL.json [STEPS] [ENGINES]
# trains MODEL on the fortunes corpus (web/data/fortunes.txt, scripts/setup.sh) for 3 and
# for 3 + STEPS steps (default 20) on each engine (default "cpu gpu") and prints
# "ENGINE MS" lines: the difference of the two fits' training times (the epoch line's
# time=, validation not in it) over STEPS, so the first steps' compiling and warm-up are
# not counted. The corpus's first 400 kB stand in for it (the windows are as large;
# the held-out tail, validated at each fit's end, is then a tenth as long).
# GLTRAIN=path/to/gltrain overrides build/tools/gltrain.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model=${1:?usage: bench/cli_step_ms.sh MODEL.json [STEPS] [ENGINES]}
steps=${2:-20}
engines=${3:-cpu gpu}
gltrain=${GLTRAIN:-$root/build/tools/gltrain}
[ -x "$gltrain" ] || { echo "cli_step_ms.sh: $gltrain is missing (build the gltrain_cli target)" >&2; exit 2; }
corpus="$root/web/data/fortunes.txt"
[ -s "$corpus" ] || { echo "cli_step_ms.sh: $corpus is missing (bash scripts/setup.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 400000 "$corpus" > "$tmp/corpus.txt"
# The training seconds of a fit of $2 steps on engine $1.
fit_seconds() {
  "$gltrain" train "$model" --data "text:$tmp/corpus.txt" --steps "$2" --backend "$1" --progress lines \
    --checkpoint "$tmp/ck.safetensors" | sed -n 's/^epoch=.* time=\([0-9.]*\)s.*/\1/p' | tail -n 1
}
for engine in $engines; do
  short=$(fit_seconds "$engine" 3)
  long=$(fit_seconds "$engine" $((3 + steps)))
  awk -v e="$engine" -v a="$short" -v b="$long" -v n="$steps" 'BEGIN { printf "%s %.1f\n", e, (b - a) * 1000 / n }'
done
