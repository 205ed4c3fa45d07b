// gltrain: train neural networks on the GPU through OpenGL ES 3 / WebGL2.
// The umbrella header; each included header holds one idea.
#pragma once
#include "gltrain/capabilities.hpp"
#include "gltrain/context.hpp"
#include "gltrain/error.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/layout.hpp"
#include "gltrain/pass.hpp"
#include "gltrain/readback.hpp"
#include "gltrain/shader_registry.hpp"
#include "gltrain/tensor.hpp"
#include "gltrain/texture_pool.hpp"
