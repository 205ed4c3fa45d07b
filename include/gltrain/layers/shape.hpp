// What a layer's `shape` (tfjs-layers' computeOutputShape) sees at compile:
// its input, where that came from, and where the layer stands in the model;
// it returns its output and, for the windowed layers, the window. Errors name
// the layer and what it received, as compile's always did.
#pragma once
#include <string>
#include <vector>

#include "gltrain/error.hpp"
#include "gltrain/window.hpp"

namespace gltrain {

// A layer's output shape as compile infers it, and its window (Conv2D, pooling).
struct LayerShape {
    // The output shape.
    Shape3 out;
    Window window;  // Conv2D and pooling
};

// What a layer's shape function is given: its input and where it came from, for messages.
struct ShapeContext {
    // The input shape (a merge layer's first input).
    Shape3 in;
    std::string name;                // the layer's
    std::string from;                // "the model input" or the name of the layer `in` comes from
    std::vector<Shape3> ins;         // every input, in order (one for most layers; a merge layer's several)
    std::vector<std::string> froms;  // where each of `ins` comes from
    bool flatModelInput = false;     // the first layer reads rows of a flat model input
    bool last = false;               // the model's last layer
    bool softmaxLoss = false;        // compiled with a loss a final Softmax may feed (LossSpec::allowsFinalSoftmax)

    // "compile: layer <name>", the start of its errors.
    std::string who() const { return "compile: layer " + name; }
    // Throws ArgumentError naming the layer.
    [[noreturn]] void fail(const std::string& what) const { throw ArgumentError(who() + ": " + what); }
    // "receives [batch, ...] from <where>", for errors.
    std::string received() const { return "receives " + shown(in) + " from " + from; }
    // "[batch, 7]" or "[batch, 28, 28, 1]".
    static std::string shown(const Shape3& s) {
        return s.height == 1 && s.width == 1 ? "[batch, " + std::to_string(s.channels) + "]"
                                             : "[batch, " + s.str().substr(1);
    }
    // "[batch, 8] from dense_1 and [batch, 9] from dense_2", for a merge layer's errors.
    std::string receivedAll() const {
        std::string r = "receives ";
        for (size_t i = 0; i < ins.size(); ++i)
            r += (i == 0 ? "" : i + 1 == ins.size() ? " and " : ", ") + shown(ins[i]) + " from " + froms[i];
        return r;
    }
    // Fails unless the input is an image.
    void needImage() const {
        if (flatModelInput)
            fail("needs image input [height, width, channels] but " + received() +
                 " (build the model with Sequential(ctx, Shape3{h, w, c}))");
    }
    // A pooling window over the input (stride 0: the pool size), keeping the channels.
    LayerShape pooled(int size, int stride, Padding padding) const {
        needImage();
        const Window w =
            Window::make(who(), in, size, size, stride ? stride : size, stride ? stride : size, padding, in.channels);
        return {w.out, w};
    }
};

}  // namespace gltrain
