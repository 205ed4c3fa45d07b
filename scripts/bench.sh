#!/usr/bin/env bash
# Runs the kernel benchmark natively (EGL) and in headless Chromium (WebGL2)
# and writes both tables, with the date and the machine, to bench/RESULTS.md.
# Figures come only from this script's output; nothing is edited by hand.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
bash scripts/setup.sh
gltrain_build_native >/dev/null
gltrain_build_web >/dev/null
native=$(./build/bench/bench_kernels "$@")
native_conv=$(./build/bench/bench_conv "$@")
web=$(node scripts/browser_run.mjs build-web/bench bench_kernels.html -- "$@" | grep -v '^browser_run:')
# The convolution benchmark's quick form in the browser: SwiftShader runs the deeper CNN's step in seconds.
web_conv=$(node scripts/browser_run.mjs build-web/bench bench_conv.html -- --quick | grep -v '^browser_run:')
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# Kernel benchmark results"
  echo
  echo "Written by \`bash scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) cores, ${cpu:-unknown CPU}."
  echo "Medians of repeated runs, each forced to complete by a one-texel read."
  echo
  echo "## Native (EGL)"
  echo
  echo "$native"
  echo
  echo "### Convolution (bench_conv)"
  echo
  echo "$native_conv"
  echo
  echo "## Headless Chromium (WebGL2)"
  echo
  echo "$web"
  echo
  echo "### Convolution (bench_conv --quick)"
  echo
  echo "$web_conv"
} > bench/RESULTS.md
echo "bench.sh: wrote bench/RESULTS.md"
