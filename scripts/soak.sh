#!/usr/bin/env bash
# Runs the soak benchmark (bench/soak.cpp: the 784-256-128-10 MLP on
# synthetic data, 20,000 steps by default) natively and writes its output,
# with the date, the machine and the command, to bench/SOAK.md. Figures come
# only from the program's output; nothing is edited by hand. Takes about 50
# minutes on a 2-core machine with llvmpipe.
#   scripts/soak.sh [bench_soak args...]            e.g. --steps 2000 for a quick look
#   scripts/soak.sh --from-log FILE                 (re)write SOAK.md from a saved run's log
# Builds only bench_soak, in its own folder build-soak/. Exit status: bench_soak's
# (1 if anything grew).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"

log=build-soak/soak.log
if [ "${1:-}" = "--from-log" ]; then
  log="$2"
else
  bash scripts/setup.sh
  cmake -S . -B build-soak -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=OFF -DGLTRAIN_BUILD_EXAMPLES=OFF \
        -DGLTRAIN_BUILD_BENCH=ON -DGLTRAIN_BUILD_JS=OFF >/dev/null
  cmake --build build-soak -j "$GLTRAIN_JOBS" --target bench_soak >/dev/null
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  {
    echo "started: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(nproc) cores, ${cpu:-unknown CPU}, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "command: bench_soak $*"
  } > "$log"
  set +e
  ./build-soak/bench/bench_soak "$@" | tee -a "$log"
  status=${PIPESTATUS[0]}
  set -e
  echo "finished: $(date -u '+%Y-%m-%d %H:%M UTC'), exit status $status" >> "$log"
fi

{
  echo "# Soak results"
  echo
  echo "Written by \`bash scripts/soak.sh\` from the output of \`bench_soak\` (bench/soak.cpp); nothing edited by hand."
  echo "Snapshots: textures in the pool (live + free, and ever created), the pool's bytes, compiled programs, host RSS"
  echo "(/proc/self/status VmRSS) and glGetError, after warm-up and every 2,000 steps."
  echo
  echo '```'
  cat "$log"
  echo '```'
} > bench/SOAK.md
echo "soak.sh: wrote bench/SOAK.md"
exit "${status:-0}"
