#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains the Fashion-MNIST
# MLP (784-256-128-10, Adam 1e-3, batch 128) natively on EGL and in headless
# Chromium on WebGL2, printing loss per epoch, samples/s and test accuracy; then
# trains it again through the JavaScript module on the Fashion-MNIST page (web/,
# in a Web Worker), served on 127.0.0.1 to headless Chromium.
#   bash scripts/run.sh              both, 1 epoch each
#   bash scripts/run.sh --epochs N   N epochs
#   bash scripts/run.sh --serve      afterwards, serve the pages (web/) on 127.0.0.1:8080 for a real browser
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
serve=0
epochs=1
while (($#)); do
  case "$1" in
    --serve) serve=1 ;;
    --epochs) epochs="${2:?--epochs needs a value}"; shift ;;
    *) echo "run.sh: unknown argument '$1' (expected --serve, --epochs N)" >&2; exit 2 ;;
  esac
  shift
done
bash scripts/setup.sh
echo "== building (native, web, JavaScript module)"
gltrain_build_native fashion_mnist >/dev/null
gltrain_build_web fashion_mnist >/dev/null
gltrain_build_js >/dev/null

# The browser reads the IDX files from the page's server: gunzip Debian's copies next to the page.
data=build-web/examples/data
mkdir -p "$data"
files=()
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  [ -f "$data/$f" ] || gunzip -c "/usr/share/datasets/fashion-mnist/$f.gz" > "$data/$f"
  files+=(--file "data/$f")
done

# The engine is gltrain's own choice (backend auto; the "backend:" line says which and why):
# on a software renderer that is the CPU backend when a startup matmul runs faster there.
echo "== native (EGL)"
./build/examples/fashion_mnist --model mlp --epochs "$epochs" --batch 128
echo "== headless Chromium (WebAssembly, WebGL2)"
node scripts/browser_run.mjs build-web/examples fashion_mnist.html "${files[@]}" -- --model mlp --epochs "$epochs" --batch 128 --data /data
echo "== the Fashion-MNIST page in headless Chromium (JavaScript module, Web Worker)"
node scripts/web_train.mjs --epochs "$epochs"
if ((serve)); then
  echo "open http://127.0.0.1:8080/fashion-mnist.html or http://127.0.0.1:8080/playground.html"
  node scripts/serve.mjs web index.html 8080
fi
