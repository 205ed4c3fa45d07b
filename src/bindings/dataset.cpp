// DatasetImpl: datasets from typed arrays and IDX files, their slices and views.
#include "dataset.hpp"

#include <emscripten/bind.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/text_data.hpp"
#include "values.hpp"

namespace gltrain::js {

DatasetImpl* DatasetImpl::fromArrays(val xs, val ys, val features, std::string where) {
    return guard([&]() -> DatasetImpl* {
        if (!features.isNumber()) throw ArgumentError(where + ": features must be a number");
        const double f = features.as<double>();
        if (!(f >= 1 && f == std::floor(f) && f <= 1e9))
            throw ArgumentError(where + ": features must be a positive integer, got " + show(features));
        const size_t cols = size_t(f);
        if (!xs.instanceof (val::global("Float32Array")))
            throw ArgumentError(where + ": x must be a Float32Array, got " + typeName(xs));
        const size_t n = xs["length"].as<size_t>();
        if (n == 0) throw ArgumentError(where + ": x is empty");
        if (n % cols)
            throw ArgumentError(where + ": x has " + std::to_string(n) + " values, expected a multiple of " +
                                std::to_string(cols) + " (the model's input size)");
        const size_t rows = n / cols;
        if (rows > size_t(std::numeric_limits<int>::max())) throw ArgumentError(where + ": x has too many rows");
        auto d = std::make_unique<DatasetImpl>();
        if (!ys.isUndefined() && !ys.isNull()) {
            if (isIntegerArray(ys)) {
                const size_t m = ys["length"].as<size_t>();
                if (m != rows)
                    throw ArgumentError(where + ": y has " + std::to_string(m) + " labels but x has " +
                                        std::to_string(rows) + " rows");
                std::vector<int> labels(m);
                val(emscripten::typed_memory_view(m, labels.data())).call<void>("set", ys);
                d->y = Targets(std::move(labels));
            } else if (ys.instanceof (val::global("Float32Array"))) {
                const size_t m = ys["length"].as<size_t>();
                if (m == 0 || m % rows)
                    throw ArgumentError(where + ": y has " + std::to_string(m) + " values for the " +
                                        std::to_string(rows) + " rows of x (expected a multiple of " +
                                        std::to_string(rows) + "; class labels go in an Int32Array)");
                d->y = Targets(HostMatrix(int(rows), int(m / rows), floatsFrom(ys, where + ": y")));
            } else {
                throw ArgumentError(where +
                                    ": y must be an Int32Array (or another integer typed array) of labels "
                                    "or a Float32Array of target values, got " +
                                    typeName(ys));
            }
        }
        d->x = HostMatrix(int(rows), int(cols), floatsFrom(xs, where + ": x"));
        return d.release();
    });
}

DatasetImpl* DatasetImpl::fromText(val bytes, int context, double heldOut, double seed, int windows, bool validation) {
    return guard([&]() -> DatasetImpl* {
        if (!(seed >= 0 && seed <= 4294967295.0 && seed == std::floor(seed)))
            throw ArgumentError("Dataset.fromText: seed must be an integer in [0, 4294967295], got " +
                                std::to_string(seed));
        TextOptions o;
        o.context = context;
        o.heldOut = heldOut;
        o.seed = uint32_t(seed);
        const TextData text(bytesFrom(bytes, "Dataset.fromText: bytes"), o);
        TextWindows w = validation ? text.validationWindows() : text.trainWindows(0, windows);
        auto d = std::make_unique<DatasetImpl>();
        d->x = std::move(w.x);
        d->y = Targets(std::move(w.y));
        return d.release();
    });
}

DatasetImpl* DatasetImpl::fromIdx(val images, val labels, val numClasses) {
    return guard([&]() -> DatasetImpl* {
        int classes = 10;
        if (!numClasses.isUndefined()) {
            if (!numClasses.isNumber() || numClasses.as<double>() < 1 ||
                numClasses.as<double>() != std::floor(numClasses.as<double>()))
                throw ArgumentError("loadIdx: numClasses must be a positive integer, got " + show(numClasses));
            classes = numClasses.as<int>();
        }
        std::vector<uint8_t> ib = bytesFrom(images, "loadIdx: images");
        IdxArray ia = parseIdx(ib, "images");
        std::vector<uint8_t>().swap(ib);
        IdxArray la = parseIdx(bytesFrom(labels, "loadIdx: labels"), "labels");
        Dataset ds = makeDataset(ia, la, classes);
        auto d = std::make_unique<DatasetImpl>();
        d->x = std::move(ds.images);
        d->y = Targets(std::move(ds.labels));
        d->imageRows = ds.imageRows;
        d->imageCols = ds.imageCols;
        return d.release();
    });
}

void DatasetImpl::checkRange(const std::string& where, val start, val count, int& s, int& c) const {
    val o = val::object();
    o.set("start", start);
    o.set("count", count);
    Options opt(o, where, {"start", "count"});
    s = int(opt.integer("start", 0, 0, x.rows));
    c = int(opt.integer("count", x.rows - s, 0, x.rows));
    if (s + c > x.rows)
        throw ArgumentError(where + ": rows [" + std::to_string(s) + ", " + std::to_string(s + c) +
                            ") are outside the dataset's " + std::to_string(x.rows) + " rows");
}

DatasetImpl* DatasetImpl::slice(val start, val count) const {
    return guard([&]() -> DatasetImpl* {
        int s, c;
        checkRange("Dataset.slice", start, count, s, c);
        if (c == 0) throw ArgumentError("Dataset.slice: the slice is empty");
        auto d = std::make_unique<DatasetImpl>();
        const size_t f = size_t(x.cols);
        d->x = HostMatrix(
            c, x.cols,
            std::vector<float>(x.data.begin() + std::ptrdiff_t(s * f), x.data.begin() + std::ptrdiff_t((s + c) * f)));
        if (y.isLabels()) d->y = Targets(std::vector<int>(y.labels.begin() + s, y.labels.begin() + s + c));
        else if (y.rows()) {
            const size_t k = size_t(y.values.cols);
            d->y = Targets(HostMatrix(c, y.values.cols,
                                      std::vector<float>(y.values.data.begin() + std::ptrdiff_t(s * k),
                                                         y.values.data.begin() + std::ptrdiff_t((s + c) * k))));
        }
        d->imageRows = imageRows;
        d->imageCols = imageCols;
        return d.release();
    });
}

val DatasetImpl::rowsCopy(val start, val count) const {
    return guard([&] {
        int s, c;
        checkRange("Dataset.x", start, count, s, c);
        return float32Copy(x.data.data() + size_t(s) * size_t(x.cols), size_t(c) * size_t(x.cols));
    });
}

val DatasetImpl::view() const { return val(emscripten::typed_memory_view(x.data.size(), x.data.data())); }
val DatasetImpl::targets() const {
    return guard([&] {
        if (y.isLabels())
            return val::global("Int32Array").new_(emscripten::typed_memory_view(y.labels.size(), y.labels.data()));
        if (y.rows()) return float32Copy(y.values.data.data(), y.values.data.size());
        return val::null();
    });
}

}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_dataset) {
    using namespace emscripten;
    using gltrain::js::DatasetImpl;
    class_<DatasetImpl>("DatasetImpl")
        .class_function("fromArrays", &DatasetImpl::fromArrays, allow_raw_pointers())
        .class_function("fromIdx", &DatasetImpl::fromIdx, allow_raw_pointers())
        .class_function("fromText", &DatasetImpl::fromText, allow_raw_pointers())
        .function("count", &DatasetImpl::count)
        .function("features", &DatasetImpl::features)
        .function("imageRows", &DatasetImpl::getImageRows)
        .function("imageCols", &DatasetImpl::getImageCols)
        .function("hasLabels", &DatasetImpl::hasLabels)
        .function("targetColumns", &DatasetImpl::targetColumns)
        .function("slice", &DatasetImpl::slice, allow_raw_pointers())
        .function("rowsCopy", &DatasetImpl::rowsCopy)
        .function("view", &DatasetImpl::view)
        .function("targets", &DatasetImpl::targets);
}
