// Bad input, C++ side (issue 8): a table of every public C++ entry given
// wrong shapes, mismatched lengths, zero or negative sizes, NaN/Inf data,
// out-of-range hyper-parameters, unknown enumerators and tensors from another
// context. Each row must throw a gltrain::Error of the stated kind whose
// message contains the stated words (what was wrong, and where), and
// afterwards nothing has changed: the shared trained model predicts
// bit-identical values, its checkpoint (weights, optimizer slots, step) is
// byte-identical, it is not left fitting, no texture is still on loan, and a
// sentinel tensor keeps its contents.
//
// Accepted on purpose, so not in the table: NaN/Inf in Tensor::upload and in
// the op inputs (kernels propagate them, the kernel tests check how), and a
// uniformFill with hi < lo (the formula is well defined).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "gltrain/idx.hpp"
#include "gltrain/ops/elementwise.hpp"
#include "gltrain/ops/loss.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/ops/optimizer.hpp"
#include "gltrain/ops/random.hpp"
#include "gltrain/ops/reduce.hpp"
#include "gltrain/readback.hpp"
#include "gltrain/safetensors.hpp"
#include "gltrain/sequential.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace bad_input_test {

using namespace gltrain;
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// ---- the shared state every row is checked against

struct World {
    std::unique_ptr<Sequential> model;  // 6 -> hidden (8, ReLU) -> dropout -> out (3); Adam; 6 steps trained
    HostMatrix x;                       // 24 x 6
    std::vector<int> y;                 // 24 labels in 0..2
    HostMatrix probe;                   // 5 x 6, what predict() is compared on
    Tensor a, b;                        // 2 x 3 operands
    Tensor t32;                         // 3 x 2
    Tensor out;                         // 2 x 3
    Tensor one;                         // 1 x 1
    Tensor sentinel;                    // 2 x 3 with known contents; never written by a row
    HostMatrix sentinelValue;
};

std::unique_ptr<Sequential> makeModel(Context& ctx, const HostMatrix& x, const std::vector<int>& y) {
    auto m = std::make_unique<Sequential>(ctx, 6);
    Dense hidden{8, Activation::ReLU};
    hidden.name = "hidden";
    Dense out{3};
    out.name = "out";
    m->add(hidden).add(Dropout{0.25f}).add(out);
    CompileOptions c;
    c.seed = 5;
    m->compile(c);
    FitOptions f;
    f.epochs = 2;
    f.batchSize = 8;
    m->fit(x, y, f);
    return m;
}

World& world() {
    static World* w = [] {
        Context& ctx = test::context();
        auto* w = new World;
        w->x = test::randomMatrix(24, 6, 101, 0.0f, 1.0f);
        for (int i = 0; i < 24; ++i) w->y.push_back(i % 3);
        w->probe = test::randomMatrix(5, 6, 102);
        w->model = makeModel(ctx, w->x, w->y);
        w->model->predict(w->probe);  // records the predict plan now, so rows are compared against a settled pool
        w->a = Tensor(ctx, test::randomMatrix(2, 3, 103));
        w->b = Tensor(ctx, test::randomMatrix(2, 3, 104));
        w->t32 = Tensor(ctx, test::randomMatrix(3, 2, 105));
        w->out = Tensor(ctx, 2, 3);
        w->one = Tensor(ctx, 1, 1);
        w->sentinelValue = test::randomMatrix(2, 3, 106);
        w->sentinel = Tensor(ctx, w->sentinelValue);
        return w;
    }();
    return *w;
}

// Everything a failed call must leave as it was.
struct Fingerprint {
    std::vector<float> predictions;
    std::vector<uint8_t> checkpoint;
    long step = 0;
    bool fitting = false;
    std::vector<float> sentinel;
    size_t liveTextures = 0, liveBytes = 0;
};

Fingerprint fingerprint(World& w) {
    Context& ctx = test::context();  // a row may have made another context current
    Fingerprint f;
    f.predictions = w.model->predict(w.probe).data;
    f.checkpoint = w.model->saveCheckpoint();
    f.step = w.model->step();
    f.fitting = w.model->fitting();
    f.sentinel = w.sentinel.download().data;
    f.liveTextures = ctx.pool().stats().live;
    f.liveBytes = ctx.pool().stats().liveBytes;
    return f;
}

// A fresh compiled and trained copy of the shared model, for rows that must
// not risk the shared one; `bad` runs on it, and if it throws a gltrain::Error
// the copy must still predict and checkpoint exactly as before (a
// std::logic_error saying what changed otherwise), then the error goes on.
void onFreshModel(World& w, const std::function<void(Sequential&)>& bad) {
    Context& ctx = test::context();
    auto m = makeModel(ctx, w.x, w.y);
    const std::vector<float> before = m->predict(w.probe).data;
    const std::vector<uint8_t> checkpoint = m->saveCheckpoint();
    try {
        bad(*m);
    } catch (const Error&) {
        test::context();
        if (m->fitting())
            throw std::logic_error(
                "the call failed but left the model fitting (a half-made fit: stepOnce() "
                "would run it)");
        if (m->predict(w.probe).data != before) throw std::logic_error("the call failed but changed predict()");
        if (m->saveCheckpoint() != checkpoint)
            throw std::logic_error("the call failed but changed the weights, optimizer state or step");
        throw;
    }
}

// A trained copy of the shared model on a context of its own, which is then
// lost (natively the EGL context is destroyed, as WEBGL_lose_context does to a
// WebGL one); `bad` runs on it. Natively the context is restored afterwards
// and the model must come back predicting exactly as before (std::logic_error
// otherwise); then the error goes on. The shared world's context is never lost.
void duringLostContext(World& w, const std::function<void(Sequential&, Context&)>& bad) {
    ContextOptions gpu;
    gpu.backend = BackendPreference::Gpu;  // a CPU-backend model (Auto on a software renderer) needs no GL
    Context ctx(gpu);
    auto m = makeModel(ctx, w.x, w.y);
    const std::vector<float> before = m->predict(w.probe).data;
    ctx.loseContext();
    try {
        bad(*m, ctx);
    } catch (const Error&) {
#ifndef __EMSCRIPTEN__
        ctx.restoreContext();
        if (m->predict(w.probe).data != before)
            throw std::logic_error("after the restore the model predicts otherwise");
#endif
        test::context();
        throw;
    }
}

// An uncompiled model with the shared model's layers (or `layers`).
std::unique_ptr<Sequential> uncompiled(std::vector<Layer> layers = {}) {
    auto m = std::make_unique<Sequential>(test::context(), 6);
    if (layers.empty()) layers = {Dense{8, Activation::ReLU}, Dropout{0.25f}, Dense{3}};
    for (auto& l : layers) m->add(l);
    return m;
}

CompileOptions withOptimizer(const std::function<void(OptimizerConfig&)>& f) {
    CompileOptions c;
    f(c.optimizer);
    return c;
}
CompileOptions withSchedule(const std::function<void(Schedule&)>& f) {
    CompileOptions c;
    c.schedule.kind = Schedule::Step;
    f(c.schedule);
    return c;
}
FitOptions fitWith(const std::function<void(FitOptions&)>& f) {
    FitOptions o;
    o.batchSize = 8;
    f(o);
    return o;
}
HostMatrix withValue(HostMatrix m, int r, int c, float v) {
    m(r, c) = v;
    return m;
}
HostMatrix oneHot(int rows, int cols) {
    HostMatrix m(rows, cols);
    for (int r = 0; r < rows; ++r) m(r, r % cols) = 1.0f;
    return m;
}
// A HostMatrix whose data no longer matches rows x cols (the fields are
// public). A fresh vector of exactly `keep` values, so reading past it is a
// heap-buffer-overflow under ASan, not a read of stale spare capacity.
HostMatrix inconsistent(HostMatrix m, size_t keep) {
    m.data = std::vector<float>(m.data.begin(), m.data.begin() + std::ptrdiff_t(keep));
    return m;
}
std::vector<uint8_t> checkpointWith(World& w, const std::function<void(std::vector<std::pair<std::string, TensorData>>&,
                                                                       std::map<std::string, std::string>&)>& edit) {
    SafetensorsFile f = parseSafetensors(w.model->saveCheckpoint());
    std::vector<std::pair<std::string, TensorData>> tensors;
    for (auto& n : f.names) tensors.emplace_back(n, f.at(n));
    edit(tensors, f.metadata);
    return serializeSafetensors(tensors, f.metadata);
}
TensorData& named(std::vector<std::pair<std::string, TensorData>>& ts, const std::string& name) {
    for (auto& t : ts)
        if (t.first == name) return t.second;
    throw std::logic_error("test: no tensor " + name);
}

