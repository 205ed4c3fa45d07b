// The JavaScript Dataset: examples (rows of x) and their targets in the wasm heap.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "gltrain/host_matrix.hpp"
#include "gltrain/training_types.hpp"

namespace gltrain::js {

class DatasetImpl {
public:
    HostMatrix x;
    Targets y;
    int imageRows = 0, imageCols = 0;

    // x: Float32Array of rows * features values; y: an integer typed array of
    // labels (one per row) or a Float32Array of target values (rows * k), or undefined.
    static DatasetImpl* fromArrays(emscripten::val xs, emscripten::val ys, emscripten::val features, std::string where);
    // Validated IDX files (images: unsigned bytes, N x rows x cols; labels: N
    // integers < numClasses); images scaled to [0, 1].
    static DatasetImpl* fromIdx(emscripten::val images, emscripten::val labels, emscripten::val numClasses);
    // A text's bytes as tokens (gltrain/text_data.hpp): `validation` false, `windows` random training
    // windows (0: one epoch's) of `context` bytes; true, the held-out tail's windows. y: the next bytes.
    static DatasetImpl* fromText(emscripten::val bytes, int context, double heldOut, double seed, int windows,
                                 bool validation);

    int count() const { return x.rows; }
    int features() const { return x.cols; }
    int getImageRows() const { return imageRows; }
    int getImageCols() const { return imageCols; }
    bool hasLabels() const { return y.isLabels(); }
    int targetColumns() const { return y.isLabels() ? 1 : y.values.cols; }

    void checkRange(const std::string& where, emscripten::val start, emscripten::val count, int& s, int& c) const;
    DatasetImpl* slice(emscripten::val start, emscripten::val count) const;
    emscripten::val rowsCopy(emscripten::val start, emscripten::val count) const;
    // A Float32Array over the wasm heap (no copy); valid until the next gltrain call.
    emscripten::val view() const;
    emscripten::val targets() const;
};

}  // namespace gltrain::js
