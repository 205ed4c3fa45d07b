// GRU: a gated recurrent unit layer over a sequence [steps, features]
// (layers/recurrent.hpp), TF.js's: kernel [features, 3 units] and
// recurrent_kernel [units, 3 units] in the gate order (z, r, h), bias
// [3 units], and the reset gate applied to h(t-1) before the candidate's
// recurrent product (Keras's reset_after = false, the only form TF.js has):
// z = σ(x Wz + h Rz + bz), r = σ(x Wr + h Rr + br),
// c = act(x Wh + (r ⊙ h) Rh + bh), h' = z h + (1 - z) c.
#pragma once
#include "gltrain/layers/recurrent.hpp"

namespace gltrain {

// A GRU over a sequence: the last step's output [units], or every step's [steps, units].
using GRU = Recurrent<RecurrentKind::Gru>;

}  // namespace gltrain
