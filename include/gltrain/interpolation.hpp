// How UpSampling2D fills the pixels between the input's: Keras's
// `interpolation`, 'nearest' (each pixel repeated) or 'bilinear' (TF.js's
// resizeBilinear without aligned corners or half-pixel centres).
#pragma once
#include <array>

namespace gltrain {

// Nearest: each pixel repeated; Bilinear: interpolated between the four nearest input pixels.
enum class Interpolation { Nearest, Bilinear };
// Every Interpolation, in the order the d.ts union lists them.
inline constexpr std::array<Interpolation, 2> kAllInterpolations = {Interpolation::Nearest, Interpolation::Bilinear};
// Its name in model files, JavaScript and TF.js.
inline const char* interpolationName(Interpolation i) { return i == Interpolation::Bilinear ? "bilinear" : "nearest"; }
// Whether `i` is one of the enumerators (an int cast to Interpolation may not be).
inline bool isInterpolation(Interpolation i) { return i == Interpolation::Nearest || i == Interpolation::Bilinear; }

}  // namespace gltrain
