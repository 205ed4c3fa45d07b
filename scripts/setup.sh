#!/usr/bin/env bash
# Installs what gltrain's build, tests and examples need, if missing; safe to
# run twice. Debian 12: apt packages, and the pinned npm tooling (scripts/).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

packages=(
  cmake g++ make pkg-config                 # native build
  clang libclang-rt-14-dev                  # scripts/fuzz.sh: libFuzzer and sanitizer runtimes (only a Recommends of clang)
  libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri   # headless OpenGL ES 3 through EGL (Mesa llvmpipe)
  libglm-dev nlohmann-json3-dev zlib1g-dev  # header libraries, gzip for IDX files
  googletest libgtest-dev                   # GoogleTest: sources for em++, library for native
  emscripten nodejs                         # the WebAssembly / WebGL2 build
  chromium                                  # the browser the web tests run in
  dataset-fashion-mnist                     # real Fashion-MNIST IDX files
  fortunes                                  # issue 39's text corpus (scripts/fortunes_corpus.sh)
  python3 python3-torch python3-numpy       # tests/interop/torch_check.py: checkpoints in PyTorch (1.13, CPU)
  doxygen clang-format                      # scripts/api_docs.sh (the C++ API reference); test.sh's formatting check (14)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm ships inside some nodejs builds (NodeSource) and as its own package in Debian's.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# playwright-core, pinned in scripts/package-lock.json; it drives /usr/bin/chromium (never a downloaded browser).
if [ ! -d "$here/node_modules/playwright-core" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci (scripts/)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The JavaScript package's tools, pinned in web/package-lock.json: TypeScript (tsc checks
# web/gltrain.d.ts), uPlot (vendored into the pages by the build) and TypeDoc (scripts/api_docs.sh).
web="$here/../web"
if [ ! -d "$web/node_modules/typescript" ] || [ ! -d "$web/node_modules/uplot" ] || [ ! -d "$web/node_modules/typedoc" ] || \
   [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci (web/)"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The interop tests' TensorFlow.js, pinned in tests/interop/package-lock.json (@tensorflow/tfjs 4.22.0).
interop="$here/../tests/interop"
if [ ! -d "$interop/node_modules/@tensorflow/tfjs" ] || \
   [ "$interop/package-lock.json" -nt "$interop/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci (tests/interop/)"
  (cd "$interop" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The pages read Fashion-MNIST from web/data: Debian's IDX files, uncompressed.
mkdir -p "$web/data"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  [ -s "$web/data/$f" ] || { gunzip -c "/usr/share/datasets/fashion-mnist/$f.gz" > "$web/data/$f.tmp" && mv "$web/data/$f.tmp" "$web/data/$f"; }
done
# The text page reads the fortunes corpus and the reference model file from web/data
# (the model copied on every run: it is a source file, and may have changed).
[ -s "$web/data/fortunes.txt" ] || bash "$here/fortunes_corpus.sh" "$web/data/fortunes.txt" >/dev/null
cp "$here/../examples/models/char-transformer.json" "$web/data/char-transformer.json"
