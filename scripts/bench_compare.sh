#!/usr/bin/env bash
# The side-by-side benchmark (issue 7): gltrain against TensorFlow.js 4.22 (webgl
# and wasm backends) in one headless Chromium run (bench/compare), plus the same
# workloads natively through EGL (bench_compare_native) and where gltrain's step
# time goes (its --profile, natively and in Chromium). Writes bench/COMPARE.md;
# nothing in it is edited by hand.
#   bash scripts/bench_compare.sh [--quick]
# --quick: fewer steps and a 60-step "epoch" (minutes instead of ~15).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
quick=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    *) echo "bench_compare.sh: unknown argument '$a' (valid: --quick)" >&2; exit 2 ;;
  esac
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
for run in 1 2; do
  echo "bench_compare: native run $run"
  ./build-bench/bench/bench_compare_native "${quick[@]}" > "$tmp/native$run.json"
done
echo "bench_compare: step profiles (native, Chromium)"
./build-bench/bench/bench_compare_native --profile > "$tmp/profile-native.md"
node scripts/browser_run.mjs build-bench-web/bench bench_compare_native.html -- --profile \
  | grep -v '^browser_run:' > "$tmp/profile-web.md"
echo "bench_compare: the page in headless Chromium"
node bench/compare/run.mjs "${quick[@]}" --native "$tmp/native1.json,$tmp/native2.json" \
  --profile-native "$tmp/profile-native.md" --profile-web "$tmp/profile-web.md" --out bench/COMPARE.md
