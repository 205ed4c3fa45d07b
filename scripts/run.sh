#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains the Fashion-MNIST
# MLP (784-256-128-10, Adam 1e-3, batch 128) natively on EGL and in headless
# Chromium on WebGL2, printing loss per epoch, samples/s and test accuracy.
#   bash scripts/run.sh              both, 1 epoch each
#   bash scripts/run.sh --epochs N   N epochs
#   bash scripts/run.sh --serve      afterwards, serve the page on 127.0.0.1:8080 for a real browser
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
echo "== building (native and web)"
gltrain_build_native >/dev/null
gltrain_build_web >/dev/null

# The browser reads the IDX files from the page's server: gunzip Debian's copies next to the page.
data=build-web/examples/data
mkdir -p "$data"
files=()
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  [ -f "$data/$f" ] || gunzip -c "/usr/share/datasets/fashion-mnist/$f.gz" > "$data/$f"
  files+=(--file "data/$f")
done

echo "== native (EGL)"
./build/examples/fashion_mnist --model mlp --epochs "$epochs" --batch 128
echo "== headless Chromium (WebGL2)"
node scripts/browser_run.mjs build-web/examples fashion_mnist.html "${files[@]}" -- --model mlp --epochs "$epochs" --batch 128 --data /data
if ((serve)); then
  q="arg=--data&arg=/data&arg=--epochs&arg=$epochs"
  for f in "${files[@]}"; do [ "$f" = --file ] || q="$q&file=$f"; done
  echo "open http://127.0.0.1:8080/fashion_mnist.html?$q"
  node scripts/serve.mjs build-web/examples fashion_mnist.html 8080
fi