// ---- the table

enum class Kind { Argument, Format, Io, Unsupported, Shader, ContextLost };
const char* kindName(Kind k) {
    switch (k) {
        case Kind::Argument: return "ArgumentError";
        case Kind::Format: return "FormatError";
        case Kind::Io: return "IoError";
        case Kind::Unsupported: return "UnsupportedError";
        case Kind::Shader: return "ShaderError";
        case Kind::ContextLost: return "ContextLostError";
    }
    return "?";
}
bool isKind(const Error& e, Kind k) {
    switch (k) {
        case Kind::Argument: return dynamic_cast<const ArgumentError*>(&e) != nullptr;
        case Kind::Format: return dynamic_cast<const FormatError*>(&e) != nullptr;
        case Kind::Io: return dynamic_cast<const IoError*>(&e) != nullptr;
        case Kind::Unsupported: return dynamic_cast<const UnsupportedError*>(&e) != nullptr;
        case Kind::Shader: return dynamic_cast<const ShaderError*>(&e) != nullptr;
        case Kind::ContextLost: return dynamic_cast<const ContextLostError*>(&e) != nullptr;
    }
    return false;
}

struct Row {
    std::string name;                  // the entry and what is wrong
    std::function<void(World&)> call;  // must throw
    Kind kind;
    std::vector<std::string> words;  // each must appear in the message
};
using A = Kind;

