// Pass: one kernel run = program + input tensors + uniforms + output tensor.
// Recorded once, run many times: uniform locations and the specialised
// program are resolved on the first run (and again only if a bound tensor's
// layout changes), so running a pass allocates nothing. Every pass renders
// through the context's single framebuffer, one full-screen triangle per
// output page with the viewport set to that page.
#pragma once
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "gltrain/context.hpp"
#include "gltrain/tensor.hpp"

namespace gltrain {

class Pass {
public:
    Pass() = default;
    Pass(Context& ctx, std::string kernel, Defines defines = {})
        : ctx_(&ctx), kernel_(std::move(kernel)), defines_(std::move(defines)) {
        const std::string& src = ctx.shaders().source(kernel_);  // throws for an unknown kernel
        for (auto& in : ShaderRegistry::declaredInputSpecs(src)) {
            inputNames_.push_back(in.name);
            optional_.push_back(in.optional);
        }
        if (inputNames_.size() + 1 > kKeyedTensors)
            throw ShaderError("Pass: kernel '" + kernel_ + "' declares " + std::to_string(inputNames_.size()) +
                              " inputs; a pass keys at most " + std::to_string(kKeyedTensors - 1));
        inputs_.assign(inputNames_.size(), nullptr);
        outputNames_ = ShaderRegistry::declaredOutputs(src);
        auto blocks = ShaderRegistry::headerList(src, "blocks");
        const std::string block = blocks.empty() ? "" : blocks[0];
        rowBlock_ = block == "rows4" ? 4 : block == "rows" ? -1 : 0;
        if (rowBlock_) outputNames_.clear();  // R0, R1, ... are the row layers of the one output
        if (ShaderRegistry::isCompute(src)) computeTile_ = ShaderRegistry::computeTile(kernel_, src);
        // A fragment kernel runs as a compute dispatch wherever compute kernels run
        // (or where its defines ask for it: TEXEL_COMPUTE 1; 0 keeps the fragment kernel):
        // on an H100/H200 a fragment pass runs on the few graphics-capable SMs
        // (bench/GPU.md). Its workgroups cover texels, not elements (dispatch).
        texelCompute_ = hasTexelCompute(defines_);
        if (!texelCompute_ && ctx.caps().computeKernels && ShaderRegistry::runsAsTexelCompute(src) &&
            std::none_of(defines_.begin(), defines_.end(), [](auto& kv) { return kv.first == "TEXEL_COMPUTE"; })) {
            defines_.push_back({"TEXEL_COMPUTE", "1"});
            texelCompute_ = true;
        }
        if (texelCompute_) computeTile_ = {1, kTexelComputeGroup};
        if (ShaderRegistry::isFeedback(src))
            feedbackBlock_ = ShaderRegistry::feedbackBlock(kernel_, src, definesBlock());
        outputs_.assign(std::max<size_t>(1, outputNames_.size()), nullptr);
    }

    const std::string& kernel() const { return kernel_; }
    // Whether the pass is a compute dispatch (a compute kernel, or a texel kernel built as one).
    bool isCompute() const { return computeTile_.first != 0; }
    Context& context() const { return *ctx_; }
    const Tensor* outputTensor() const { return output_(); }

    // Binds tensor `t` to the kernel input called `name` (from its "// inputs:" line).
    Pass& input(const std::string& name, const Tensor& t) {
        for (size_t i = 0; i < inputNames_.size(); ++i)
            if (inputNames_[i] == name) {
                requireContext("input '" + name + "'", t);
                inputs_[i] = &t;
                return *this;
            }
        std::string list;
        for (auto& n : inputNames_) list += (list.empty() ? "" : ", ") + n;
        throw ArgumentError("Pass '" + kernel_ + "': the kernel has no input '" + name +
                            "' (inputs: " + (list.empty() ? "none" : list) + ")");
    }
    // Leaves an optional input ("X?" in the header) unbound.
    Pass& unbind(const std::string& name) {
        for (size_t i = 0; i < inputNames_.size(); ++i)
            if (inputNames_[i] == name) inputs_[i] = nullptr;
        return *this;
    }
    Pass& output(Tensor& t) {
        if (!outputNames_.empty())
            throw ArgumentError("Pass '" + kernel_ + "': the kernel has named outputs; bind them with output(name, t)");
        requireContext("output", t);
        outputs_[0] = &t;
        return *this;
    }
    // Binds a named output of a multiple-render-target kernel ("// outputs: P, M").
    Pass& output(const std::string& name, Tensor& t) {
        for (size_t i = 0; i < outputNames_.size(); ++i)
            if (outputNames_[i] == name) {
                requireContext("output '" + name + "'", t);
                outputs_[i] = &t;
                return *this;
            }
        throw ArgumentError("Pass '" + kernel_ + "': the kernel has no output '" + name + "'");
    }

