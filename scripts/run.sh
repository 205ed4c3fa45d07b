#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the example
# natively (EGL) and in headless Chromium (WebGL2), printing its results.
#   bash scripts/run.sh            run natively and headless in Chromium
#   bash scripts/run.sh --serve    also serve the page on 127.0.0.1 for a real browser
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
serve=0
for a in "$@"; do
  case "$a" in
    --serve) serve=1 ;;
    *) echo "run.sh: unknown argument '$a' (expected --serve)" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
gltrain_build_native >/dev/null
gltrain_build_web >/dev/null

echo "== native (EGL)"
./build/examples/smoke
echo "== headless Chromium (WebGL2)"
node scripts/browser_run.mjs build-web/examples smoke.html
if ((serve)); then
  node scripts/serve.mjs build-web/examples smoke.html
fi