std::vector<Row> rows() {
    std::vector<Row> t;
    auto put = [&](std::string name, std::function<void(World&)> call, Kind kind, std::vector<std::string> words) {
        t.push_back({std::move(name), std::move(call), kind, std::move(words)});
    };

    // -- HostMatrix, Tensor, AsyncReadback
    put("HostMatrix_negative_rows", [](World&) { HostMatrix m(-1, 2); }, A::Argument, {"HostMatrix", "-1x2"});
    put("HostMatrix_values_mismatch", [](World&) { HostMatrix m(2, 2, std::vector<float>(3)); }, A::Argument,
        {"HostMatrix", "3 values", "2x2"});
    put("Tensor_zero_rows", [](World&) { Tensor t(test::context(), 0, 3); }, A::Argument, {"Tensor", "0x3", "empty"});
    put("Tensor_negative_cols", [](World&) { Tensor t(test::context(), 2, -3); }, A::Argument, {"Tensor", "2x-3"});
    put("Tensor_too_large", [](World&) { Tensor t(test::context(), 1, INT_MAX); }, A::Unsupported,
        {"Tensor", "1x2147483647", "texture layers"});
    put("Tensor_too_large_unpacked_small_limit",
        [](World&) { Tensor t(test::smallContext(), INT_MAX, INT_MAX, Layout::Unpacked); }, A::Unsupported,
        {"Tensor", "2147483647x2147483647", "texture layers"});
    put("Tensor_from_inconsistent_HostMatrix",
        [](World&) { Tensor t(test::context(), inconsistent(HostMatrix(2, 3), 5)); }, A::Argument,
        {"Tensor::upload", "5 values", "2x3"});
    put("Tensor_upload_wrong_length", [](World& w) { w.out.upload(std::vector<float>(5)); }, A::Argument,
        {"Tensor::upload", "5 values", "2x3", "expected 6"});
    put("Tensor_upload_null", [](World& w) { w.out.upload(nullptr, 6); }, A::Argument, {"Tensor::upload", "null"});
    put("Tensor_upload_wrong_shape", [](World& w) { w.out.upload(HostMatrix(3, 2)); }, A::Argument,
        {"Tensor::upload", "3x2", "2x3"});
    put("Tensor_download_empty", [](World&) { Tensor().download(); }, A::Argument, {"Tensor::download", "empty"});
    put("Tensor_upload_moved_from",
        [](World&) {
            Tensor t(test::context(), 2, 2);
            Tensor u = std::move(t);
            t.upload(std::vector<float>(4));
        },
        A::Argument, {"Tensor::upload", "empty", "moved from"});
    put("Tensor_clear_empty", [](World&) { Tensor().clear(); }, A::Argument, {"Tensor::clear", "empty"});
    put("AsyncReadback_empty", [](World&) { AsyncReadback r{Tensor()}; }, A::Argument, {"AsyncReadback", "empty"});

    // -- Context options
    put("Context_negative_maxTextureSize",
        [](World&) {
            ContextOptions o;
            o.maxTextureSize = -1;
            Context c(o);
        },
        A::Argument, {"Context", "maxTextureSize", "-1"});
#ifndef __EMSCRIPTEN__
    put("Context_unknown_platform",
        [](World&) {
            ContextOptions o;
            o.eglPlatforms = {"surfaceless", "wayland"};  // checked even though surfaceless would work
            Context c(o);
        },
        A::Argument, {"Context", "unknown EGL platform", "wayland"});
    put("Context_no_platforms",
        [](World&) {
            ContextOptions o;
            o.eglPlatforms.clear();
            Context c(o);
        },
        A::Argument, {"Context", "eglPlatforms", "empty"});
    put("Context_negative_device",
        [](World&) {
            ContextOptions o;
            o.eglDevice = -2;
            Context c(o);
        },
        A::Argument, {"Context", "eglDevice", "-2"});
#endif
    put("Context_negative_cpu_threads",
        [](World&) {
            ContextOptions o;
            o.backend = BackendPreference::Cpu;
            o.cpuThreads = -1;
            Context c(o);
        },
        A::Argument, {"Context", "cpuThreads", "-1"});

    // -- calls during a lost context
    put("predict_during_lost_context",
        [](World& w) { duringLostContext(w, [&](Sequential& m, Context&) { m.predict(w.probe); }); }, A::ContextLost,
        {"predict", "the GL context is lost"});
    put("fit_during_lost_context",
        [](World& w) {
            duringLostContext(w, [&](Sequential& m, Context&) { m.fit(w.x, w.y, fitWith([](FitOptions&) {})); });
        },
        A::ContextLost, {"fit", "the GL context is lost"});
    put("Tensor_during_lost_context",
        [](World& w) { duringLostContext(w, [](Sequential&, Context& ctx) { Tensor t(ctx, 2, 2); }); }, A::ContextLost,
        {"Tensor", "the GL context is lost"});

    // -- Sequential: construction, add, compile
    put("Sequential_zero_input", [](World&) { Sequential m(test::context(), 0); }, A::Argument,
        {"Sequential", "input", "0"});
    put("Sequential_negative_input", [](World&) { Sequential m(test::context(), -4); }, A::Argument,
        {"Sequential", "input", "-4"});
    put("Sequential_zero_image_height",
        [](World&) {
            Sequential m(test::context(), Shape3{0, 8, 1});
        },
        A::Argument, {"Sequential", "input shape"});
    put("add_after_compile", [](World& w) { w.model->add(Dense{2}); }, A::Argument, {"add", "already compiled"});
    put("compile_no_layers", [](World&) { Sequential(test::context(), 6).compile({}); }, A::Argument,
        {"compile", "no layers"});
    put("compile_dense_zero_units", [](World&) { uncompiled({Dense{0}})->compile({}); }, A::Argument,
        {"compile", "dense_0", "units", "0"});
    put("compile_dense_negative_units", [](World&) { uncompiled({Dense{-3}})->compile({}); }, A::Argument,
        {"compile", "dense_0", "units", "-3"});
    put("compile_dense_inputDim_mismatch",
        [](World&) {
            Dense d{3};
            d.inputDim = 5;
            uncompiled({d})->compile({});
        },
        A::Argument, {"compile", "dense_0", "5", "[batch, 6]"});
    for (auto [label, rate] :
         std::vector<std::pair<const char*, float>>{{"one", 1.0f}, {"negative", -0.1f}, {"nan", kNaN}})
        put(std::string("compile_dropout_rate_") + label,
            [rate = rate](World&) {
                uncompiled({Dense{4}, Dropout{rate}, Dense{3}})->compile({});
            },
            A::Argument, {"compile", "dropout_1", "rate", "[0, 1)"});
    put("compile_softmax_axis_out_of_range",
        [](World&) {
            Softmax s;
            s.axis = -3;
            uncompiled({s, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "softmax_0", "axis -3", "not an axis"});
    put("compile_softmax_with_mse",
        [](World&) {
            CompileOptions c;
            c.loss = LossKind::MeanSquaredError;
            uncompiled({Dense{3}, Softmax{}})->compile(c);
        },
        A::Argument, {"compile", "softmax_1", "cross-entropy"});
    put("compile_duplicate_names",
        [](World&) {
            Dense a{4}, b{3};
            a.name = b.name = "twin";
            uncompiled({a, b})->compile({});
        },
        A::Argument, {"compile", "twin"});
    put("compile_one_output_cross_entropy", [](World&) { uncompiled({Dense{1}})->compile({}); }, A::Argument,
        {"compile", "at least 2 outputs"});
    struct Opt {
        const char* name;
        std::function<void(OptimizerConfig&)> set;
        std::vector<std::string> words;
    };
    for (const Opt& o : std::vector<Opt>{
             {"lr_zero", [](OptimizerConfig& c) { c.lr = 0; }, {"learning rate"}},
             {"lr_negative", [](OptimizerConfig& c) { c.lr = -1e-3f; }, {"learning rate"}},
             {"lr_nan", [](OptimizerConfig& c) { c.lr = kNaN; }, {"learning rate"}},
             {"lr_inf", [](OptimizerConfig& c) { c.lr = kInf; }, {"learning rate"}},
             {"beta1_one", [](OptimizerConfig& c) { c.beta1 = 1.0f; }, {"beta1", "[0, 1)"}},
             {"beta1_negative", [](OptimizerConfig& c) { c.beta1 = -0.1f; }, {"beta1"}},
             {"beta2_one", [](OptimizerConfig& c) { c.beta2 = 1.0f; }, {"beta2", "[0, 1)"}},
             {"beta2_nan", [](OptimizerConfig& c) { c.beta2 = kNaN; }, {"beta2"}},
             {"momentum_one", [](OptimizerConfig& c) { c.momentum = 1.0f; }, {"momentum"}},
             {"rho_one", [](OptimizerConfig& c) { c.rho = 1.0f; }, {"rho"}},
             {"eps_zero", [](OptimizerConfig& c) { c.eps = 0; }, {"eps"}},
             {"eps_inf", [](OptimizerConfig& c) { c.eps = kInf; }, {"eps"}},
             {"weightDecay_negative", [](OptimizerConfig& c) { c.weightDecay = -0.1f; }, {"weightDecay"}},
             {"kind_unknown", [](OptimizerConfig& c) { c.kind = OptimizerKind(42); }, {"unknown kind", "42"}},
         }) {
        std::vector<std::string> words = o.words;
        words.insert(words.begin(), "optimizer");
        put(
            std::string("compile_optimizer_") + o.name, [o](World&) { uncompiled()->compile(withOptimizer(o.set)); },
            A::Argument, words);
    }
    // The shared (compiled, trained) model: a failed recompile changes nothing.
    put("recompile_trained_model_lr_zero",
        [](World& w) { w.model->compile(withOptimizer([](OptimizerConfig& c) { c.lr = 0; })); }, A::Argument,
        {"optimizer", "learning rate"});
    put("recompile_trained_model_clipNorm_negative",
        [](World& w) {
            CompileOptions c;
            c.clipNorm = -1;
            w.model->compile(c);
        },
        A::Argument, {"compile", "clipNorm"});
    put("compile_clipNorm_nan",
        [](World&) {
            CompileOptions c;
            c.clipNorm = kNaN;
            uncompiled()->compile(c);
        },
        A::Argument, {"compile", "clipNorm"});
    struct Sch {
        const char* name;
        std::function<void(Schedule&)> set;
        std::vector<std::string> words;
    };
    for (const Sch& s : std::vector<Sch>{
             {"stepSize_zero", [](Schedule& c) { c.stepSize = 0; }, {"stepSize"}},
             {"gamma_zero", [](Schedule& c) { c.gamma = 0; }, {"gamma"}},
             {"gamma_inf", [](Schedule& c) { c.gamma = kInf; }, {"gamma"}},
             {"warmup_negative", [](Schedule& c) { c.warmupSteps = -1; }, {"warmupSteps"}},
             {"totalSteps_zero", [](Schedule& c) { c.totalSteps = 0; }, {"totalSteps"}},
             {"minLr_negative", [](Schedule& c) { c.minLr = -1; }, {"minLr"}},
             {"minLr_nan", [](Schedule& c) { c.minLr = kNaN; }, {"minLr"}},
         }) {
        std::vector<std::string> words = s.words;
        words.insert(words.begin(), "schedule");
        put(
            std::string("compile_schedule_") + s.name, [s](World&) { uncompiled()->compile(withSchedule(s.set)); },
            A::Argument, words);
    }
    auto image = [](std::vector<Layer> layers) {
        auto m = std::make_unique<Sequential>(test::context(), Shape3{8, 8, 2});
        for (auto& l : layers) m->add(l);
        return m;
    };
    auto conv = [](int filters, int kernel, int stride) {
        Conv2D c;
        c.filters = filters, c.kernelSize = kernel, c.stride = stride;
        return c;
    };
    put("compile_conv_zero_filters",
        [=](World&) {
            image({conv(0, 3, 1), Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "filters", "0"});
    put("compile_conv_zero_kernel",
        [=](World&) {
            image({conv(4, 0, 1), Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "kernelSize", "positive"});
    put("compile_conv_zero_stride",
        [=](World&) {
            image({conv(4, 3, 0), Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "stride"});
    put("compile_conv_kernel_larger_than_image",
        [=](World&) {
            image({conv(4, 9, 1), Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "9x9"});
    // Layer arithmetic in 64 bits (issue 36): each of these overflowed an int before.
    put("compile_conv_huge_kernel_same_padding",
        [=](World&) {
            Conv2D c = conv(4, 2000000000, 1);
            c.padding = Padding::Same;
            image({c, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument,
        {"compile", "conv2d_0", "kernelSize", "a 2000000000x2000000000 window is 4000000000000000000 values",
         "more than the 2147483647 values"});
    put("compile_dense_kernel_over_int",
        [](World&) {
            auto m = std::make_unique<Sequential>(test::context(), 70000);
            m->add(Dense{70000}).compile({});
        },
        A::Argument,
        {"compile", "dense_0", "units", "70000 inputs x 70000 units is 4900000000 values", "more than the 2147483647"});
    put("sequential_input_over_int",
        [](World&) {
            Sequential(test::context(), Shape3{70000, 70000, 1});
        },
        A::Argument, {"Sequential", "[70000, 70000, 1]", "more than 2147483647 values per example"});
    put("fit_bce_target_outside_0_1",  // labels 0/1/2 into a sigmoid output
        [](World&) {
            Sequential m(test::context(), 2);
            m.add(Dense{1, Activation::Sigmoid});
            CompileOptions c;
            c.loss = LossKind::BinaryCrossEntropy;
            m.compile(c);
            HostMatrix x(6, 2, 0.5f), y(6, 1, std::vector<float>{0, 1, 1, 2, 0, 1});
            m.fit(x, Targets(y), FitOptions{});
        },
        A::Argument, {"fit", "binary cross-entropy", "[0, 1]", "row 3, column 0 is 2"});
    put("compile_conv_on_flat_input",
        [=](World&) {
            uncompiled({conv(4, 3, 1), Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "image input"});
    put("compile_dense_on_image_without_flatten", [=](World&) { image({Dense{3}})->compile({}); }, A::Argument,
        {"compile", "dense_0", "Flatten"});
    put("compile_conv_unknown_padding",
        [=](World&) {
            Conv2D c = conv(4, 3, 1);
            c.padding = Padding(7);
            image({c, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "conv2d_0", "padding"});
    put("compile_maxpool_negative_size",
        [=](World&) {
            MaxPool2D p;
            p.poolSize = -2;
            image({p, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "max_pool2d_0"});
    put("compile_maxpool_zero_size",
        [=](World&) {
            MaxPool2D p;
            p.poolSize = 0;
            image({p, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "max_pool2d_0", "poolSize"});
    put("compile_batchnorm_momentum_two",
        [=](World&) {
            BatchNormalization b;
            b.momentum = 2.0f;
            image({conv(4, 3, 1), b, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "batch_normalization_1", "momentum"});
    put("compile_batchnorm_epsilon_zero",
        [=](World&) {
            BatchNormalization b;
            b.epsilon = 0.0f;
            image({conv(4, 3, 1), b, Flatten{}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "batch_normalization_1", "epsilon"});

    // Enumerators outside their enum, non-finite parameters and bad initializers: refused by compile(), which
    // checks every layer before it replaces anything.
    put("compile_unknown_activation",
        [](World&) {
            uncompiled({Dense{4, Activation(42)}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "dense_0", "activation", "42"});
    put("compile_leaky_relu_alpha_nan",
        [](World&) {
            Dense d{4, Activation::LeakyReLU};
            d.alpha = kNaN;
            uncompiled({d, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "dense_0", "alpha"});
    put("compile_activation_layer_unknown",
        [](World&) {
            uncompiled({Dense{4}, ActivationLayer{Activation(-1)}, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "activation_1", "activation"});
    put("compile_constant_initializer_nan",
        [](World&) {
            Dense d{4};
            d.kernelInit = Initializer::constant(kNaN);
            uncompiled({d, Dense{3}})->compile({});
        },
        A::Argument, {"compile", "dense_0", "initializer"});
    put("compile_unknown_loss",
        [](World&) {
            CompileOptions c;
            c.loss = LossKind(42);
            uncompiled()->compile(c);
        },
        A::Argument, {"compile", "loss", "42"});
    put("compile_unknown_nan_policy",
        [](World&) {
            CompileOptions c;
            c.onNaN = NanPolicy(5);
            uncompiled()->compile(c);
        },
        A::Argument, {"compile", "onNaN", "5"});
    put("compile_during_fit",
        [](World& w) {
            auto m = makeModel(test::context(), w.x, w.y);
            m->beginFit(w.x, w.y, fitWith([](FitOptions& f) { f.epochs = 3; }));
            try {
                m->compile({});
            } catch (const ArgumentError&) {
                m->stepOnce();  // refused: the fit must still run
                throw;
            }
            if (m->fitting())
                throw std::logic_error(
                    "compile() during a fit left the fit running on freed plans (the next "
                    "stepOnce() is a use-after-free)");
            throw ArgumentError("compile: (test) the fit was ended, as it should be");
        },
        A::Argument, {"compile", "fit"});

    // -- fit / beginFit (on the shared model: nothing may change)
    auto fitRow = [&](std::string name, std::function<FitOptions()> opts, std::vector<std::string> words) {
        put(
            "fit_" + name, [opts](World& w) { w.model->fit(w.x, w.y, opts()); }, A::Argument, words);
    };
    fitRow("epochs_zero", [] { return fitWith([](FitOptions& f) { f.epochs = 0; }); }, {"fit", "epochs", "0"});
    fitRow("epochs_negative", [] { return fitWith([](FitOptions& f) { f.epochs = -2; }); }, {"fit", "epochs", "-2"});
    fitRow("batch_zero", [] { return fitWith([](FitOptions& f) { f.batchSize = 0; }); }, {"fit", "batchSize", "0"});
    fitRow("batch_negative", [] { return fitWith([](FitOptions& f) { f.batchSize = -8; }); },
           {"fit", "batchSize", "-8"});
    // (without dropRemainder such a batch size trains one step of all the rows: tests/fit_ragged_test.cpp)
    fitRow("batch_larger_than_data_dropped",
           [] { return fitWith([](FitOptions& f) { f.batchSize = 25, f.dropRemainder = true; }); },
           {"fit", "batchSize 25", "24", "dropRemainder"});
    fitRow("lossEvery_negative", [] { return fitWith([](FitOptions& f) { f.lossEvery = -1; }); }, {"fit", "lossEvery"});
    fitRow("validationSplit_one", [] { return fitWith([](FitOptions& f) { f.validationSplit = 1.0f; }); },
           {"fit", "validationSplit", "[0, 1)"});
    fitRow("validationSplit_negative", [] { return fitWith([](FitOptions& f) { f.validationSplit = -0.5f; }); },
           {"fit", "validationSplit"});
    fitRow("validationSplit_nan", [] { return fitWith([](FitOptions& f) { f.validationSplit = kNaN; }); },
           {"fit", "validationSplit"});
    fitRow("validationSplit_leaves_nothing", [] { return fitWith([](FitOptions& f) { f.validationSplit = 0.01f; }); },
           {"fit", "validationSplit", "no training or validation rows"});
    put("fit_x_no_rows", [](World& w) { w.model->fit(HostMatrix(0, 6), std::vector<int>{}); }, A::Argument,
        {"fit", "no rows"});
    put("fit_x_wrong_cols", [](World& w) { w.model->fit(HostMatrix(24, 5), w.y); }, A::Argument,
        {"fit", "5 columns", "expects 6"});
    put("fit_y_wrong_length", [](World& w) { w.model->fit(w.x, std::vector<int>(23, 0)); }, A::Argument,
        {"fit", "24 rows", "23"});
    put("fit_x_nan", [](World& w) { w.model->fit(withValue(w.x, 2, 1, kNaN), w.y); }, A::Argument,
        {"fit", "row 2, column 1", "NaN"});
    put("fit_x_inf", [](World& w) { w.model->fit(withValue(w.x, 0, 5, -kInf), w.y); }, A::Argument,
        {"fit", "row 0, column 5", "Inf"});
    put("fit_label_too_big",
        [](World& w) {
            auto y = w.y;
            y[7] = 3;
            w.model->fit(w.x, y);
        },
        A::Argument, {"fit", "label 3", "row 7", "[0, 3)"});
    put("fit_label_negative",
        [](World& w) {
            auto y = w.y;
            y[0] = -1;
            w.model->fit(w.x, y);
        },
        A::Argument, {"fit", "label -1", "row 0"});
    put("fit_onehot_wrong_cols", [](World& w) { w.model->fit(w.x, Targets(oneHot(24, 4))); }, A::Argument,
        {"fit", "one-hot", "4 columns", "3"});
    put("fit_onehot_nan",
        [](World& w) {
            onFreshModel(w, [&](Sequential& m) {
                m.fit(w.x, Targets(withValue(oneHot(24, 3), 4, 2, kNaN)), fitWith([](FitOptions&) {}));
            });
        },
        A::Argument, {"fit", "row 4, column 2", "NaN"});
    put("fit_x_data_shorter_than_shape",
        [](World& w) {
            onFreshModel(w, [&](Sequential& m) { m.fit(inconsistent(w.x, 100), w.y, fitWith([](FitOptions&) {})); });
        },
        A::Argument, {"fit", "x", "100 values", "24x6"});
    put("fit_validationX_without_validationY",
        [](World& w) {
            HostMatrix vx = w.x;
            onFreshModel(w,
                         [&](Sequential& m) { m.fit(w.x, w.y, fitWith([&](FitOptions& f) { f.validationX = &vx; })); });
        },
        A::Argument, {"fit", "validationX", "validationY"});
    put("fit_validation_split_and_data",
        [](World& w) {
            HostMatrix vx = w.x;
            Targets vy(w.y);
            onFreshModel(w, [&](Sequential& m) {
                m.fit(w.x, w.y, fitWith([&](FitOptions& f) {
                          f.validationSplit = 0.25f;
                          f.validationX = &vx;
                          f.validationY = &vy;
                      }));
            });
        },
        A::Argument, {"fit", "validationSplit", "validationX"});
    put("fit_validation_wrong_cols_leaves_no_half_fit",
        [](World& w) {
            onFreshModel(w, [&](Sequential& m) {
                HostMatrix vx(4, 5);
                Targets vy(std::vector<int>(4, 0));
                m.beginFit(w.x, w.y, fitWith([&](FitOptions& f) {
                               f.validationX = &vx;
                               f.validationY = &vy;
                           }));
            });
        },
        A::Argument, {"fit (validation data)", "5 columns"});
    put("fit_validation_nan_leaves_no_half_fit",
        [](World& w) {
            onFreshModel(w, [&](Sequential& m) {
                HostMatrix vx = withValue(w.x, 3, 3, kNaN);
                Targets vy(w.y);
                m.beginFit(w.x, w.y, fitWith([&](FitOptions& f) {
                               f.validationX = &vx;
                               f.validationY = &vy;
                           }));
            });
        },
        A::Argument, {"fit (validation data)", "NaN"});
    put("fit_not_compiled", [](World& w) { uncompiled()->fit(w.x, w.y); }, A::Argument, {"fit", "not compiled"});
    auto mse = [] {
        auto m = uncompiled({Dense{2}});
        CompileOptions c;
        c.loss = LossKind::MeanSquaredError;
        m->compile(c);
        return m;
    };
    put("fit_mse_with_labels", [mse](World& w) { mse()->fit(w.x, w.y); }, A::Argument, {"fit", "needs target values"});
    put("fit_mse_wrong_cols", [mse](World& w) { mse()->fit(w.x, Targets(HostMatrix(24, 3))); }, A::Argument,
        {"fit", "3 columns", "outputs 2"});
    put("fit_mse_target_inf", [mse](World& w) { mse()->fit(w.x, Targets(withValue(HostMatrix(24, 2), 9, 1, kInf))); },
        A::Argument, {"fit", "row 9, column 1", "Inf"});

    // -- evaluate, predict
    put("evaluate_not_compiled", [](World& w) { uncompiled()->evaluate(w.x, w.y); }, A::Argument,
        {"evaluate", "not compiled"});
    put("evaluate_batch_zero", [](World& w) { w.model->evaluate(w.x, w.y, 0); }, A::Argument,
        {"evaluate", "batchSize"});
    put("evaluate_x_wrong_cols", [](World& w) { w.model->evaluate(HostMatrix(24, 7), w.y); }, A::Argument,
        {"evaluate", "7 columns"});
    put("evaluate_x_nan", [](World& w) { w.model->evaluate(withValue(w.x, 5, 0, kNaN), w.y); }, A::Argument,
        {"evaluate", "row 5, column 0"});
    put("evaluate_label_out_of_range", [](World& w) { w.model->evaluate(w.x, std::vector<int>(24, 9)); }, A::Argument,
        {"evaluate", "label 9"});
    put("predict_not_compiled", [](World& w) { uncompiled()->predict(w.probe); }, A::Argument,
        {"predict", "not compiled"});
    put("predict_batch_zero", [](World& w) { w.model->predict(w.probe, 0); }, A::Argument, {"predict", "batchSize"});
    put("predict_batch_negative", [](World& w) { w.model->predict(w.probe, -1); }, A::Argument,
        {"predict", "batchSize"});
    put("predict_wrong_cols", [](World& w) { w.model->predict(HostMatrix(5, 4)); }, A::Argument,
        {"predict", "4 columns", "expects 6"});
    put("predict_no_rows", [](World& w) { w.model->predict(HostMatrix(0, 6)); }, A::Argument, {"predict", "no rows"});
    put("predict_inf", [](World& w) { w.model->predict(withValue(w.probe, 4, 3, kInf)); }, A::Argument,
        {"predict", "row 4, column 3"});
    put("predict_data_shorter_than_shape", [](World& w) { w.model->predict(inconsistent(w.probe, 7)); }, A::Argument,
        {"predict", "7 values", "5x6"});

    // -- weights
    put("weight_unknown_layer", [](World& w) { w.model->weight("nope", "kernel"); }, A::Argument,
        {"no layer named 'nope'"});
    put("weight_layer_without_weights", [](World& w) { w.model->weight(w.model->layerName(1), "kernel"); }, A::Argument,
        {"dropout_1", "no weights"});
    put("weight_bad_which", [](World& w) { w.model->weight("hidden", "gamma"); }, A::Argument,
        {"weight", "hidden", "'gamma'", "kernel"});
    put("setWeight_bad_which", [](World& w) { w.model->setWeight("hidden", "beta", HostMatrix(6, 8)); }, A::Argument,
        {"setWeight", "'beta'"});
    put("setWeight_wrong_shape", [](World& w) { w.model->setWeight("hidden", "kernel", HostMatrix(8, 6)); },
        A::Argument, {"setWeight", "hidden/kernel", "6x8", "8x6"});
    put("setWeight_bias_wrong_shape", [](World& w) { w.model->setWeight("out", "bias", HostMatrix(3, 1)); },
        A::Argument, {"setWeight", "out/bias", "1x3", "3x1"});
    put("setWeight_nan", [](World& w) { w.model->setWeight("out", "kernel", withValue(HostMatrix(8, 3), 7, 2, kNaN)); },
        A::Argument, {"setWeight", "row 7, column 2", "NaN"});
    put("setWeight_data_shorter_than_shape",
        [](World& w) { w.model->setWeight("out", "kernel", inconsistent(HostMatrix(8, 3), 20)); }, A::Argument,
        {"20 values", "8x3"});
    put("setWeight_unknown_layer", [](World& w) { w.model->setWeight("nope", "kernel", HostMatrix(6, 8)); },
        A::Argument, {"no layer named 'nope'"});
    put("setWeight_not_compiled", [](World&) { uncompiled()->setWeight("dense_0", "kernel", HostMatrix(6, 8)); },
        A::Argument, {"setWeight", "not compiled"});

    // -- checkpoints
    put("loadCheckpoint_not_compiled", [](World& w) { uncompiled()->loadCheckpoint(w.model->saveCheckpoint()); },
        A::Argument, {"loadCheckpoint", "not compiled"});
    put("loadCheckpoint_garbage",
        [](World& w) {
            w.model->loadCheckpoint({1, 2, 3}, "junk.safetensors");
        },
        A::Format, {"safetensors junk.safetensors", "3 bytes"});
    put("loadCheckpoint_truncated",
        [](World& w) {
            auto b = w.model->saveCheckpoint();
            b.resize(b.size() - 5);
            w.model->loadCheckpoint(b);
        },
        A::Format, {"<checkpoint>", "data"});
    put("loadCheckpoint_missing_tensor",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                for (size_t i = 0; i < ts.size(); ++i)
                    if (ts[i].first == "out/bias") ts.erase(ts.begin() + std::ptrdiff_t(i));
            }));
        },
        A::Argument, {"loadCheckpoint", "'out/bias' is missing"});
    put("loadCheckpoint_wrong_shape",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                named(ts, "hidden/kernel") = TensorData::f32({8, 6}, std::vector<float>(48));
            }));
        },
        A::Argument, {"loadCheckpoint", "'hidden/kernel'", "[8, 6]", "needs"});
    put("loadCheckpoint_wrong_dtype",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                named(ts, "out/bias") = TensorData(Dtype::F64, {3}, std::vector<uint8_t>(24));
            }));
        },
        A::Argument, {"loadCheckpoint", "'out/bias'", "F64", "F32"});
    put("loadCheckpoint_nan_weight",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                std::vector<float> v(24, 0.5f);
                v[17] = kNaN;
                named(ts, "out/kernel") = TensorData::f32({8, 3}, v);
            }));
        },
        A::Argument, {"loadCheckpoint", "'out/kernel'", "NaN"});
    put("loadCheckpoint_partial_optimizer_state",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                for (size_t i = 0; i < ts.size(); ++i)
                    if (ts[i].first == "out/kernel/slot1") ts.erase(ts.begin() + std::ptrdiff_t(i));
            }));
        },
        A::Argument, {"loadCheckpoint", "optimizer state", "some parameters"});
    put("loadCheckpoint_tensor_the_model_lacks",  // a deeper model's file
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                ts.emplace_back("out2/kernel", TensorData::f32({3, 3}, std::vector<float>(9, 0.5f)));
                ts.emplace_back("out2/bias", TensorData::f32({3}, std::vector<float>(3)));
            }));
        },
        A::Argument, {"loadCheckpoint", "2 tensors the model does not have", "'out2/bias'", "'out2/kernel'"});
    put("loadCheckpoint_other_optimizers_state",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto&, auto& md) { md["optimizer"] = "rmsprop"; }));
        },
        A::Argument, {"loadCheckpoint", "rmsprop's", "trains with adam", "resetOptimizer"});
    put("loadCheckpoint_negative_second_moment",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                std::vector<float> v(24, 0.01f);
                v[5] = -0.25f;
                named(ts, "out/kernel/slot1") = TensorData::f32({8, 3}, v);
            }));
        },
        A::Argument, {"loadCheckpoint", "'out/kernel/slot1'", "squared gradients", "-0.25", "element 5", ">= 0"});
    put("loadCheckpoint_infinite_first_moment",
        [](World& w) {
            w.model->loadCheckpoint(checkpointWith(w, [](auto& ts, auto&) {
                std::vector<float> v(24, 0.01f);
                v[7] = kInf;
                named(ts, "hidden/bias/slot0") = TensorData::f32({8}, std::vector<float>(v.begin(), v.begin() + 8));
            }));
        },
        A::Argument, {"loadCheckpoint", "'hidden/bias/slot0'", "NaN or Inf", "element 7"});
    put("loadCheckpoint_step_not_a_number",
        [](World& w) { w.model->loadCheckpoint(checkpointWith(w, [](auto&, auto& md) { md["step"] = "six"; })); },
        A::Argument, {"loadCheckpoint", "'step'", "not a number"});
    put("loadCheckpoint_step_negative",
        [](World& w) { w.model->loadCheckpoint(checkpointWith(w, [](auto&, auto& md) { md["step"] = "-6"; })); },
        A::Argument, {"loadCheckpoint", "'step'", "negative"});
    put("loadCheckpoint_step_trailing_garbage",
        [](World& w) { w.model->loadCheckpoint(checkpointWith(w, [](auto&, auto& md) { md["step"] = "6x"; })); },
        A::Argument, {"loadCheckpoint", "'step'", "6x"});
    put("load_missing_file", [](World& w) { w.model->load("/nonexistent/gltrain/model.safetensors"); }, A::Io,
        {"/nonexistent/gltrain/model.safetensors", "cannot open"});
    put("save_into_missing_directory", [](World& w) { w.model->save("/nonexistent/gltrain/model.safetensors"); }, A::Io,
        {"/nonexistent/gltrain/model.safetensors.tmp"});
    put("saveCheckpoint_not_compiled", [](World&) { uncompiled()->saveCheckpoint(); }, A::Argument,
        {"saveCheckpoint", "not compiled"});

    // -- ops (immediate forms record into a throwaway list; the record* forms validate the same way first)
    put("add_shape_mismatch", [](World& w) { add(w.a, w.t32, w.out); }, A::Argument, {"add", "2x3", "3x2"});
    put("sub_out_mismatch", [](World& w) { sub(w.a, w.b, w.one); }, A::Argument, {"sub", "out", "1x1"});
    put("mul_empty", [](World& w) { mul(w.a, Tensor(), w.out); }, A::Argument, {"mul", "b", "empty"});
    put("axpy_out_is_input", [](World& w) { axpy(2.0f, w.a, w.b, w.a); }, A::Argument,
        {"binary", "output is also input"});
    put("activation_unknown", [](World& w) { activation(w.a, Activation(99), w.out); }, A::Argument,
        {"activation", "unknown activation 99"});
    put("activation_leaky_alpha_nan", [](World& w) { activation(w.a, Activation::LeakyReLU, w.out, kNaN); },
        A::Argument, {"activation", "alpha", "finite"});
    put("activationGrad_shape_mismatch", [](World& w) { activationGrad(w.a, w.t32, Activation::ReLU, w.out); },
        A::Argument, {"activationGrad", "dy", "z"});
    put("biasAdd_bias_wrong", [](World& w) { biasAdd(w.a, w.b, w.out); }, A::Argument, {"biasAdd", "2x3", "1x3"});
    put("fill_empty",
        [](World&) {
            Tensor e;
            fill(e, 1.0f);
        },
        A::Argument, {"fill", "empty"});
    put("matmul_inner_mismatch", [](World& w) { matmul(w.a, w.b, w.out); }, A::Argument,
        {"matmul", "inner dimensions", "2x3"});
    put("matmul_c_wrong", [](World& w) { matmul(w.a, w.t32, w.out); }, A::Argument, {"matmul", "C is 2x3", "2x2"});
    put("matmul_bias_wrong",
        [](World& w) {
            Tensor c(test::context(), 3, 3);
            MatmulOptions o;
            o.bias = &w.one;
            matmul(w.t32, w.a, c, o);
        },
        A::Argument, {"matmul", "bias is 1x1", "1x3"});
    put("matmul_kslice_not_multiple_of_4",
        [](World& w) {
            Tensor c(test::context(), 2, 2);
            MatmulOptions o;
            o.maxKPerPass = 6;
            matmul(w.a, w.t32, c, o);
        },
        A::Argument, {"matmul", "maxKPerPass"});
    put("matmul_unknown_activation",
        [](World& w) {
            Tensor c(test::context(), 2, 2);
            MatmulOptions o;
            o.act = Activation(42);
            matmul(w.a, w.t32, c, o);
        },
        A::Argument, {"matmul", "unknown activation 42"});
    put("dense_bias_wrong",
        [](World& w) {
            Tensor y(test::context(), 2, 2);
            dense(w.a, w.t32, w.b, Activation::ReLU, y);
        },
        A::Argument, {"matmul", "bias is 2x3"});
    put("softmax_out_wrong",
        [](World& w) {
            Tensor o(test::context(), 3, 2);
            PassList l;
            recordSoftmax(l, w.a, o);
        },
        A::Argument, {"softmax", "out is 3x2", "2x3"});
    put("softmaxCrossEntropy_labels_wrong",
        [](World& w) {
            PassList l;
            recordSoftmaxCrossEntropy(l, w.a, w.b, w.out);
        },
        A::Argument, {"softmaxCrossEntropy", "labels is 2x3", "2x1"});
    put("uploadLabels_out_of_range",
        [](World&) {
            Tensor labels(test::context(), 2, 1, Layout::Unpacked);
            uploadLabels(labels, {0, 5}, 3);
        },
        A::Argument, {"uploadLabels", "label 5", "row 1", "[0, 3)"});
    put("uploadLabels_count_mismatch",
        [](World&) {
            Tensor labels(test::context(), 2, 1, Layout::Unpacked);
            uploadLabels(labels, {0, 1, 2}, 3);
        },
        A::Argument, {"uploadLabels", "2x1", "3 labels"});
    put("mse_target_wrong",
        [](World& w) {
            PassList l;
            recordMse(l, w.a, w.t32, &w.out);
        },
        A::Argument, {"target is 3x2", "2x3"});
    put("sumRows_out_wrong", [](World& w) { sumRows(w.a, w.out); }, A::Argument, {"sumRows", "out is 2x3", "2x1"});
    put("meanAll_block_factor_one",
        [](World& w) {
            ReduceOptions o;
            o.blockFactor = 1;
            meanAll(w.a, w.one, o);
        },
        A::Argument, {"meanAll", "blockFactor", "1"});
    put("argmaxRows_out_wrong", [](World& w) { argmaxRows(w.a, w.one); }, A::Argument, {"argmaxRows", "out is 1x1"});
    put("correctCount_labels_wrong", [](World& w) { correctCount(w.a, w.b, w.one); }, A::Argument,
        {"correctCount", "labels is 2x3"});
    put("globalL2Norm_empty_list", [](World& w) { globalL2Norm({}, w.one); }, A::Argument, {"globalL2Norm", "empty"});
    put("clipByGlobalNorm_maxNorm_zero",
        [](World& w) {
            Tensor o(test::context(), 2, 3);
            clipByGlobalNorm({&w.a}, {&o}, 0.0f, w.one);
        },
        A::Argument, {"clipByGlobalNorm", "maxNorm", "> 0"});
    put("clipByGlobalNorm_maxNorm_nan",
        [](World& w) {
            Tensor o(test::context(), 2, 3);
            clipByGlobalNorm({&w.a}, {&o}, kNaN, w.one);
        },
        A::Argument, {"clipByGlobalNorm", "maxNorm"});
    put("clipByGlobalNorm_count_mismatch",
        [](World& w) {
            clipByGlobalNorm({&w.a, &w.b}, {&w.out}, 1.0f, w.one);
        },
        A::Argument, {"clipByGlobalNorm", "2 inputs", "1 outputs"});
    put("dropoutMask_rate_one", [](World& w) { dropoutMask(w.out, 1, 0, 1.0f); }, A::Argument,
        {"dropoutMask", "rate", "[0, 1)"});
    put("dropoutMask_step_too_big", [](World& w) { dropoutMask(w.out, 1, (1u << 24) + 1, 0.5f); }, A::Argument,
        {"dropoutMask", "step", "2^24"});
    put("normalFill_stddev_negative", [](World& w) { normalFill(w.out, 1, 0, 0.0f, -1.0f); }, A::Argument,
        {"normalFill", "stddev"});
    put("normalFill_mean_nan", [](World& w) { normalFill(w.out, 1, 0, kNaN, 1.0f); }, A::Argument,
        {"normalFill", "mean", "finite"});
    put("uniformFill_bound_inf", [](World& w) { uniformFill(w.out, 1, 0, 0.0f, kInf); }, A::Argument,
        {"uniformFill", "finite"});
    auto update = [](World& w, const OptimizerConfig& c, const Tensor& grad, int slots) {
        Context& ctx = test::context();
        PingPong p(ctx, 2, 3);
        std::vector<std::unique_ptr<PingPong>> s;
        std::vector<PingPong*> sp;
        for (int i = 0; i < slots; ++i)
            s.push_back(std::make_unique<PingPong>(ctx, 2, 3)), sp.push_back(s.back().get());
        PassList l;
        recordOptimizerUpdate(l, c, p, grad, sp);
        (void)w;
    };
    put("optimizerUpdate_grad_wrong", [update](World& w) { update(w, {}, w.t32, 2); }, A::Argument,
        {"optimizer update", "gradient is 3x2", "2x3"});
    put("optimizerUpdate_slot_count", [update](World& w) { update(w, {}, w.b, 1); }, A::Argument,
        {"optimizer update", "adam", "2 state slots", "1"});
    put("optimizerUpdate_lr_nan",
        [update](World& w) {
            OptimizerConfig c;
            c.lr = kNaN;
            update(w, c, w.b, 2);
        },
        A::Argument, {"optimizer", "learning rate"});
    put("setStep_lr_inf",
        [](World& w) {
            Pass p(test::context(), "update/sgd");
            setStep(p, {}, 1, kInf);
            (void)w;
        },
        A::Argument, {"optimizer", "learning rate of step 1"});
    put("setStep_adam_t_zero",
        [](World&) {
            Pass p(test::context(), "update/adam");
            setStep(p, {}, 0, 1e-3f);
        },
        A::Argument, {"optimizer", "t must be >= 1"});

    // -- Pass (the kernel-level API)
    put("Pass_unknown_kernel", [](World&) { Pass(test::context(), "forward/no_such_kernel"); }, A::Shader,
        {"no kernel named", "forward/no_such_kernel"});
    put("Pass_unknown_input", [](World& w) { Pass(test::context(), "reduce/clip_factor").input("NOPE", w.one); },
        A::Argument, {"reduce/clip_factor", "no input 'NOPE'", "NORM"});
    put("Pass_unknown_uniform", [](World&) { Pass(test::context(), "reduce/clip_factor").uniform("maxNrom", 1.0f); },
        A::Argument, {"reduce/clip_factor", "no uniform 'maxNrom'"});
    put("Pass_unbound_input",
        [](World& w) {
            Tensor o(test::context(), 1, 1);
            Pass(test::context(), "reduce/clip_factor").output(o).uniform("maxNorm", 1.0f).run();
            (void)w;
        },
        A::Argument, {"reduce/clip_factor", "input 'NORM' is not bound"});
    put("Pass_unbound_output", [](World& w) { Pass(test::context(), "reduce/clip_factor").input("NORM", w.one).run(); },
        A::Argument, {"reduce/clip_factor", "output", "not bound"});
    put("Pass_default_made_run", [](World&) { Pass().run(); }, A::Argument, {"Pass::run", "default-made"});

    // -- tensors from another context (test::smallContext() is a second Context)
    put("add_other_context",
        [](World& w) {
            Tensor other(test::smallContext(), 2, 3);
            test::context();
            add(w.a, other, w.out);
        },
        A::Argument, {"add", "different gltrain::Contexts"});
    put("matmul_other_context",
        [](World& w) {
            Tensor other(test::smallContext(), 3, 2);
            Tensor c(test::context(), 2, 2);
            matmul(w.a, other, c);
        },
        A::Argument, {"matmul", "different gltrain::Contexts"});
    put("reduce_out_other_context",
        [](World& w) {
            Tensor other(test::smallContext(), 1, 1);
            test::context();
            sumAll(w.a, other);
        },
        A::Argument, {"sumAll", "different gltrain::Contexts"});
    put("softmaxCrossEntropy_other_context",
        [](World& w) {
            Tensor labels(test::smallContext(), 2, 1, Layout::Unpacked);
            test::context();
            PassList l;
            recordSoftmaxCrossEntropy(l, w.a, labels, w.out);
        },
        A::Argument, {"softmaxCrossEntropy", "different gltrain::Contexts"});
    put("optimizerUpdate_other_context",
        [](World&) {
            PingPong p(test::context(), 2, 3);
            Tensor g(test::smallContext(), 2, 3);
            test::context();
            PassList l;
            OptimizerConfig c;
            c.kind = OptimizerKind::SGD;
            recordOptimizerUpdate(l, c, p, g, {});
        },
        A::Argument, {"optimizer update", "different gltrain::Contexts"});
    put("Pass_input_other_context",
        [](World&) {
            Tensor other(test::smallContext(), 1, 1);
            Pass(test::context(), "reduce/clip_factor").input("NORM", other);
        },
        A::Argument, {"reduce/clip_factor", "input 'NORM'", "another gltrain::Context"});

    // -- files and data (the parsers are fuzzed too: tests/fuzz/)
    put("parseIdx_bad_magic",
        [](World&) {
            parseIdx(std::vector<uint8_t>{1, 2, 3, 4, 5}, "x.idx");
        },
        A::Format, {"IDX x.idx", "bad magic", "byte 0"});
    put("parseIdx_truncated",
        [](World&) {
            parseIdx(std::vector<uint8_t>{0, 0, 8, 1, 0, 0, 0, 4, 1, 2}, "x.idx");
        },
        A::Format, {"IDX x.idx", "truncated", "2 bytes missing"});
    put("loadIdxFile_missing", [](World&) { loadIdxFile("/nonexistent/gltrain.idx"); }, A::Io,
        {"/nonexistent/gltrain.idx", "cannot open"});
    put("makeDataset_count_mismatch",
        [](World&) {
            IdxArray images = parseIdx(std::vector<uint8_t>{0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 1, 7, 9}, "img");
            IdxArray labels = parseIdx(std::vector<uint8_t>{0, 0, 8, 1, 0, 0, 0, 3, 0, 1, 2}, "lab");
            makeDataset(images, labels);
        },
        A::Format, {"2 images", "3 labels"});
    put("parseSafetensors_short",
        [](World&) {
            parseSafetensors(std::vector<uint8_t>{1, 2}, "m.st");
        },
        A::Format, {"safetensors m.st", "2 bytes"});
    put("TensorData_length_mismatch",
        [](World&) {
            TensorData(Dtype::F32, {2, 2}, std::vector<uint8_t>(15));
        },
        A::Argument, {"TensorData", "15 bytes", "[2,2]", "expected 16"});
    put("TensorData_negative_dim", [](World&) { TensorData(Dtype::F32, {-1}, {}); }, A::Argument,
        {"TensorData", "[-1]"});
    put("serializeSafetensors_duplicate",
        [](World&) {
            serializeSafetensors({{"a", TensorData::f32({1}, {1})}, {"a", TensorData::f32({1}, {2})}});
        },
        A::Argument, {"serializeSafetensors", "duplicate", "\"a\""});
    put("saveSafetensorsFile_missing_directory",
        [](World&) {
            saveSafetensorsFile("/nonexistent/gltrain/x.safetensors", {{"a", TensorData::f32({1}, {1})}});
        },
        A::Io, {"/nonexistent/gltrain/x.safetensors.tmp"});
    put("Initializer_parse_unknown", [](World&) { Initializer::parse("lecun"); }, A::Argument,
        {"initializer", "'lecun'"});
    put("Initializer_constant_nan", [](World&) { Initializer::constant(kNaN).make(2, 2, 2, 2, 1, 0); }, A::Argument,
        {"initializer", "constant", "finite"});
    put("parseActivation_unknown", [](World&) { parseActivation("swoosh"); }, A::Argument,
        {"'swoosh'", "relu", "swish"});
    return t;
}