    // Draws only the texels that hold output columns [first, first + count); the output's other texels keep
    // what they held. Why: a step of a recurrent loop writes its own columns of a sequence, and rewriting the
    // whole sequence every step costs T times the work (a fragment kernel's texels; compute and feedback
    // kernels write whole outputs).
    Pass& columns(int first, int count) {
        if (texelCompute_) fragmentOnly();  // a compute dispatch writes whole outputs
        if (first < 0 || count < 1 || computeTile_.first || feedbackBlock_.first)
            throw ArgumentError("Pass '" + kernel_ + "': columns(" + std::to_string(first) + ", " +
                                std::to_string(count) + ") needs a fragment kernel, first >= 0 and count >= 1");
        columns_ = {first, count};
        return *this;
    }

    Pass& uniform(const std::string& name, float x) { return set(name, 'f', 1, x, 0, 0, 0); }
    Pass& uniform(const std::string& name, float x, float y) { return set(name, 'f', 2, x, y, 0, 0); }
    Pass& uniform(const std::string& name, float x, float y, float z) { return set(name, 'f', 3, x, y, z, 0); }
    Pass& uniform(const std::string& name, float x, float y, float z, float w) { return set(name, 'f', 4, x, y, z, w); }
    Pass& uniformInt(const std::string& name, int x) { return setInt(name, 1, x, 0, 0, 0); }
    Pass& uniformInt(const std::string& name, int x, int y) { return setInt(name, 2, x, y, 0, 0); }
    Pass& uniformInt(const std::string& name, int x, int y, int z) { return setInt(name, 3, x, y, z, 0); }
    Pass& uniformInt(const std::string& name, int x, int y, int z, int w) { return setInt(name, 4, x, y, z, w); }

