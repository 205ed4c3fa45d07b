#!/usr/bin/env bash
# The checkpoints interop_fixture wrote, through the command line program:
# `gltrain predict` on the same rows (the first 16 of Fashion-MNIST's test split),
# then interop_fixture check-cli compares its CSV with the writer's predictions.
#   cli_check.sh GLTRAIN INTEROP_FIXTURE DIR
set -euo pipefail
gltrain=$1 fixture=$2 dir=$3
for m in mlp cnn; do
  "$gltrain" predict "$dir/$m.model.json" --checkpoint "$dir/$m.safetensors" \
             --data fashion-mnist --split test --limit 16 --output "$dir/${m}_cli.csv"
done
"$fixture" check-cli "$dir"
