# Sourced by the build scripts: Debian's Emscripten needs node-acorn from here.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
export GLTRAIN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GLTRAIN_JOBS="${GLTRAIN_JOBS:-$(nproc)}"

# gltrain_build_native / gltrain_build_web [TARGET...]: everything, or only the
# targets named. GLTRAIN_BENCH=OFF leaves the benchmarks out of the configuration;
# GLTRAIN_SUITE_IN_CTEST=OFF leaves the GoogleTest suite out of the native build's
# default targets and out of CTest (CI runs it under the sanitizers instead).
gltrain_build_native() {
  cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON \
        -DGLTRAIN_BUILD_BENCH="${GLTRAIN_BENCH:-ON}" -DGLTRAIN_SUITE_IN_CTEST="${GLTRAIN_SUITE_IN_CTEST:-ON}" >/dev/null
  cmake --build "$GLTRAIN_ROOT/build" -j "$GLTRAIN_JOBS" ${1:+--target "$@"}
}
gltrain_build_web() {
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-web" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON \
        -DGLTRAIN_BUILD_BENCH="${GLTRAIN_BENCH:-ON}" -DGLTRAIN_BUILD_JS=OFF >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-web" -j "$GLTRAIN_JOBS" ${1:+--target "$@"}
}
# The native test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (only the test binary: no examples, benchmarks or JS module), compiled by
# clang at -O0: measured on tests/tensor_test.cpp, 7 s of CPU against 14 s
# at -O1 and 20 s for g++ -O1, and the suite still runs in about 3 minutes
# (the GPU work is Mesa's, uninstrumented). -g1: line numbers in reports.
# -fno-sanitize-recover: any undefined behaviour aborts the run.
gltrain_build_asan() {
  local san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-asan" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
        -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=OFF -DGLTRAIN_BUILD_BENCH=OFF -DGLTRAIN_BUILD_JS=OFF >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-asan" -j "$GLTRAIN_JOBS" --target gltrain_tests
}
# The JavaScript module (web/dist/gltrain_wasm.{js,wasm}, vendored uPlot) in its own build folder,
# and its threaded variant (web/dist/gltrain_wasm_mt.{js,wasm,worker.js}: Emscripten pthreads) in
# another, build-js-mt, with the threaded browser tests (gltrain_thread_tests) on the same objects:
# objects compiled for shared memory cannot be linked into a module without it, nor the reverse.
gltrain_build_js() {
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-js" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=OFF -DGLTRAIN_BUILD_EXAMPLES=OFF -DGLTRAIN_BUILD_BENCH=OFF -DGLTRAIN_BUILD_JS=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-js" -j "$GLTRAIN_JOBS" --target gltrain_js || return
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-js-mt" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=OFF -DGLTRAIN_BUILD_BENCH=OFF -DGLTRAIN_BUILD_JS=ON -DGLTRAIN_WEB_THREADS=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-js-mt" -j "$GLTRAIN_JOBS" --target gltrain_js gltrain_thread_tests
}
# TensorFlow.js for the side-by-side benchmark (bench/compare), pinned in
# bench/package-lock.json: installed where missing or older than the lock.
gltrain_bench_npm() {
  if [ ! -d "$GLTRAIN_ROOT/bench/node_modules/@tensorflow/tfjs" ] || \
     [ "$GLTRAIN_ROOT/bench/package-lock.json" -nt "$GLTRAIN_ROOT/bench/node_modules/.package-lock.json" ]; then
    echo "gltrain_bench_npm: npm ci (bench/)"
    (cd "$GLTRAIN_ROOT/bench" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
