# Sourced by the build scripts: Debian's Emscripten needs node-acorn from here.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
export GLTRAIN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GLTRAIN_JOBS="${GLTRAIN_JOBS:-$(nproc)}"

gltrain_build_native() {
  cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build" -j "$GLTRAIN_JOBS"
}
gltrain_build_web() {
  emcmake cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-web" -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=ON >/dev/null
  cmake --build "$GLTRAIN_ROOT/build-web" -j "$GLTRAIN_JOBS"
}