// gtest prints a failing parameter; the row's name says which.
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class BadInput : public ::testing::TestWithParam<Row> {};

TEST_P(BadInput, ThrowsAClearErrorAndChangesNothing) {
    const Row& row = GetParam();
    World& w = world();
    const Fingerprint before = fingerprint(w);
    std::string message;
    bool threw = false;
    try {
        row.call(w);
    } catch (const Error& e) {
        threw = true;
        message = e.what();
        EXPECT_TRUE(isKind(e, row.kind)) << "expected " << kindName(row.kind) << ", got " << typeid(e).name() << ": "
                                         << message;
    } catch (const std::exception& e) {
        threw = true;
        message = e.what();
        ADD_FAILURE() << "not a gltrain::Error (" << typeid(e).name() << "): " << message;
    }
    test::context();
    EXPECT_TRUE(threw) << "the call was accepted; expected " << kindName(row.kind);
    for (const std::string& word : row.words)
        EXPECT_NE(message.find(word), std::string::npos) << "message lacks \"" << word << "\": " << message;
    const Fingerprint after = fingerprint(w);
    EXPECT_TRUE(after.predictions == before.predictions) << "predict() changed";
    EXPECT_TRUE(after.checkpoint == before.checkpoint) << "weights, optimizer state or step changed";
    EXPECT_EQ(after.step, before.step);
    EXPECT_EQ(after.fitting, before.fitting);
    EXPECT_TRUE(after.sentinel == before.sentinel) << "the sentinel tensor changed";
    EXPECT_EQ(after.liveTextures, before.liveTextures) << "a texture is still on loan";
    EXPECT_EQ(after.liveBytes, before.liveBytes);
}

