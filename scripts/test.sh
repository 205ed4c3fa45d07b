#!/usr/bin/env bash
# Runs every gltrain test: installs what is missing, builds natively and with
# Emscripten, runs the GoogleTest suite natively (CTest, EGL) and the same
# suite inside headless Chromium (WebGL2), and checks that an installed
# gltrain is usable from another CMake project in both flavours.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
bash scripts/setup.sh

echo "== native build"
gltrain_build_native
echo "== native tests (CTest on EGL)"
(cd build && ctest --output-on-failure)

echo "== web build (em++)"
gltrain_build_web
echo "== web tests (the same suite in headless Chromium)"
node scripts/browser_run.mjs build-web/tests index.html -- --gtest_color=no
echo "== installed package under emcmake"
cmake -DSOURCE_DIR="$GLTRAIN_ROOT" -DBUILD_DIR="$GLTRAIN_ROOT/build-web" -DWORK_DIR="$GLTRAIN_ROOT/build-web/consumer_check" \
      -DWEB=1 -P tests/consumer/check.cmake
echo "test.sh: all tests passed"
