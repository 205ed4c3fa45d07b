// LSTM: a long short-term memory layer over a sequence [steps, features]
// (layers/recurrent.hpp), with TF.js's weights: kernel [features, 4 units]
// and recurrent_kernel [units, 4 units] in Keras's gate order (i, f, c, o),
// bias [4 units], and its unitForgetBias.
#pragma once
#include "gltrain/layers/recurrent.hpp"

namespace gltrain {

// An LSTM over a sequence: the last step's output [units], or every step's [steps, units].
using LSTM = Recurrent<RecurrentKind::Lstm>;

}  // namespace gltrain
