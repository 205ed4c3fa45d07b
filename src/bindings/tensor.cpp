// TensorImpl: matrices and their product, on the Context's backend.
#include <emscripten/bind.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"
#include "errors.hpp"
#include "gltrain/cpu/matmul.hpp"
#include "gltrain/host_matrix.hpp"
#include "gltrain/ops/matmul.hpp"
#include "gltrain/tensor.hpp"
#include "values.hpp"

namespace gltrain::js {
namespace {

// A matrix on the Context's backend: a texture on the GPU backends; host
// memory on the CPU backend (asked for, or chosen on a software renderer where
// a startup matmul ran faster on the CPU), where matmul runs cpu::matmul.
class TensorImpl {
public:
    ContextImpl* owner = nullptr;
    Tensor t;         // GPU backends
    HostMatrix host;  // the CPU backend
    bool hostMemory = false;

    // Decided when the tensor is made (by its context's backend), never inferred from `t`.
    bool onHost() const { return hostMemory; }

    static TensorImpl* create(ContextImpl& c, val rows, val cols, val data) {
        return guard([&]() -> TensorImpl* {
            val shape = val::object();
            shape.set("rows", rows);
            shape.set("cols", cols);
            Options o(shape, "Tensor", {"rows", "cols"});
            if (!o.has("rows") || !o.has("cols")) throw ArgumentError("Tensor: rows and cols are required");
            int r = int(o.integer("rows", 0, 1)), k = int(o.integer("cols", 0, 1));
            std::vector<float> v;
            if (!data.isUndefined() && !data.isNull()) {
                v = floatsFrom(data, "Tensor: data");
                if (v.size() != size_t(r) * size_t(k))
                    throw ArgumentError("Tensor: data has " + std::to_string(v.size()) + " values, a " +
                                        std::to_string(r) + "x" + std::to_string(k) + " tensor needs " +
                                        std::to_string(size_t(r) * k));
            }
            auto t = std::make_unique<TensorImpl>();
            t->owner = &c;
            if (c.ctx->backend() == Backend::Cpu) {
                t->hostMemory = true;
                t->host = v.empty() ? HostMatrix(r, k) : HostMatrix(r, k, std::move(v));
                return t.release();
            }
            c.makeCurrent();
            t->t = Tensor(*c.ctx, r, k, matmulLayout(*c.ctx, r));
            if (!v.empty()) t->t.upload(v);
            else t->t.clear();
            return t.release();
        });
    }
    int rows() const { return onHost() ? host.rows : t.rows(); }
    int cols() const { return onHost() ? host.cols : t.cols(); }
    std::string shapeString() const { return detail::shapeString(rows(), cols()); }
    void upload(val data) {
        guard([&] {
            std::vector<float> v = floatsFrom(data, "Tensor.upload: data");
            if (!onHost()) {
                owner->makeCurrent();
                return t.upload(v);
            }
            if (v.size() != host.data.size()) throw detail::uploadLengthError(v.size(), host.rows, host.cols);
            host.data = std::move(v);
        });
    }
    val download() {
        return guard([&] {
            if (onHost()) return float32Copy(host.data.data(), host.data.size());
            owner->makeCurrent();
            HostMatrix m = t.download();
            return float32Copy(m.data.data(), m.data.size());
        });
    }
    // out = op(a)·op(b); options {transA, transB}. Shapes and contexts are checked by the op.
    static void matmul(TensorImpl& a, TensorImpl& b, TensorImpl& out, val options) {
        guard([&] {
            Options o(options, "matmul", {"transA", "transB"});
            MatmulOptions m;
            m.transA = o.boolean("transA", false);
            m.transB = o.boolean("transB", false);
            // Checked first: tensors of two contexts may be on two backends.
            const std::pair<const char*, const TensorImpl*> operands[] = {{"A", &a}, {"B", &b}};
            for (auto& [name, x] : operands)
                if (x->owner != out.owner)
                    throw detail::differentContextsError("matmul", name, x->shapeString(), "C", out.shapeString());
            if (!out.onHost()) {
                out.owner->makeCurrent();
                return gltrain::matmul(a.t, b.t, out.t, m);
            }
            // The CPU backend: the GPU op's other checks, in its words.
            detail::validateMatmulShapes({a.rows(), a.cols()}, {b.rows(), b.cols()}, {out.rows(), out.cols()}, m.transA,
                                         m.transB);
            for (auto& [name, x] : operands)
                if (x == &out)
                    throw ArgumentError(std::string("matmul: an output is also input '") + name +
                                        "' (C shares its memory); write the product to another tensor");
            const int k = m.transA ? a.rows() : a.cols();
            // On the context's threads (Context::cpuThreads: Web Workers in the threaded build), the same bits.
            cpu::Workspace& ws = out.owner->workspace;
            ws.pool = &out.owner->ctx->cpuThreads();
            cpu::matmul(out.rows(), out.cols(), k, a.host.data.data(), a.cols(), m.transA, b.host.data.data(), b.cols(),
                        m.transB, out.host.data.data(), out.cols(), cpu::Epilogue{}, ws);
        });
    }
};

}  // namespace
}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_tensor) {
    using namespace emscripten;
    using gltrain::js::TensorImpl;
    class_<TensorImpl>("TensorImpl")
        .class_function("create", &TensorImpl::create, allow_raw_pointers())
        .function("rows", &TensorImpl::rows)
        .function("cols", &TensorImpl::cols)
        .function("upload", &TensorImpl::upload)
        .function("download", &TensorImpl::download)
        .class_function("matmul", &TensorImpl::matmul);
}
