#!/usr/bin/env bash
# The side-by-side benchmark (issue 7): gltrain against TensorFlow.js 4.22 (webgl
# and wasm backends) in one headless Chromium run (bench/compare), plus the same
# workloads natively through EGL (bench_compare_native) and where gltrain's step
# time goes (its --profile, natively and in Chromium). Writes bench/COMPARE.md;
# nothing in it is edited by hand.
#   bash scripts/bench_compare.sh [--quick] [--reps N]
# --quick: fewer steps and a 60-step "epoch" (minutes instead of ~55).
# --reps N: N runs of the page and of the native workloads (default 2; each
# page run takes about 25 minutes on 2 quiet cores with every contestant).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
quick=()
reps=2
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --reps) reps=${2:?--reps needs a number}; shift ;;
    *) echo "bench_compare.sh: unknown argument '$1' (valid: --quick, --reps N)" >&2; exit 2 ;;
  esac
  shift
done

bash scripts/setup.sh
gltrain_bench_npm

echo "bench_compare: building (build-bench, build-bench-web, the JavaScript module)"
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_BENCH=ON >/dev/null
cmake --build build-bench --target bench_compare_native -j "$GLTRAIN_JOBS" >/dev/null
emcmake cmake -S . -B build-bench-web -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_BENCH=ON -DGLTRAIN_BUILD_JS=OFF >/dev/null
cmake --build build-bench-web --target bench_compare_native -j "$GLTRAIN_JOBS" >/dev/null
gltrain_build_js >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
natives=()
for ((run = 1; run <= reps; ++run)); do
  echo "bench_compare: native run $run"
  ./build-bench/bench/bench_compare_native "${quick[@]}" > "$tmp/native$run.json"
  natives+=("$tmp/native$run.json")
done
echo "bench_compare: step profiles (native, Chromium)"
./build-bench/bench/bench_compare_native --profile > "$tmp/profile-native.md"
node scripts/browser_run.mjs build-bench-web/bench bench_compare_native.html -- --profile \
  | grep -v '^browser_run:' > "$tmp/profile-web.md"
echo "bench_compare: the page in headless Chromium"
node bench/compare/run.mjs "${quick[@]}" --reps "$reps" --native "$(IFS=,; echo "${natives[*]}")" \
  --profile-native "$tmp/profile-native.md" --profile-web "$tmp/profile-web.md" --out bench/COMPARE.md