std::string rowName(const ::testing::TestParamInfo<Row>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Table, BadInput, ::testing::ValuesIn(rows()), rowName);

// The bit comparison above is only worth something if predict() is
// deterministic: two calls on unchanged weights give identical bits.
TEST(BadInputWorld, PredictIsBitReproducible) {
    World& w = world();
    EXPECT_TRUE(w.model->predict(w.probe).data == w.model->predict(w.probe).data);
    EXPECT_TRUE(w.sentinel.download().data == w.sentinelValue.data);
}

}  // namespace

}  // namespace bad_input_test
}  // namespace

// writeFileAtomic (issue 36, part 3): two writers of one path never share a
// temporary file (a shared PATH.tmp let one writer rename the other's half-
// written bytes, or fail to rename its own), and a failed write leaves nothing.
#ifndef __EMSCRIPTEN__
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "gltrain/file_io.hpp"

namespace write_file_atomic_test {
namespace {

std::vector<std::string> filesStartingWith(const std::string& dir, const std::string& prefix) {
    std::vector<std::string> found;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* e = ::readdir(d))
            if (std::string(e->d_name).compare(0, prefix.size(), prefix) == 0) found.push_back(e->d_name);
        ::closedir(d);
    }
    return found;
}

TEST(WriteFileAtomic, ConcurrentWritersEachWriteWholeFiles) {
    const std::string dir = ::testing::TempDir();
    const std::string name = "gltrain_atomic_" + std::to_string(long(::getpid()));
    const std::string path = dir + "/" + name;
    const std::vector<uint8_t> a(1 << 16, 0xaa), b(1 << 16, 0xbb);
    std::atomic<int> failures{0};
    auto writer = [&](const std::vector<uint8_t>& bytes) {
        for (int i = 0; i < 40; ++i) {
            try {
                gltrain::writeFileAtomic(path, bytes, "test");
            } catch (const gltrain::IoError&) {
                ++failures;
            }
        }
    };
    std::thread first(writer, std::cref(a)), second(writer, std::cref(b));
    first.join();
    second.join();
    EXPECT_EQ(failures.load(), 0) << "a writer's rename failed: another took its temporary file";
    const std::vector<uint8_t> got = gltrain::readFile(path, "test");
    EXPECT_TRUE(got == a || got == b) << "the file mixes two writers' bytes";
    std::remove(path.c_str());
    EXPECT_TRUE(filesStartingWith(dir, name).empty()) << "temporary files were left behind";
}

TEST(WriteFileAtomic, AFailedWriteNamesThePathAndLeavesNothing) {
    const std::string path = ::testing::TempDir() + "/gltrain_no_such_dir/file";
    try {
        gltrain::writeFileAtomic(path, {1, 2, 3}, "test");
        ADD_FAILURE() << "writing into a missing directory succeeded";
    } catch (const gltrain::IoError& e) {
        EXPECT_NE(std::string(e.what()).find("test " + path + ": cannot create temporary file"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace write_file_atomic_test
#endif
