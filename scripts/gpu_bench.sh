#!/usr/bin/env bash
# The GPU benchmark: the native benchmarks built on this (Debian) machine, run on
# a machine with an NVIDIA GPU through EGL, printed as one markdown report —
# matmul GFLOP/s per kernel variant and layout up to N = 4096 (bench_kernels:
# compute tiles; one-texel packed, 4x4 blocks into PackedRows4, 8x4 blocks into
# PackedRows8; transform feedback up to N = 1024),
# the convolution layers and CNN steps (bench_conv), and the side-by-side
# workloads W1-W4 (bench_compare_native) with the step profiles, the big MLP's
# step times one by one (bench_steps: mean against median, the slowest steps)
# beside PyTorch's eager and CUDA-graph steps (bench/torch_mlp.py, where the
# machine has PyTorch); first the native test suite (gltrain_tests) on that GPU,
# its summary in the report.
#
# Two steps:
#   bash scripts/gpu_bench.sh --prepare    here: builds build-bench, copies the three
#                                          benchmarks, the test suite and Fashion-MNIST
#                                          (.gz) into .gpu/
#   bash scripts/gpu_bench.sh              there, from the repository root: runs them
# With the device tool (the lead's H200): --prepare here, then `run` with carry
# [".gl", ".gpu"] (.gl: the GL loader .debs its README names) and the command
#   bash scripts/gpu_bench.sh > $OUT/gpu.md; cat $OUT/gpu.md
# The script unpacks .gl/*.deb itself when it finds them. --quick: fewer
# repetitions and steps (a few minutes). --no-tests: the report without the
# test suite (which alone may take most of a 10-minute device call).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
quick=()
prepare=0
tests=1
for a in "$@"; do
  case "$a" in
    --prepare) prepare=1 ;;
    --quick) quick=(--quick) ;;
    --no-tests) tests=0 ;;
    *) echo "gpu_bench.sh: unknown argument '$a' (valid: --prepare, --quick, --no-tests)" >&2; exit 2 ;;
  esac
done

if ((prepare)); then
  source scripts/env.sh
  bash scripts/setup.sh
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DGLTRAIN_BUILD_BENCH=ON >/dev/null
  cmake --build build-bench --target bench_kernels bench_conv bench_compare_native bench_steps gltrain_tests -j "$GLTRAIN_JOBS" >/dev/null
  mkdir -p .gpu/data
  grep -qxF '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
  cp build-bench/bench/bench_kernels build-bench/bench/bench_conv build-bench/bench/bench_compare_native build-bench/bench/bench_steps .gpu/
  cp build-bench/tests/gltrain_tests .gpu/
  cp /usr/share/datasets/fashion-mnist/*-ubyte.gz .gpu/data/
  echo "gpu_bench: .gpu/ holds the binaries ($(git rev-parse --short HEAD)) and the data ($(du -sh .gpu | cut -f1)); carry it with .gl"
  exit 0
fi

[ -x .gpu/bench_kernels ] || { echo "gpu_bench.sh: .gpu/ is missing: run 'bash scripts/gpu_bench.sh --prepare' on the build machine and carry .gpu" >&2; exit 1; }
# The GL loaders (libEGL, libGLESv2 through glvnd) where the machine has none.
if compgen -G ".gl/*.deb" >/dev/null; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$vendor" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$vendor"

# The tests that read Fashion-MNIST look for it where Debian's package puts it.
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { mkdir -p "$data" && cp .gpu/data/*-ubyte.gz "$data/"; }

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo "unknown GPU")
sizes=256,512,1024,2048,4096
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
.gpu/bench_compare_native "${quick[@]}" --data .gpu/data --sizes "$sizes" > "$tmp/compare.json"
renderer=$(sed -n 's/^ *"renderer": "\(.*\)",*$/\1/p' "$tmp/compare.json")

echo "# gltrain on a GPU"
echo
echo "Written by \`bash scripts/gpu_bench.sh${quick:+ --quick}\` on $(date -u '+%Y-%m-%d %H:%M UTC'); GPU: $gpu; renderer: $renderer; CPU: $(nproc) cores."
echo
if ((tests)); then
  echo "## The test suite on this GPU (gltrain_tests)"
  echo
  echo '```'
  (timeout 600 .gpu/gltrain_tests --gtest_brief=1 2>&1 || echo "gltrain_tests: exit status $?") |
    grep -E '^\[ +(FAILED|PASSED|SKIPPED) +\]|tests from .* ran|exit status' || true
  echo '```'
  echo
fi
echo "## Side-by-side workloads (bench_compare_native)"
echo
echo "| workload | value |"
echo "|---|---:|"
# The figures of the JSON object, one row each (keys as in bench/compare/run.mjs).
sed -n 's/^ *"\(w[0-9][a-z0-9_]*\)": \([-0-9.e+]*\),*$/| \1 | \2 |/p' "$tmp/compare.json"
echo
echo "## Matmul and the other kernels (bench_kernels)"
echo
.gpu/bench_kernels ${quick[@]+"${quick[@]}"} --sizes "$sizes"
echo
echo "## Convolution (bench_conv)"
echo
.gpu/bench_conv ${quick[@]+"${quick[@]}"}
echo
echo "## Where a training step's time goes (bench_compare_native --profile)"
.gpu/bench_compare_native --profile
echo
echo "## Step times one by one (bench_steps) and PyTorch (bench/torch_mlp.py)"
echo
echo "MLP 784-2048-2048-10, Adam, batch 512, 1000 steps, loss read every 10 steps, snapshot every 100; then each"
echo "pass of one step (GPU timer queries):"
echo
echo '```'
.gpu/bench_steps --backend gpu --steps 1000 --profile
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 bench/torch_mlp.py --steps 1000
fi
echo '```'