    void run() {
        if (!ctx_) throw ArgumentError("Pass::run: the pass was default-made");
        ctx_->requireUsable("Pass::run");
        for (size_t o = 0; o < outputs_.size(); ++o) {
            if (!outputs_[o] || !*outputs_[o])
                throw ArgumentError("Pass '" + kernel_ + "': output " +
                                    (outputNames_.empty() ? std::string("tensor") : "'" + outputNames_[o] + "'") +
                                    " is not bound");
            if (!outputs_[o]->alive()) lostTensor("output", *outputs_[o]);
            if (outputs_[o]->isWindow())
                throw ArgumentError("Pass '" + kernel_ + "': output " + outputs_[o]->shapeString() +
                                    " is a row window of another tensor; a pass writes whole tensors");
            if (!outputs_[o]->renderable())
                throw ArgumentError(
                    "Pass '" + kernel_ + "': output " + outputs_[o]->shapeString() +
                    " is a sampled-only tensor (TensorUse::Sampled), which this context cannot render to");
            if (o > 0 && (outputs_[o]->rows() != output_()->rows() || outputs_[o]->cols() != output_()->cols() ||
                          outputs_[o]->layout() != output_()->layout()))
                throw ArgumentError("Pass '" + kernel_ + "': outputs '" + outputNames_[0] + "' and '" +
                                    outputNames_[o] + "' differ in shape or layout");
        }
        if (rowBlock_ == 4 && output_()->layout() != Layout::PackedRows4)
            throw ArgumentError("Pass '" + kernel_ +
                                "': the kernel writes 4-row blocks and needs a packed_rows4 output, got " +
                                layoutName(output_()->layout()));
        if (rowBlock_ < 0 && rowPhases(output_()->layout()) < 4)
            throw ArgumentError("Pass '" + kernel_ + "': the kernel writes row blocks and needs a packed_rows4 or " +
                                "packed_rows8 output, got " + layoutName(output_()->layout()));
        for (size_t i = 0; i < inputs_.size(); ++i) {
            if (optional_[i] && !inputs_[i]) continue;
            if (!inputs_[i] || !*inputs_[i])
                throw ArgumentError("Pass '" + kernel_ + "': input '" + inputNames_[i] + "' is not bound");
            if (!inputs_[i]->alive()) lostTensor("input '" + inputNames_[i] + "'", *inputs_[i]);
            for (auto* out : outputs_)
                if (inputs_[i]->texture() == out->texture())
                    throw ArgumentError("Pass '" + kernel_ + "': an output is also input '" + inputNames_[i] +
                                        "'; a pass never reads and writes one texture (use a PingPong pair)");
        }

        LayoutKey key = layoutKey();
        // A program of an older generation went with a lost context (and its registry entry with it).
        if (!program_ || key != programKey_ || programGeneration_ != ctx_->generation()) resolve(key);

        glUseProgram(program_->handle.get());
        glBindVertexArray(ctx_->vertexArray());
        glBindFramebuffer(GL_FRAMEBUFFER, ctx_->framebuffer());
        for (size_t i = 0, unit = 0; i < inputs_.size(); ++i) {
            if (!inputs_[i]) continue;
            const TexelGeometry& g = inputs_[i]->geometry();
            glActiveTexture(GLenum(GL_TEXTURE0 + unit));
            glBindTexture(textureTarget(g.layers()), inputs_[i]->texture());
            const auto& loc = program_->inputLocations[unit++];
            glUniform4i(loc.geom, g.rows, g.cols, g.pageWidth, g.pageHeight);
            glUniform1i(loc.pagesX, g.pagesX);
            if (inputs_[i]->isWindow()) glUniform1i(loc.row0, inputs_[i]->firstRow());
            if (loc.texScale >= 0) glUniform2f(loc.texScale, 1.0f / float(g.pageWidth), 1.0f / float(g.pageHeight));
        }
        for (const auto& u : uniforms_) {
            if (u.kind == 'f') {
                if (u.n == 1) glUniform1f(u.location, u.v[0]);
                else if (u.n == 2) glUniform2f(u.location, u.v[0], u.v[1]);
                else if (u.n == 3) glUniform3f(u.location, u.v[0], u.v[1], u.v[2]);
                else glUniform4f(u.location, u.v[0], u.v[1], u.v[2], u.v[3]);
            } else {
                if (u.n == 1) glUniform1i(u.location, u.iv[0]);
                else if (u.n == 2) glUniform2i(u.location, u.iv[0], u.iv[1]);
                else if (u.n == 3) glUniform3i(u.location, u.iv[0], u.iv[1], u.iv[2]);
                else glUniform4i(u.location, u.iv[0], u.iv[1], u.iv[2], u.iv[3]);
            }
        }
        const TexelGeometry& og = output_()->geometry();
        // out_geom.w: the blocks in a row of a feedback kernel's output (its blockOrigin()).
        const int blocksPerRow = feedbackBlock_.first ? feedbackBlocksPerRow(og) : 0;
        glUniform4i(program_->outGeom, og.rows, og.cols, og.texelsPerRow, blocksPerRow);
        if (computeTile_.first) {
            dispatch(og);
            return;
        }
        if (feedbackBlock_.first) {
            captureBlocks(og, blocksPerRow);
            return;
        }
        static const GLenum kDrawBuffers[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1, GL_COLOR_ATTACHMENT2,
                                              GL_COLOR_ATTACHMENT3, GL_COLOR_ATTACHMENT4, GL_COLOR_ATTACHMENT5,
                                              GL_COLOR_ATTACHMENT6, GL_COLOR_ATTACHMENT7};
        // Render targets: the named outputs, or the P row layers of a block kernel's output.
        const int phases = og.phases;
        const GLsizei n = rowBlock_ ? GLsizei(phases) : GLsizei(outputs_.size());
        if (n > ctx_->caps().maxDrawBuffers)
            throw UnsupportedError("Pass '" + kernel_ + "': writes " + std::to_string(n) +
                                   " render targets, more than " + "this device's MAX_DRAW_BUFFERS (" +
                                   std::to_string(ctx_->caps().maxDrawBuffers) + ")");
        if (n > 1) glDrawBuffers(n, kDrawBuffers);
        if (rowBlock_) {
            // One draw per page: each fragment writes rows Pg..Pg+P-1 to layers page*P + 0..P-1.
            glUniform2i(program_->outRowmap, phases, 0);
            for (int p = 0; p < og.pages(); ++p) {
                auto pr = og.pageRect(p * phases);
                const auto [x0, x1] = drawnTexels(og, pr);
                if (x0 >= x1) continue;
                for (GLsizei o = 0; o < n; ++o)
                    attachLayer(GLenum(GL_COLOR_ATTACHMENT0 + o), output_()->texture(), og.layers(), p * phases + o);
                glViewport(x0, 0, x1 - x0, pr.height);
                glUniform2i(program_->outOrigin, pr.x0, pr.y0);
                glDrawArrays(GL_TRIANGLES, 0, 3);
            }
        } else {
            // One draw per layer (page x row phase), each output attached at that layer.
            for (int l = 0; l < og.layers(); ++l) {
                auto pr = og.pageRect(l);
                const auto [x0, x1] = drawnTexels(og, pr);
                if (pr.height == 0 || x0 >= x1) continue;
                for (GLsizei o = 0; o < n; ++o)
                    attachLayer(GLenum(GL_COLOR_ATTACHMENT0 + o), outputs_[size_t(o)]->texture(), og.layers(), l);
                // A viewport that starts at x0: gl_FragCoord stays the page's texel column.
                glViewport(x0, 0, x1 - x0, pr.height);
                glUniform2i(program_->outOrigin, pr.x0, pr.y0);
                glUniform2i(program_->outRowmap, og.phases, pr.phase);
                glDrawArrays(GL_TRIANGLES, 0, 3);
            }
        }
        if (n > 1) {
            // Leave the framebuffer as single-output passes expect it: no stale
            // attachments that a later pass might sample (a feedback loop in WebGL).
            for (GLsizei o = 1; o < n; ++o)
                glFramebufferTextureLayer(GL_FRAMEBUFFER, GLenum(GL_COLOR_ATTACHMENT0 + o), 0, 0, 0);
            glDrawBuffers(1, kDrawBuffers);
        }
        if (ctx_->options().debugChecks) checkGl(("Pass '" + kernel_ + "'").c_str());
    }

private:
    // The texel columns [x0, x1) of a page that the pass draws: all of them, or those holding columns().
    std::pair<int, int> drawnTexels(const TexelGeometry& og, const TexelGeometry::PageRect& pr) const {
        if (!columns_.second) return {0, pr.width};
        const int vpt = og.valuesPerTexel();
        const int first = columns_.first / vpt, end = (columns_.first + columns_.second + vpt - 1) / vpt;
        return {std::clamp(first - pr.x0, 0, pr.width), std::clamp(end - pr.x0, 0, pr.width)};
    }

