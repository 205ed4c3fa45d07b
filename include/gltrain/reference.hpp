// The CPU reference implementation of every gltrain op, in namespace
// gltrain::ref: the oracle the GPU tests compare against, and a CPU fallback.
// Every op is a template on the scalar (float to mirror the GPU, double for
// gradient checks) and throws ArgumentError naming both shapes on a mismatch.
#pragma once
#include "gltrain/activation.hpp"
#include "gltrain/reference/activations.hpp"
#include "gltrain/reference/batchnorm.hpp"
#include "gltrain/reference/bias.hpp"
#include "gltrain/reference/conv.hpp"
#include "gltrain/reference/check.hpp"
#include "gltrain/reference/dense.hpp"
#include "gltrain/reference/elementwise.hpp"
#include "gltrain/reference/loss.hpp"
#include "gltrain/reference/matmul.hpp"
#include "gltrain/reference/metrics.hpp"
#include "gltrain/reference/norm.hpp"
#include "gltrain/reference/optimizer.hpp"
#include "gltrain/reference/pooling.hpp"
#include "gltrain/reference/random.hpp"
#include "gltrain/reference/reduce.hpp"
#include "gltrain/reference/softmax.hpp"
