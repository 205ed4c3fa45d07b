# Sourced by the build scripts: Debian's Emscripten needs node-acorn from here.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
export GLTRAIN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GLTRAIN_JOBS="${GLTRAIN_JOBS:-$(nproc)}"

gltrain_build_native() {
  cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build" -j "$GLTRAIN_JOBS"
}
gltrain_build_web() {
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-web" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON -DGLTRAIN_BUILD_JS=OFF >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-web" -j "$GLTRAIN_JOBS"
}
# The JavaScript module (web/dist/gltrain_wasm.{js,wasm}, vendored uPlot) in its own build folder.
gltrain_build_js() {
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-js" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=OFF -DGLTRAIN_BUILD_EXAMPLES=OFF -DGLTRAIN_BUILD_BENCH=OFF -DGLTRAIN_BUILD_JS=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-js" -j "$GLTRAIN_JOBS" --target gltrain_js
}
