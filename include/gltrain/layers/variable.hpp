// What a layer declares about each of its variables, from its input shape:
// the name it is saved under, its shape, whether training updates it, and
// how it starts. Sequential (initialVariables), the TF.js import and export,
// the bindings' and the CLI's parameter counts all read these declarations.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "gltrain/graph/shape.hpp"
#include "gltrain/initializer.hpp"

namespace gltrain {

// One variable a layer declares: its name, saved shape, role, initializer and storage.
struct LayerVariable {
    const char* name;            // "kernel": saved as "<layer>/kernel"
    std::vector<int64_t> shape;  // Keras's shape (Dense kernel [in, out], Conv2D kernel HWIO)
    bool trainable;              // a parameter (with optimizer slots), or a statistic (moving averages)
    // How its initial value is drawn.
    Initializer init;
    int rows, cols;     // the matrix it is stored as
    int fanIn, fanOut;  // what the initializer scales by
    // The graph holds it as a vector [cols] (one row) though saved with more
    // axes: attention's biases [heads, size], added as a Dense's is.
    bool vector = false;
    // Columns [first, second) that start at 1 whatever the initializer draws (an LSTM's unitForgetBias).
    std::pair<int, int> ones{0, 0};

    // Its shape in the model's graph: the vector [cols] where saved as one (or
    // `vector`), else the matrix rows x cols (a kernel [F, heads, size] as F x heads*size).
    graph::Shape stored() const { return shape.size() == 1 || vector ? graph::Shape{cols} : graph::Shape{rows, cols}; }

    // The initial value. The k-th variable of layer i draws from random
    // stream 2i + k (checkpoints of the same seed depend on it) for k < 2,
    // from a stream of its own past 2^31 after (ModelVariables::stream).
    HostMatrix initial(uint32_t seed, uint32_t stream) const {
        HostMatrix m = init.make(rows, cols, fanIn, fanOut, seed, stream);
        for (int r = 0; r < rows; ++r)
            for (int c = ones.first; c < ones.second; ++c) m(r, c) = 1.0f;
        return m;
    }

    // A product of sizes as an int, saturated: the shapes are checked (compile,
    // the TF.js import) before any value is made, but declared before that.
    static int capped(int64_t v) { return v > INT32_MAX ? INT32_MAX : int(v); }

    // The number of values (the product of the shape).
    int64_t size() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
};

}  // namespace gltrain
