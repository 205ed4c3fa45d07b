#!/usr/bin/env bash
# The quick developer loop: builds natively (only what the tests below need) and
# runs a fast subset of the GoogleTest suite on EGL — the reference ops, the GPU
# kernels, the graph, the model and the CPU backend on small shapes — then the
# include-rule check. CI (scripts/test.sh) keeps running everything.
#   bash scripts/check.sh                 build + the subset
#   bash scripts/check.sh --gtest_filter=Kernels*   extra arguments go to gltrain_tests
# Measured on the 2-core AMD EPYC (2026-12-05): about 20 s for the 349 tests once built;
# an incremental build after editing one header adds one to two minutes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$GLTRAIN_ROOT"
# Not in the subset: the trainings on real data (a minute each) and the soak; test.sh runs them.
slow='ModelConv.DeeperCnnWithBatchNormBeatsTheSmallCnn:CpuModel.FashionMnistMlpLearns'
subset='Reference*:Kernels*:*/KernelsMatmul*:GraphOps*:Graph.*:GraphModel*:Model.*:ModelConfig*:ModelConv*:Cpu*'
subset+=':Tensor*:*/Tensor*:LayerDescriptors*:StepGuard*:ShaderRegistry*:Pass.*:FitRagged*'
start=$SECONDS
echo "== check: native build (gltrain_tests)"
GLTRAIN_BENCH=OFF gltrain_build_native gltrain_tests
built=$SECONDS
echo "== check: the fast subset (reference, kernels, graph, model, CPU backend)"
build/tests/gltrain_tests --gtest_color=no --gtest_brief=1 --gtest_filter="$subset:-$slow" "$@"
cmake -DSOURCE_DIR="$GLTRAIN_ROOT" -P tests/production_without_reference.cmake
echo "check: passed in $((SECONDS - start)) s (build $((built - start)) s, tests $((SECONDS - built)) s)"
