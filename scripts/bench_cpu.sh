#!/usr/bin/env bash
# Runs the CPU backend benchmark (bench/cpu.cpp) natively and in headless
# Chromium (WebAssembly SIMD) and writes both tables, with the date, the
# machine and its load, to bench/CPU.md. Nothing above its "## By hand" sections
# (kept as they are) is edited by hand.
# Builds into build-cpu and build-cpu-web (only bench_cpu), and the JS module
# (gltrain_build_js) for the threads section (bench/cpu_threads_web.mjs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
bash scripts/setup.sh
cmake -S . -B build-cpu -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-cpu --target bench_cpu -j "$GLTRAIN_JOBS" >/dev/null
emcmake cmake -S . -B build-cpu-web -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_JS=OFF >/dev/null
cmake --build build-cpu-web --target bench_cpu -j "$GLTRAIN_JOBS" >/dev/null
# Sections made by hand (from "## By hand" on: before/after runs of a change) are kept.
kept=$(sed -n '/^## By hand/,$p' bench/CPU.md 2>/dev/null || true)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
native=$(./build-cpu/bench/bench_cpu "$@")
web=$(node scripts/browser_run.mjs build-cpu-web/bench bench_cpu.html -- "$@" | grep -v '^browser_run:')
gltrain_build_js >/dev/null
threads=$(node bench/cpu_threads_web.mjs --rounds 5 | sed -n '/^Chromium/,$p')
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
chromium=$(/usr/bin/chromium --version 2>/dev/null || echo Chromium)
{
  echo "# CPU backend benchmark results"
  echo
  echo "Written by \`bash scripts/bench_cpu.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) cores, ${cpu:-unknown CPU};"
  echo "load average before/after: ${load_before} / ${load_after} (wall-clock figures: other work on the machine slows them)."
  echo
  echo "## Native"
  echo
  echo "$native"
  echo
  echo "## Headless ${chromium}"
  echo
  echo "$web"
  echo
  echo "## In the browser: threads"
  echo
  echo "The JS module's single-threaded build against its threaded build (a cross-origin isolated page) on 1 and 2"
  echo "threads (\`new Context({backend: 'cpu', cpuThreads})\`), rounds interleaved (\`bench/cpu_threads_web.mjs\`)."
  echo
  echo "$threads"
  if [ -n "$kept" ]; then echo; echo "$kept"; fi
} > bench/CPU.md
echo "bench_cpu.sh: wrote bench/CPU.md"