    // Back to the fragment kernel a pass was built as compute from (before its first run).
    void fragmentOnly() {
        for (auto& kv : defines_)
            if (kv.first == "TEXEL_COMPUTE") kv.second = "0";
        texelCompute_ = false;
        computeTile_ = {0, 0};
        program_ = nullptr;
    }

    // A compute kernel: the output texture array bound layered as image 0, enough
    // workgroups to cover it, and a barrier so that every later pass, read-back
    // or upload sees (and does not race) the image stores.
    void dispatch(const TexelGeometry& og) {
#if GLTRAIN_GL_COMPUTE
        if (ctx_->renderFormat() != GL_RGBA32F)
            throw UnsupportedError("Pass '" + kernel_ + "': compute kernels store RGBA32F; this context's backend is " +
                                   backendName(ctx_->backend()));
        glUniform4i(program_->outPages, og.pageWidth, og.pageHeight, og.pagesX, 0);
        // Layered for a texture array (image2DArray), the one level of a 2D texture (image2D).
        // Output i (all of one shape and layout) is image i.
        for (size_t o = 0; o < outputs_.size(); ++o)
            glBindImageTexture(GLuint(o), outputs_[o]->texture(), 0, og.layers() > 1 ? GL_TRUE : GL_FALSE, 0,
                               GL_WRITE_ONLY, GL_RGBA32F);
        if (texelCompute_) {
            // One invocation per texel (per row block of a block kernel), in the
            // program's groups (resolve: texelGroupX_ wide).
            const int block = rowBlock_ == 4 ? 4 : rowBlock_ < 0 ? og.phases : 1;
            const int gx = texelGroupX_, gy = kTexelComputeGroup / gx;
            glDispatchCompute(GLuint((og.texelsPerRow + gx - 1) / gx),
                              GLuint(((og.rows + block - 1) / block + gy - 1) / gy), 1);
        } else {
            glDispatchCompute(GLuint((og.cols + computeTile_.second - 1) / computeTile_.second),
                              GLuint((og.rows + computeTile_.first - 1) / computeTile_.first), 1);
        }
        glMemoryBarrier(GL_ALL_BARRIER_BITS);
        if (ctx_->options().debugChecks) checkGl(("Pass '" + kernel_ + "'").c_str());
#else
        (void)og;
        throw UnsupportedError("Pass '" + kernel_ + "': a compute kernel; WebGL2 has no compute shaders");
#endif
    }

