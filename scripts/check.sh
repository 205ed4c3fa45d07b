#!/usr/bin/env bash
# The quick developer loop: builds the test suite natively and runs a fast subset of
# it on EGL — the reference ops, the GPU kernels, the graph, the model and the CPU
# backend, on small shapes — then the include-rule check. CI (scripts/test.sh) keeps
# running everything.
#   bash scripts/check.sh                            build + the subset
#   bash scripts/check.sh --gtest_filter='Kernels*'  extra arguments go to gltrain_tests (this runs Kernels* instead)
#
# Its build is its own (build-check/): clang at -O0 without debug info, the suite only.
# CI's g++ -O1 build of the suite took 371 s of this 2-core machine after a header edit
# (every test file includes the library; the machine shared); clang -O0 took 82 s.
# The subset leaves out the trainings on real data, the soak and the largest matmul
# shapes (slow at -O0: their reference products run on the host).
# Measured on the 2-core AMD EPYC, shared with other work (2026-12-05): from scratch
# 2 min 40 s; after editing a header included everywhere about 2 min 10 s.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
start=$SECONDS
echo "== check: native build of the suite (build-check: clang -O0)"
cmake -S "$GLTRAIN_ROOT" -B "$GLTRAIN_ROOT/build-check" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g0" -DGLTRAIN_BUILD_TESTS=ON -DGLTRAIN_BUILD_EXAMPLES=OFF -DGLTRAIN_BUILD_BENCH=OFF \
      -DGLTRAIN_BUILD_JS=OFF -DGLTRAIN_BUILD_TOOLS=OFF >/dev/null
cmake --build "$GLTRAIN_ROOT/build-check" -j "$GLTRAIN_JOBS" --target gltrain_tests
built=$SECONDS
subset='Reference*:Kernels*:*/KernelsMatmul*:GraphOps*:Graph.*:GraphModel*:Model.*:ModelConfig*:ModelConv*:Cpu*'
subset+=':Tensor*:*/Tensor*:LayerDescriptors*:StepGuard*:ShaderRegistry*:Pass.*:FitRagged*'
slow='ModelConv.DeeperCnnWithBatchNormBeatsTheSmallCnn:CpuModel.FashionMnistMlpLearns'
slow+=':Forms/KernelsMatmul.RegisterBlockedMatchesReference/*:Forms/KernelsMatmul.PackedMatchesReference/*'
echo "== check: the fast subset (reference, kernels, graph, model, CPU backend)"
build-check/tests/gltrain_tests --gtest_color=no --gtest_brief=1 --gtest_filter="$subset:-$slow" "$@"
cmake -DSOURCE_DIR="$GLTRAIN_ROOT" -P tests/production_without_reference.cmake
echo "check: passed in $((SECONDS - start)) s (build $((built - start)) s, tests $((SECONDS - built)) s)"
