// The layers of a Sequential model: plain data that the model turns into
// tensors and passes when it is compiled (shapes are inferred and checked
// there, naming the layer). Images flow between layers as NHWC rows
// (gltrain/window.hpp); a Dense layer needs a flat input, so a Flatten (which
// costs nothing: the rows are already flat) goes between them. Each layer is
// declared in its own header under gltrain/layers/.
#pragma once
#include "gltrain/layers/all.hpp"
