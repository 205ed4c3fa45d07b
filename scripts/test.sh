#!/usr/bin/env bash
# Runs every gltrain test: installs what is missing, builds natively and with
# Emscripten, runs the GoogleTest suite natively (CTest, EGL) and the same
# suite inside headless Chromium (WebGL2), and checks that an installed
# gltrain is usable from another CMake project in both flavours; then builds the
# JavaScript module and tests it and the pages in web/ with Playwright.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
bash scripts/setup.sh
# Each stage prints the time since the start, so a slow CI run shows where the time went.
stage() { echo "== $* (at ${SECONDS} s)"; }

# Runs a GoogleTest program ("$2" ...) as two shards side by side (GTEST_TOTAL_SHARDS), each
# to its own log ($1.0.log, $1.1.log), printed when both end; fails if either does. Most of
# a test's time is one thread's (shader compiles, reference math, host code at -O0), so on
# two cores the halves overlap.
two_shards() {
  local log=$1 pids=() failed=0 i
  shift
  for i in 0 1; do
    GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$i "$@" > "$log.$i.log" 2>&1 &
    pids+=($!)
  done
  for i in 0 1; do wait "${pids[$i]}" || failed=1; done
  cat "$log.0.log" "$log.1.log"
  ((failed == 0)) || { echo "test.sh: a shard ($log.*.log) failed (its log is above)"; return 1; }
}

# The benchmarks are not tests: the bench scripts build them (bench.sh, bench_compare.sh, ...).
export GLTRAIN_BENCH=OFF
# The native GoogleTest suite runs once, under the sanitizers (build-asan, below): compiling
# it a second time at -O1 for CTest took about 5 of CI's minutes for no test the sanitized
# run misses. The optimised build keeps the examples, the CLI and the other CTests.
export GLTRAIN_SUITE_IN_CTEST=OFF
stage "source formatting (.clang-format, clang-format 14)"
git ls-files '*.hpp' '*.cpp' | xargs clang-format --dry-run --Werror
stage "API reference, every public symbol documented (scripts/api_docs.sh: Doxygen, TypeDoc)"
bash scripts/api_docs.sh
stage "native build (the library, examples, CLI, interop fixture; -O3)"
gltrain_build_native
stage "native CTests on EGL (examples, CLI, interop with TF.js and PyTorch, README blocks, install)"
(cd build && ctest --output-on-failure -j "$GLTRAIN_JOBS")
stage "native test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)"
gltrain_build_asan
# Leaks are errors, except allocations the GL driver stack keeps for the
# process's life (tests/lsan.supp lists only Mesa/LLVM/EGL libraries).
ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1" \
LSAN_OPTIONS="suppressions=$GLTRAIN_ROOT/tests/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  two_shards build-asan/shard build-asan/tests/gltrain_tests --gtest_color=no --gtest_brief=1 \
    --gtest_filter='-ModelConv.DeeperCnnWithBatchNormBeatsTheSmallCnn:CpuModel.FashionMnistMlpLearns'
# (The deeper-vs-small CNN comparison trains two models on real data for about a
# minute, and the CPU backend's Fashion-MNIST run takes 77 s at -O0 under ASan:
# both run in the web suite below, the CTests fashion_mnist_cnn / fashion_mnist_mlp_cpu
# train the same models natively, and their code paths are the ones the small
# ModelConv and CpuModel tests run here under the sanitizers.)
stage "the GPU kernel and model tests again with compute kernels on llvmpipe (GLTRAIN_TEST_COMPUTE=on; build-asan)"
# Where compute kernels run (a hardware GPU natively), every fragment kernel is
# built as a compute dispatch (Pass): the kernel and model tests check those builds here
# (16 s at -O3 here; the whole suite so takes 3.5 min, and runs so on a GPU by default).
GLTRAIN_TEST_COMPUTE=on ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1" \
LSAN_OPTIONS="suppressions=$GLTRAIN_ROOT/tests/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  two_shards build-asan/compute build-asan/tests/gltrain_tests --gtest_color=no --gtest_brief=1 \
    --gtest_filter='Kernels*:Fetch*:TexelCompute*:StepGuard*:GraphModel*:Model*:ContextLost*:-ModelConv.DeeperCnnWithBatchNormBeatsTheSmallCnn'
stage "fuzz smoke: libFuzzer + ASan/UBSan on the IDX, safetensors, CSV and model JSON parsers (scripts/fuzz.sh)"
bash scripts/fuzz.sh "${GLTRAIN_FUZZ_SECONDS:-15}"

stage "web build (em++)"
gltrain_build_web
stage "web tests (the same suite in headless Chromium)"
two_shards build-web/shard node scripts/browser_run.mjs build-web/tests index.html -- --gtest_color=no
stage "the native interop run's checkpoints in Chromium (interop_fixture check-checkpoint on the same files)"
mkdir -p build-web/tests/interop/files
cp build/tests/interop/files/{mlp,cnn,expected}.safetensors build-web/tests/interop/files/
node scripts/browser_run.mjs build-web/tests/interop interop_fixture.html --file files/mlp.safetensors \
     --file files/cnn.safetensors --file files/expected.safetensors -- check-checkpoint /files
stage "installed package under emcmake"
cmake -DSOURCE_DIR="$GLTRAIN_ROOT" -DBUILD_DIR="$GLTRAIN_ROOT/build-web" -DWORK_DIR="$GLTRAIN_ROOT/build-web/consumer_check" \
      -DWEB=1 -P tests/consumer/check.cmake
stage "JavaScript module and pages (types, npm package, API and page tests in headless Chromium)"
gltrain_build_js
GLTRAIN_ARTIFACTS="$GLTRAIN_ROOT/build-js/artifacts" node --test --test-reporter=spec tests/web/
stage "the threaded browser build's tests (pool, bit-identical threads, no steady-state allocation) in Chromium"
node scripts/browser_run.mjs build-js-mt/tests thread_tests.html --isolated -- --gtest_color=no --gtest_brief=1
echo "   screenshots of the pages: build-js/artifacts/*.png"
# The comparison's gltrain contestants broke once without a sound (an API change
# compare.js missed): run the harness through every workload, quickly (about 30 s).
# It fails when a gltrain contestant errs; its figures are not kept (bench_compare.sh
# makes bench/COMPARE.md).
stage "the side-by-side benchmark's harness, quick, gltrain's contestants only (bench/compare/run.mjs)"
gltrain_bench_npm
node bench/compare/run.mjs --quick --reps 1 --only gltrain,gltrain-auto --out build-js/compare_smoke.md
echo "test.sh: all tests passed in ${SECONDS} s"