    // A feedback kernel: one point per block, its vertex outputs captured into
    // the context's feedback buffer, then copied (a buffer-to-texture upload on
    // the device) into the output, whose texel rows hold one row of blocks each.
    int feedbackBlocksPerRow(const TexelGeometry& og) const {
        const int texelsPerBlock = feedbackBlock_.first * feedbackBlock_.second;
        if (og.paged() || og.phases != 1 || og.texelsPerRow % texelsPerBlock)
            throw ArgumentError("Pass '" + kernel_ + "': a feedback kernel's output must be an unpaged packed tensor " +
                                "whose texel rows hold whole blocks of " + std::to_string(texelsPerBlock) +
                                " texels; got " + output_()->shapeString() + " " + layoutName(output_()->layout()));
        return og.texelsPerRow / texelsPerBlock;
    }
    void captureBlocks(const TexelGeometry& og, int perRow) {
        const GLuint buffer = ctx_->feedbackBuffer(size_t(og.rows) * size_t(og.texelsPerRow) * 16);
        // Nothing is drawn, but a draw still needs a complete framebuffer, and WebGL
        // refuses one with a sampled texture attached (the last pass's output may be
        // an input): attach the output, which is not.
        attachLayer(GL_COLOR_ATTACHMENT0, output_()->texture(), og.layers(), 0);
        glEnable(GL_RASTERIZER_DISCARD);
        glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, buffer);
        glBeginTransformFeedback(GL_POINTS);
        glDrawArrays(GL_POINTS, 0, og.rows * perRow);
        glEndTransformFeedback();
        // Unbound from both the indexed and the generic binding: WebGL refuses a
        // buffer bound for transform feedback and for anything else at once.
        glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0);
        glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, 0);
        glDisable(GL_RASTERIZER_DISCARD);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, buffer);
        // An unpaged output without row phases (feedbackBlocksPerRow): a 2D texture.
        glBindTexture(GL_TEXTURE_2D, output_()->texture());
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, og.texelsPerRow, og.rows, GL_RGBA, GL_FLOAT, nullptr);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        if (ctx_->options().debugChecks) checkGl(("Pass '" + kernel_ + "'").c_str());
    }

    // A tensor whose texture went with a lost context: its name means nothing now.
    [[noreturn]] void lostTensor(const std::string& what, const Tensor& t) const {
        throw ContextLostError("Pass '" + kernel_ + "': " + what + " (" + t.shapeString() +
                               ") was lost with the GL context; make it again");
    }

    // A tensor of another context: its texture name would mean nothing (or
    // another texture) in this pass's context.
    void requireContext(const std::string& what, const Tensor& t) const {
        if (t && ctx_ && &t.context() != ctx_)
            throw ArgumentError("Pass '" + kernel_ + "': " + what + " (" + t.shapeString() +
                                ") belongs to another gltrain::Context than the pass");
    }

    struct UniformValue {
        std::string name;
        char kind;  // 'f' or 'i'
        int n;
        float v[4];
        int iv[4];  // int uniforms keep all 32 bits
        GLint location;
    };

    Pass& setInt(const std::string& name, int n, int x, int y, int z, int w) {
        set(name, 'i', n, 0, 0, 0, 0);
        for (auto& u : uniforms_)
            if (u.name == name) u.iv[0] = x, u.iv[1] = y, u.iv[2] = z, u.iv[3] = w;
        return *this;
    }

    Pass& set(const std::string& name, char kind, int n, float x, float y, float z, float w) {
        for (auto& u : uniforms_)
            if (u.name == name) {  // updating an existing uniform allocates nothing
                u.kind = kind;
                u.n = n;
                u.v[0] = x, u.v[1] = y, u.v[2] = z, u.v[3] = w;
                return *this;
            }
        if (!mentions(name)) throw ArgumentError("Pass '" + kernel_ + "': the kernel has no uniform '" + name + "'");
        const bool current = program_ && programGeneration_ == ctx_->generation();
        uniforms_.push_back(
            {name, kind, n, {x, y, z, w}, {0, 0, 0, 0}, current ? program_->uniformLocation(name) : -1});
        return *this;
    }

    // Whether the kernel or a library it uses mentions `name` (catches typos in uniform names).
    bool mentions(const std::string& name) const {
        const std::string& src = ctx_->shaders().source(kernel_);
        if (src.find(name) != std::string::npos) return true;
        for (auto& lib : ctx_->shaders().libraries(src))
            if (ctx_->shaders().source(lib).find(name) != std::string::npos) return true;
        return false;
    }

    // Bound, layout, paged and window bits per tensor (5; 12 tensors a word):
    // the specialisation key.
    using LayoutKey = std::array<uint64_t, 2>;
    static constexpr size_t kKeyedTensors = 24;  // inputs and the output
    LayoutKey layoutKey() const {
        LayoutKey k{0, 0};
        size_t n = 0;
        auto add = [&](const Tensor* t) {
            const uint64_t bits = uint64_t(t != nullptr) | uint64_t(t ? int(t->layout()) : 0) << 1 |
                                  uint64_t(t && t->geometry().paged()) << 3 | uint64_t(t && t->isWindow()) << 4;
            k[n / 12] |= bits << (5 * (n % 12));
            ++n;
        };
        for (auto* t : inputs_) add(t);
        add(output_());
        return k;
    }

    // The pass's own defines as "#define NAME VALUE" lines.
    std::string definesBlock() const {
        std::string d;
        for (auto& kv : defines_) d += "#define " + kv.first + " " + kv.second + "\n";
        return d;
    }

    void resolve(const LayoutKey& key) {
        std::string d = definesBlock();
        for (size_t i = 0; i < inputs_.size(); ++i) {
            d += "#define " + inputNames_[i] + "_BOUND " + (inputs_[i] ? "1" : "0") + "\n";
            if (!inputs_[i]) continue;
            d += "#define " + inputNames_[i] + "_PACKED " + (isPacked(inputs_[i]->layout()) ? "1" : "0") + "\n";
            d += "#define " + inputNames_[i] + "_PHASES " + std::to_string(inputs_[i]->geometry().phases) + "\n";
            d += "#define " + inputNames_[i] + "_PAGED " + (inputs_[i]->geometry().paged() ? "1" : "0") + "\n";
            d += "#define " + inputNames_[i] + "_WINDOW " + (inputs_[i]->isWindow() ? "1" : "0") + "\n";
        }
        d += std::string("#define OUT_PACKED ") + (isPacked(output_()->layout()) ? "1" : "0") + "\n";
        d += "#define OUT_PHASES " + std::to_string(output_()->geometry().phases) + "\n";
        if (computeTile_.first)
            d += std::string("#define OUT_PAGED ") + (output_()->geometry().paged() ? "1" : "0") + "\n";
        if (texelCompute_) {
            texelGroupX_ = texelGroupWidth(output_()->geometry().texelsPerRow);
            d += "#define TEXEL_GROUP_X " + std::to_string(texelGroupX_) + "\n#define TEXEL_GROUP_Y " +
                 std::to_string(kTexelComputeGroup / texelGroupX_) + "\n";
        }
        program_ = &ctx_->shaders().get(kernel_, d);
        programKey_ = key;
        programGeneration_ = ctx_->generation();
        for (auto& u : uniforms_) u.location = program_->uniformLocation(u.name);
    }

    Context* ctx_ = nullptr;
    std::string kernel_;
    Defines defines_;
    std::vector<std::string> inputNames_;
    std::vector<bool> optional_;
    std::vector<const Tensor*> inputs_;
    std::vector<std::string> outputNames_;
    std::vector<Tensor*> outputs_;  // one (unnamed) or the declared named outputs
    // "// blocks: rows4": 4 rows per fragment into one PackedRows4 output (4); "// blocks: rows":
    // one row per row phase of a PackedRows4 or PackedRows8 output (-1); else 0.
    int rowBlock_ = 0;
    std::pair<int, int> computeTile_{0, 0};    // a compute kernel's "// tile: R x C"; (0, 0) for a fragment kernel
    int texelGroupX_ = 1;                      // a texel compute program's workgroup width (resolve)
    bool texelCompute_ = false;                // a texel kernel built as compute (TEXEL_COMPUTE): tile in texels
    std::pair<int, int> feedbackBlock_{0, 0};  // a feedback kernel's "// block: R x C"; (0, 0) otherwise
    std::pair<int, int> columns_{0, 0};        // columns(first, count); count 0: the whole output
    Tensor* output_() const { return outputs_[0]; }
    std::vector<UniformValue> uniforms_;
    const Program* program_ = nullptr;
    LayoutKey programKey_{0, 0};
    uint64_t programGeneration_ = 0;
};

}  // namespace gltrain
