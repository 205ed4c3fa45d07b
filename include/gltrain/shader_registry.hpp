// ShaderRegistry: GLSL ES 3.00 kernels by name, compiled on first use and
// cached by (name, defines).
//
// A kernel file (shaders/<dir>/<name>.glsl, one kernel per file) is data: a
// header comment that names its inputs on a line "// inputs: A, B" (or
// "none"), then a main() written against helpers the registry generates in
// front of it — in the manner of tfjs-backend-webgl:
//
//   ivec2 outTexel()           texel of the output being computed: (x, row)
//   ivec2 outShape()           (rows, cols) of the output
//   void  setOutput(vec4 v)    writes the texel; packed padding lanes are zeroed
//   void  setY(vec4 v)         with "// outputs: Y, M" in the header: one setter per
//                              named output, written together through multiple render
//                              targets (all outputs share one shape and layout)
//   vec4  X_texel(int x, int y)  texel (x, y) of input X, across pages
//   float X_at(int r, int c)     element (r, c) of input X, whatever its layout
//   ivec2 X_shape()              (rows, cols) of input X
//   vec4  X_aligned()            X's values at the output texel's elements (same shape as
//                                the output; one fetch when the layouts agree)
//   X_PACKED, X_PAGED, OUT_PACKED  0/1 defines describing the bound tensors;
//   X_WINDOW                       1 when X is a row window of another tensor (X_texel adds
//                                  its first row, the uniform X_row0)
//   X_PHASES, OUT_PHASES           1, or 4 / 8 for PackedRows4 / 8 (rows interleaved over layers)
//   "// blocks: rows4" in the header: the kernel writes 4 consecutive rows per
//   fragment (outTexel() is the first, a multiple of 4) through outputs
//   R0..R3, bound to the 4 row layers of one PackedRows4 output tensor;
//   "// blocks: rows": the same for any row-interleaved output — P = OUT_PHASES
//   (4 or 8) rows through R0..R{P-1}, declared by the registry
//
// "// stage: compute" in the header: a compute shader (OpenGL ES 3.1, native
// only) instead of a fragment shader; the kernel declares its local size and
// "// tile: R x C" (output rows and columns one workgroup covers), reads its
// inputs through the same helpers and writes with
//   void  setTexel(int tx, int row, vec4 v)  texel tx of output row `row` (padding
//                                             lanes zeroed; outside the output: nothing)
//
// Any fragment kernel (one output texel per fragment, written with setOutput,
// set<NAME> or a row block's R0..) may also be built as a compute kernel when
// its defines hold TEXEL_COMPUTE 1 — Pass asks for it wherever compute kernels
// run (Capabilities::computeKernels). One invocation per output texel (or row
// block), kTexelComputeGroup of them to a workgroup of TEXEL_GROUP_X x
// TEXEL_GROUP_Y texels (Pass picks them for the output's width); named outputs
// are images 0, 1, ...; a row block's rows are stored into the one output's row
// layers; outTexel() is the invocation's texel; SKIP_TEXEL (discard in a
// fragment kernel, return in a compute one) leaves the texel unwritten. Why: on
// a GPU whose graphics pipeline runs on a few SMs (H100/H200), a compute
// dispatch uses every SM (bench/GPU.md).
//
// "// stage: feedback" in the header: a vertex shader whose outputs transform
// feedback captures (WebGL2 has no compute stage, and on SwiftShader a vertex
// may write 32 vec4s where a fragment writes 8). The kernel declares
// "// block: R x C" (R or C a number or the name of one of its defines): each
// vertex computes an R-row x C-texel block of a result,
// writes it to F0..F{RC-1} (F(p*C + j): row p, texel j) and finds its block with
//   ivec2 blockOrigin()  (first texel column, first row) of this vertex's block
// The pass copies the captured blocks, vertex by vertex, into its output: an
// unpaged Packed tensor with one row of blocks per texel row (see Pass).
//
// Layout and paging are compile-time defines, so each kernel is specialised
// for the tensors it runs on: the common unpaged case reads one texel of a
// sampler2D (texelFetch, or texture() at its centre where
// Capabilities::sampledFetch says so), the paged case maps texels to pages of a
// sampler2DArray with a division.
#pragma once
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gltrain/handle.hpp"
#include "gltrain/shader_source.hpp"

namespace gltrain {

using Defines = std::vector<std::pair<std::string, std::string>>;

// The workgroup of a fragment kernel built as a compute kernel: invocations,
// one per output texel (or row block), TEXEL_GROUP_X texels wide, as many as
// the output's texel rows have up to 64, and kTexelComputeGroup / TEXEL_GROUP_X
// tall. Why 2D: on an H200 the big MLP's Adam updates (512-texel rows) took
// 0.075 ms in 256 x 1 groups against 0.048 in 64 x 4; and an output two texels
// wide (a filter gradient) would leave most of a 64-wide group idle.
constexpr int kTexelComputeGroup = 256;
inline int texelGroupWidth(int texelsPerRow) {
    int x = 1;
    while (x < 64 && x < texelsPerRow) x *= 2;
    return x;
}
inline bool hasTexelCompute(const Defines& d) {
    for (auto& kv : d)
        if (kv.first == "TEXEL_COMPUTE" && kv.second == "1") return true;
    return false;
}

// A linked kernel and the locations of its generated uniforms.
struct Program {
    std::string name;     // kernel name, e.g. "forward/add"
    std::string defines;  // the #define block it was specialised with
    ProgramHandle handle;
    std::vector<std::string> inputs;  // sampler i is bound to texture unit i
    struct InputLocations {
        GLint geom = -1;      // ivec4 (rows, cols, pageWidth, pageHeight)
        GLint pagesX = -1;    // int
        GLint row0 = -1;      // int: a row window's first row (X_WINDOW)
        GLint texScale = -1;  // vec2: 1 / (pageWidth, pageHeight) (fragment and feedback kernels)
    };
    std::vector<InputLocations> inputLocations;
    GLint outGeom = -1;    // ivec4 (rows, cols, texelsPerRow, 0)
    GLint outOrigin = -1;  // ivec2 texel origin of the page being rendered
    GLint outRowmap = -1;  // ivec2 (phases, phase) of the layer being rendered
    GLint outPages = -1;   // compute: ivec4 (pageWidth, pageHeight, pagesX, 0) of the output

    GLint uniformLocation(const std::string& uniform) const {
        return glGetUniformLocation(handle.get(), uniform.c_str());
    }
};

class ShaderRegistry {
public:
    // sampledFetch: fragment and vertex kernels read texels with texture() instead
    // of texelFetch (Capabilities::sampledFetch).
    explicit ShaderRegistry(bool sampledFetch = false) : sampledFetch_(sampledFetch) {
        for (const auto& s : embeddedShaders()) sources_[s.name] = s.source;
    }

    // Registers (or replaces) a kernel that is not among the embedded ones.
    void add(const std::string& name, const std::string& source) {
        sources_[name] = source;
        for (auto it = cache_.begin(); it != cache_.end();)
            it = it->second->name == name ? cache_.erase(it) : std::next(it);
    }
    bool has(const std::string& name) const { return sources_.count(name) != 0; }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (auto& kv : sources_) out.push_back(kv.first);
        return out;
    }
    const std::string& source(const std::string& name) const {
        auto it = sources_.find(name);
        if (it == sources_.end()) throw ShaderError("ShaderRegistry: no kernel named '" + name + "'");
        return it->second;
    }
    size_t compiledCount() const { return cache_.size(); }

    // The GL context is gone with its programs: forget them without deleting
    // (the names may already stand for new objects). The kernel sources stay,
    // added ones included, and compile again on first use.
    void abandon() {
        for (auto& kv : cache_) kv.second->handle.release();
        cache_.clear();
        vs_.release();
        discardFs_.release();
    }

    // The inputs a kernel declares in its header ("// inputs: A, B, BIAS?");
    // a trailing '?' marks an optional input (the kernel tests X_BOUND).
    struct DeclaredInput {
        std::string name;
        bool optional = false;
    };
    static std::vector<DeclaredInput> declaredInputSpecs(const std::string& src) {
        std::vector<DeclaredInput> out;
        for (auto& n : declaredInputs(src)) {
            bool opt = !n.empty() && n.back() == '?';
            out.push_back({opt ? n.substr(0, n.size() - 1) : n, opt});
        }
        return out;
    }

    // The kernels a kernel builds on ("// uses: lib/activation"): library files
    // without main() that are pasted in front of it, in order (a library may
    // use others; see libraries()).
    static std::vector<std::string> declaredUses(const std::string& src) { return headerList(src, "uses"); }
    // Every library a kernel needs, its libraries' own "uses" included, each once
    // and after the libraries it uses: the order they are pasted in.
    std::vector<std::string> libraries(const std::string& src) const {
        std::vector<std::string> out;
        addLibraries(src, out, 0);
        return out;
    }

    // The named outputs a kernel declares ("// outputs: P, M, V"); empty for the
    // usual single output written with setOutput().
    static std::vector<std::string> declaredOutputs(const std::string& src) { return headerList(src, "outputs"); }

    // Whether a kernel is a compute shader ("// stage: compute").
    static bool isCompute(const std::string& src) { return stage(src) == "compute"; }
    static bool isFeedback(const std::string& src) { return stage(src) == "feedback"; }
    // Whether a kernel may run as a compute kernel of one invocation per output
    // texel (TEXEL_COMPUTE): every fragment kernel may.
    static bool runsAsTexelCompute(const std::string& src) { return !isCompute(src) && !isFeedback(src); }
    // The output rows one invocation of a fragment kernel writes: 4 for "// blocks:
    // rows4", the output's row phases for "// blocks: rows" (as a GLSL expression), else 1.
    static std::string rowBlock(const std::string& src) {
        auto blocks = headerList(src, "blocks");
        if (blocks.empty()) return "1";
        return blocks[0] == "rows4" ? "4" : "OUT_PHASES";
    }

    // A compute kernel's "// tile: R x C": the output rows and columns (elements)
    // one workgroup covers; the pass dispatches enough workgroups to cover the output.
    static std::pair<int, int> computeTile(const std::string& name, const std::string& src) {
        return headerSize(name, src, "tile");
    }
    // A feedback kernel's "// block: R x C": the rows and column texels one vertex computes
    // (R or C may name one of `defines`, "#define NAME VALUE" lines).
    static std::pair<int, int> feedbackBlock(const std::string& name, const std::string& src,
                                             const std::string& defines = "") {
        return headerSize(name, src, "block", defines);
    }

    // The raw input list of a kernel's header, '?' markers included.
    static std::vector<std::string> declaredInputs(const std::string& src) { return headerList(src, "inputs"); }

    // "// stage: compute" / "feedback"; empty for a fragment kernel.
    static std::string stage(const std::string& src) {
        auto v = headerList(src, "stage");
        return v.empty() ? "" : v[0];
    }

    // A header line "// key: R x C" (both >= 1), or a ShaderError naming the kernel.
    // R or C may name a define ("// block: BLOCK_ROWS x 2"), looked up in
    // `defines` (a block of "#define NAME VALUE" lines).
    static std::pair<int, int> headerSize(const std::string& name, const std::string& src, const std::string& key,
                                          const std::string& defines = "") {
        const std::regex re("//\\s*" + key + ":\\s*(\\w+)\\s*x\\s*(\\w+)");
        std::smatch m;
        auto bad = [&](const std::string& why) {
            return ShaderError("ShaderRegistry: " + stage(src) + " kernel '" + name + "' " + why);
        };
        if (!std::regex_search(src, m, re)) throw bad("has no '// " + key + ": R x C' header line");
        auto value = [&](const std::string& token) {
            std::string v = token;
            if (!std::isdigit(static_cast<unsigned char>(token[0]))) {
                std::smatch d;
                if (!std::regex_search(defines, d, std::regex("#define " + token + " (\\d+)\n")))
                    throw bad("names " + token + " in its '// " + key + ":' line, which its defines do not set");
                v = d[1].str();
            }
            if (v.find_first_not_of("0123456789") != std::string::npos || v.size() > 6 || std::stoi(v) < 1)
                throw bad("has '" + token + "' in its '// " + key + ":' line; a size >= 1 is expected");
            return std::stoi(v);
        };
        return {value(m[1].str()), value(m[2].str())};
    }

    static std::vector<std::string> headerList(const std::string& src, const std::string& key) {
        std::istringstream in(src);
        std::string line;
        const std::regex re("^\\s*//\\s*" + key + ":\\s*(.*)$");
        std::smatch m;
        while (std::getline(in, line)) {
            if (!std::regex_match(line, m, re)) continue;
            std::vector<std::string> names;
            std::istringstream list(m[1].str());
            std::string n;
            while (std::getline(list, n, ',')) {
                n.erase(0, n.find_first_not_of(" \t"));
                n.erase(n.find_last_not_of(" \t\r") + 1);
                if (n.empty() || n == "none") continue;
                static const std::regex ident(R"([A-Za-z_][A-Za-z0-9_/]*\??)");
                if (!std::regex_match(n, ident))
                    throw ShaderError("ShaderRegistry: bad name '" + n + "' in the kernel header line '" + line +
                                      "' (a comma-separated list of identifiers is expected)");
                names.push_back(n);
            }
            return names;
        }
        return {};
    }

    // `defines` is a block of "#define NAME VALUE" lines (layout defines included,
    // and X_BOUND for every declared input); the pair (name, defines) is the cache
    // key. Only bound inputs get samplers: sampler i is the i-th bound input.
    const Program& get(const std::string& name, const std::string& defines) {
        std::string key = name + '\n' + defines;
        auto it = cache_.find(key);
        if (it != cache_.end()) return *it->second;
        auto p = build(name, defines);
        return *cache_.emplace(std::move(key), std::move(p)).first->second;
    }

private:
    void addLibraries(const std::string& src, std::vector<std::string>& out, int depth) const {
        if (depth > 16) throw ShaderError("ShaderRegistry: the libraries' \"uses\" lines go round in a cycle");
        for (auto& lib : declaredUses(src)) {
            if (std::find(out.begin(), out.end(), lib) != out.end()) continue;
            addLibraries(source(lib), out, depth + 1);
            if (std::find(out.begin(), out.end(), lib) == out.end()) out.push_back(lib);
        }
    }

    enum class Stage { Fragment, Feedback, Compute };

    static std::string inputHelpers(const std::string& x, Stage stage, bool sampledFetch) {
        // The paged path maps a texel to (page column, page row) with a division;
        // the unpaged one is a single fetch: texelFetch, or with sampledFetch
        // texture() at the texel's centre (NEAREST, one level: the same texel; on
        // SwiftShader it costs less, see ContextOptions::fetch). Compute kernels
        // have no implicit level and always use texelFetch.
        const bool sampled = sampledFetch && stage != Stage::Compute;
        // One layer is a TEXTURE_2D (textureTarget), more a TEXTURE_2D_ARRAY.
        std::string s;
        s += "#define " + x + "_LAYERED (" + x + "_PAGED || " + x + "_PHASES > 1)\n";
        s += "#if " + x + "_LAYERED\n";
        s += "uniform highp sampler2DArray " + x + ";\n";
        s += "#else\n";
        s += "uniform highp sampler2D " + x + ";\n";
        s += "#endif\n";
        s += "uniform ivec4 " + x + "_geom;\n";
        s += "uniform int " + x + "_pagesX;\n";
        if (sampled) s += "uniform vec2 " + x + "_texScale;  // 1 / (page width, page height)\n";
        s += "ivec2 " + x + "_shape() { return " + x + "_geom.xy; }\n";
        s += "#if " + x + "_WINDOW\n";
        s += "uniform int " + x + "_row0;\n";
        s += "#endif\n";
        s += "vec4 " + x + "_texel(int tx, int ty) {\n";
        s += "#if " + x + "_WINDOW\n";
        s += "  ty += " + x + "_row0;\n";
        s += "#endif\n";
        s += "#if " + x + "_PHASES == 4\n";
        s += "  int gy = ty >> 2, ph = ty & 3;\n";
        s += "#elif " + x + "_PHASES == 8\n";
        s += "  int gy = ty >> 3, ph = ty & 7;\n";
        s += "#else\n";
        s += "  int gy = ty, ph = 0;\n";
        s += "#endif\n";
        s += "#if " + x + "_PAGED\n";
        s += "  int px = tx / " + x + "_geom.z; int py = gy / " + x + "_geom.w;\n";
        s += "  tx -= px * " + x + "_geom.z; gy -= py * " + x + "_geom.w; ph += (py * " + x + "_pagesX + px) * " + x +
             "_PHASES;\n";
        s += "#endif\n";
        s += "#if " + x + "_LAYERED\n";
        if (sampled) s += "  return texture(" + x + ", vec3((vec2(tx, gy) + 0.5) * " + x + "_texScale, float(ph)));\n";
        else s += "  return texelFetch(" + x + ", ivec3(tx, gy, ph), 0);\n";
        s += "#else\n";
        if (sampled) s += "  return texture(" + x + ", (vec2(tx, gy) + 0.5) * " + x + "_texScale);\n";
        else s += "  return texelFetch(" + x + ", ivec2(tx, gy), 0);\n";
        s += "#endif\n}\n";
        s += "float " + x + "_at(int r, int c) {\n";
        s += "#if " + x + "_PACKED\n";
        s += "  return " + x + "_texel(c >> 2, r)[c & 3];\n";
        s += "#else\n";
        s += "  return " + x + "_texel(c, r).x;\n";
        s += "#endif\n}\n";
        if (stage == Stage::Feedback) return s;  // no output texel of its own
        // The values of X at the elements of the output texel being computed (X has
        // the output's shape): one fetch when the layouts agree, lane by lane otherwise.
        s += "vec4 " + x + "_aligned() {\n";
        s += "  ivec2 t = outTexel();\n";
        s += "#if " + x + "_PACKED == OUT_PACKED\n";
        s += "  return " + x + "_texel(t.x, t.y);\n";
        s += "#elif OUT_PACKED\n";
        s += "  int c = t.x * 4, last = " + x + "_geom.y - 1;\n";
        s += "  return vec4(" + x + "_at(t.y, c), " + x + "_at(t.y, min(c + 1, last)), " + x +
             "_at(t.y, min(c + 2, last)), " + x + "_at(t.y, min(c + 3, last)));\n";
        s += "#else\n";
        s += "  return vec4(" + x + "_at(t.y, t.x), 0.0, 0.0, 0.0);\n";
        s += "#endif\n}\n";
        return s;
    }

    // The outputs a kernel writes: the declared ones, or for a row-block kernel
    // ("// blocks: rows") R0..R{P-1}, one per row phase P of its output.
    static std::vector<std::string> renderTargets(const std::string& body, const std::string& defines) {
        auto blocks = headerList(body, "blocks");
        if (blocks.empty() || blocks[0] != "rows") return declaredOutputs(body);
        static const std::regex re("#define OUT_PHASES (\\d+)\n");
        std::smatch m;
        const int phases = std::regex_search(defines, m, re) ? std::stoi(m[1].str()) : 1;
        std::vector<std::string> out;
        for (int i = 0; i < phases; ++i) out.push_back("R" + std::to_string(i));
        return out;
    }

    static std::string prelude(const std::string& defines, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs, bool sampledFetch) {
        std::string s =
            "#version 300 es\n"
            "precision highp float;\n"
            "precision highp int;\n"
            "precision highp sampler2D;\n"
            "precision highp sampler2DArray;\n";
        s += defines;
        s += "uniform ivec4 out_geom;\n"
             "uniform ivec2 out_origin;\n"
             "uniform ivec2 out_rowmap;  // (phases, phase): texel row y holds row y * phases + phase\n"
             "ivec2 outTexel() {\n"
             "  ivec2 g = ivec2(gl_FragCoord.xy) + out_origin;\n"
             "  return ivec2(g.x, g.y * out_rowmap.x + out_rowmap.y);\n"
             "}\n"
             "ivec2 outShape() { return out_geom.xy; }\n"
             "#define SKIP_TEXEL discard\n"
             "vec4 gltrain_mask(vec4 v) {\n"
             "#if OUT_PACKED\n"
             "  int c0 = outTexel().x * 4;\n"
             "  // mix with a bvec selects without arithmetic, so a NaN in padding cannot leak.\n"
             "  return mix(vec4(0.0), v, lessThan(ivec4(c0, c0 + 1, c0 + 2, c0 + 3), ivec4(out_geom.y)));\n"
             "#else\n"
             "  return vec4(v.x, 0.0, 0.0, 0.0);\n"
             "#endif\n"
             "}\n";
        if (outputs.empty()) {
            s += "layout(location = 0) out vec4 gltrain_out;\n"
                 "void setOutput(vec4 v) { gltrain_out = gltrain_mask(v); }\n";
        }
        for (size_t i = 0; i < outputs.size(); ++i) {
            s += "layout(location = " + std::to_string(i) + ") out vec4 gltrain_out_" + outputs[i] + ";\n";
            s += "void set" + outputs[i] + "(vec4 v) { gltrain_out_" + outputs[i] + " = gltrain_mask(v); }\n";
        }
        for (auto& x : inputs) s += inputHelpers(x, Stage::Fragment, sampledFetch);
        return s;
    }

    // A compute kernel's prelude: the output is one image (the output tensor's
    // texture, bound to image unit 0: image2D, or layered image2DArray) written
    // through setTexel(). A fragment kernel built as compute (`texel`) also gets
    // its local size, outTexel() from the invocation (computePostlude sets it),
    // setOutput() or one image and set<NAME>() per named output (image unit i
    // for output i) — or, for a row-block kernel (`rowBlock` rows per
    // invocation), R0..R{P-1} storing rows t.y + i of the one output — and its
    // main() renamed, for computePostlude's to call inside the output.
    static std::string computePrelude(const std::string& defines, const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& outputs = {}, bool texel = false,
                                      const std::string& rowBlock = "1") {
        std::string s =
            "#version 310 es\n"
            "precision highp float;\n"
            "precision highp int;\n"
            "precision highp sampler2D;\n"
            "precision highp sampler2DArray;\n"
            "precision highp image2D;\n"
            "precision highp image2DArray;\n";
        s += defines;
        s += "uniform ivec4 out_geom;   // (rows, cols, texelsPerRow, 0)\n"
             "uniform ivec4 out_pages;  // (pageWidth, pageHeight, pagesX, 0)\n"
             "ivec2 outShape() { return out_geom.xy; }\n";
        if (texel)
            s += "ivec2 gltrain_texel;  // (texel x, first row): set by main()\n"
                 "ivec2 outTexel() { return gltrain_texel; }\n"
                 "#define GLTRAIN_ROW_BLOCK (" +
                 rowBlock + ")\n";
        else s += "ivec2 outTexel() { return ivec2(gl_GlobalInvocationID.xy); }\n";
        // The image `image` at `binding` and its store function `fn(tx, row, v)`.
        auto store = [](const std::string& fn, const std::string& image, size_t binding) {
            const std::string b = std::to_string(binding);
            return "#if OUT_PAGED || OUT_PHASES > 1\n"
                   "layout(rgba32f, binding = " +
                   b + ") writeonly uniform highp image2DArray " + image +
                   ";\n"
                   "#else\n"
                   "layout(rgba32f, binding = " +
                   b + ") writeonly uniform highp image2D " + image +
                   ";\n"
                   "#endif\n"
                   "void " +
                   fn +
                   "(int tx, int row, vec4 v) {\n"
                   "  if (tx >= out_geom.z || row >= out_geom.x) return;\n"
                   "#if OUT_PACKED\n"
                   "  int c0 = tx * 4;\n"
                   "  v = mix(vec4(0.0), v, lessThan(ivec4(c0, c0 + 1, c0 + 2, c0 + 3), ivec4(out_geom.y)));\n"
                   "#else\n"
                   "  v = vec4(v.x, 0.0, 0.0, 0.0);\n"
                   "#endif\n"
                   "#if OUT_PHASES == 4\n"
                   "  int gy = row >> 2, ph = row & 3;\n"
                   "#elif OUT_PHASES == 8\n"
                   "  int gy = row >> 3, ph = row & 7;\n"
                   "#else\n"
                   "  int gy = row, ph = 0;\n"
                   "#endif\n"
                   "#if OUT_PAGED\n"
                   "  int px = tx / out_pages.x, py = gy / out_pages.y;\n"
                   "  imageStore(" +
                   image +
                   ", ivec3(tx - px * out_pages.x, gy - py * out_pages.y, (py * out_pages.z + px) * OUT_PHASES + ph), v);\n"
                   "#elif OUT_PHASES > 1\n"
                   "  imageStore(" +
                   image +
                   ", ivec3(tx, gy, ph), v);\n"
                   "#else\n"
                   "  imageStore(" +
                   image +
                   ", ivec2(tx, gy), v);\n"
                   "#endif\n"
                   "}\n";
        };
        const bool rows = texel && rowBlock != "1";
        if (outputs.empty() || rows) s += store("setTexel", "gltrain_out", 0);
        for (size_t i = 0; i < outputs.size(); ++i)
            s += rows ? "void set" + outputs[i] + "(vec4 v) { ivec2 t = outTexel(); setTexel(t.x, t.y + " +
                            std::to_string(i) + ", v); }\n"
                      : store("gltrain_store_" + outputs[i], "gltrain_out_" + outputs[i], i) + "void set" + outputs[i] +
                            "(vec4 v) { ivec2 t = outTexel(); gltrain_store_" + outputs[i] + "(t.x, t.y, v); }\n";
        if (texel) {
            s += "layout(local_size_x = TEXEL_GROUP_X, local_size_y = TEXEL_GROUP_Y) in;\n";
            if (outputs.empty()) s += "void setOutput(vec4 v) { ivec2 t = outTexel(); setTexel(t.x, t.y, v); }\n";
            s += "#define SKIP_TEXEL return\n";
        }
        for (auto& x : inputs) s += inputHelpers(x, Stage::Compute, false);
        if (texel) s += "#define main gltrain_texel_main\n";  // after the helpers, before the libraries and body
        return s;
    }
    // A fragment kernel built as compute: invocation (x, y) is texel x of the
    // output's texel row y (a row-block kernel's: of its block y of
    // GLTRAIN_ROW_BLOCK rows); main() runs the kernel's for those inside the output only.
    static std::string computePostlude() {
        return "\n#undef main\n"
               "void main() {\n"
               "  gltrain_texel = ivec2(gl_GlobalInvocationID.xy) * ivec2(1, GLTRAIN_ROW_BLOCK);\n"
               "  if (gltrain_texel.x >= out_geom.z || gltrain_texel.y >= out_geom.x) return;\n"
               "  gltrain_texel_main();\n"
               "}\n";
    }

    // A feedback kernel's prelude: the block helpers and the captured outputs F0..F{RC-1}.
    static std::string feedbackPrelude(const std::string& defines, const std::vector<std::string>& inputs,
                                       std::pair<int, int> block, bool sampledFetch) {
        std::string s =
            "#version 300 es\n"
            "precision highp float;\n"
            "precision highp int;\n"
            "precision highp sampler2D;\n"
            "precision highp sampler2DArray;\n";
        s += defines;
        s += "#define FB_ROWS " + std::to_string(block.first) + "\n#define FB_COLS " + std::to_string(block.second) +
             "\n";
        s += "uniform ivec4 out_geom;  // the pass's output: (rows, cols, texelsPerRow, blocks per row)\n"
             "ivec2 blockOrigin() {\n"
             "  return ivec2((gl_VertexID % out_geom.w) * FB_COLS, (gl_VertexID / out_geom.w) * FB_ROWS);\n"
             "}\n";
        for (int i = 0; i < block.first * block.second; ++i) s += "out vec4 F" + std::to_string(i) + ";\n";
        for (auto& x : inputs) s += inputHelpers(x, Stage::Feedback, sampledFetch);
        return s;
    }

    static int countLines(const std::string& s) {
        int n = 0;
        for (char c : s) n += c == '\n';
        return n;
    }

public:
    // Quotes the kernel lines a driver log points at (public for its tests). Mesa
    // writes "0:12(5): error", ANGLE / SwiftShader "ERROR: 0:12: ...", both
    // "<string>:<line>"; NVIDIA "0(12) : error C1503: ...", "<string>(<line>)".
    static std::string quoteBadLines(const std::string& log, const std::string& body, int preludeLines,
                                     const std::string& name) {
        std::vector<std::string> lines;
        std::istringstream in(body);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        static const std::regex re(R"((?:^|\s)\d+(?::(\d+)(?:\(\d+\))?:|\((\d+)\) ?:))");
        std::set<int> seen;
        std::string out;
        for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
            int line = std::stoi((*it)[(*it)[1].matched ? 1 : 2].str()) - preludeLines;
            if (!seen.insert(line).second) continue;
            if (line >= 1 && line <= int(lines.size()))
                out += "  shaders/" + name + ".glsl:" + std::to_string(line) + ": " + lines[size_t(line - 1)] + "\n";
            else out += "  (line " + std::to_string(line + preludeLines) + " of the generated prelude)\n";
        }
        return out;
    }

private:
    static std::string definesList(const std::string& defines) {
        std::string s = defines;
        for (size_t p; (p = s.find("#define ")) != std::string::npos;) s.erase(p, 8);
        for (char& c : s)
            if (c == '\n') c = ';';
        return s.empty() ? "none" : s;
    }

    GLuint vertexShader() {
        if (vs_) return vs_.get();
        static const char* src =
            "#version 300 es\n"
            "// The full-screen triangle: (-1,-1), (3,-1), (-1,3); no vertex buffer needed.\n"
            "void main() {\n"
            "  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
            "  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
            "}\n";
        vs_ = ShaderObjectHandle(glCreateShader(GL_VERTEX_SHADER));
        glShaderSource(vs_.get(), 1, &src, nullptr);
        glCompileShader(vs_.get());
        GLint ok = 0;
        glGetShaderiv(vs_.get(), GL_COMPILE_STATUS, &ok);
        if (!ok)
            throw ShaderError("ShaderRegistry: the full-screen vertex shader failed to compile:\n" +
                              shaderLog(vs_.get()));
        return vs_.get();
    }

    // The fragment stage a feedback kernel links with: nothing is rasterized (RASTERIZER_DISCARD).
    GLuint discardFragmentShader() {
        if (discardFs_) return discardFs_.get();
        static const char* src =
            "#version 300 es\n"
            "precision mediump float;\n"
            "out vec4 unused;\n"
            "void main() { unused = vec4(0.0); }\n";
        discardFs_ = ShaderObjectHandle(glCreateShader(GL_FRAGMENT_SHADER));
        glShaderSource(discardFs_.get(), 1, &src, nullptr);
        glCompileShader(discardFs_.get());
        GLint ok = 0;
        glGetShaderiv(discardFs_.get(), GL_COMPILE_STATUS, &ok);
        if (!ok)
            throw ShaderError("ShaderRegistry: the feedback kernels' fragment shader failed to compile:\n" +
                              shaderLog(discardFs_.get()));
        return discardFs_.get();
    }

    static std::string shaderLog(GLuint sh) {
        GLint n = 0;
        glGetShaderiv(sh, GL_INFO_LOG_LENGTH, &n);
        std::string log(size_t(n > 0 ? n : 1), '\0');
        glGetShaderInfoLog(sh, n, nullptr, &log[0]);
        log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
        return log;
    }

    std::unique_ptr<Program> build(const std::string& name, const std::string& defines) {
        const std::string& body = source(name);
        auto p = std::make_unique<Program>();
        p->name = name;
        p->defines = defines;
        for (auto& in : declaredInputSpecs(body))
            if (!in.optional || defines.find("#define " + in.name + "_BOUND 1\n") != std::string::npos)
                p->inputs.push_back(in.name);
        const bool texel = defines.find("#define TEXEL_COMPUTE 1\n") != std::string::npos;
        if (texel && !runsAsTexelCompute(body))
            throw ShaderError("ShaderRegistry: kernel '" + name +
                              "' was asked for as a fragment kernel built as compute (TEXEL_COMPUTE) but it is a " +
                              stage(body) + " kernel");
        const bool compute = isCompute(body) || texel;
#if !GLTRAIN_GL_COMPUTE
        if (compute)
            throw UnsupportedError("ShaderRegistry: kernel '" + name +
                                   "' is a compute shader; this build (WebGL2) has none");
#endif
        const bool feedback = isFeedback(body);
        std::pair<int, int> block{0, 0};
        if (feedback) block = feedbackBlock(name, body, defines);
        std::string pre = compute    ? computePrelude(defines, p->inputs,
                                                   texel ? renderTargets(body, defines) : std::vector<std::string>{},
                                                      texel, rowBlock(body))
                          : feedback ? feedbackPrelude(defines, p->inputs, block, sampledFetch_)
                                     : prelude(defines, p->inputs, renderTargets(body, defines), sampledFetch_);
        for (auto& lib : libraries(body)) pre += source(lib) + "\n";
        std::string full = pre + body + (texel ? computePostlude() : "");
        const char* src = full.c_str();

#if GLTRAIN_GL_COMPUTE
        ShaderObjectHandle fs(glCreateShader(compute    ? GL_COMPUTE_SHADER
                                             : feedback ? GL_VERTEX_SHADER
                                                        : GL_FRAGMENT_SHADER));
#else
        ShaderObjectHandle fs(glCreateShader(feedback ? GL_VERTEX_SHADER : GL_FRAGMENT_SHADER));
#endif
        glShaderSource(fs.get(), 1, &src, nullptr);
        glCompileShader(fs.get());
        GLint ok = 0;
        glGetShaderiv(fs.get(), GL_COMPILE_STATUS, &ok);
        if (!ok) {
            std::string log = shaderLog(fs.get());
            throw ShaderError("ShaderRegistry: kernel '" + name + "' (defines: " + definesList(defines) +
                              ") failed to compile:\n" + log + (log.empty() || log.back() == '\n' ? "" : "\n") +
                              quoteBadLines(log, body, countLines(pre), name));
        }
        p->handle = ProgramHandle::create();
        if (feedback) {
            glAttachShader(p->handle.get(), discardFragmentShader());
            std::vector<std::string> names;
            for (int i = 0; i < block.first * block.second; ++i) names.push_back("F" + std::to_string(i));
            std::vector<const char*> ptrs;
            for (auto& n : names) ptrs.push_back(n.c_str());
            glTransformFeedbackVaryings(p->handle.get(), GLsizei(ptrs.size()), ptrs.data(), GL_INTERLEAVED_ATTRIBS);
        } else if (!compute) {
            glAttachShader(p->handle.get(), vertexShader());
        }
        glAttachShader(p->handle.get(), fs.get());
        glLinkProgram(p->handle.get());
        glGetProgramiv(p->handle.get(), GL_LINK_STATUS, &ok);
        if (!ok) {
            GLint n = 0;
            glGetProgramiv(p->handle.get(), GL_INFO_LOG_LENGTH, &n);
            std::string log(size_t(n > 0 ? n : 1), '\0');
            glGetProgramInfoLog(p->handle.get(), n, nullptr, &log[0]);
            throw ShaderError("ShaderRegistry: kernel '" + name + "' (defines: " + definesList(defines) +
                              ") failed to link:\n" + log);
        }
        glDetachShader(p->handle.get(), fs.get());
        // Sampler i reads texture unit i: program state, set once here.
        glUseProgram(p->handle.get());
        for (size_t i = 0; i < p->inputs.size(); ++i) {
            const std::string& x = p->inputs[i];
            glUniform1i(p->uniformLocation(x), GLint(i));
            p->inputLocations.push_back({p->uniformLocation(x + "_geom"), p->uniformLocation(x + "_pagesX"),
                                         p->uniformLocation(x + "_row0"), p->uniformLocation(x + "_texScale")});
        }
        p->outGeom = p->uniformLocation("out_geom");
        p->outOrigin = p->uniformLocation("out_origin");
        p->outRowmap = p->uniformLocation("out_rowmap");
        p->outPages = p->uniformLocation("out_pages");
        checkGl(("ShaderRegistry: building kernel '" + name + "'").c_str());
        return p;
    }

    bool sampledFetch_ = false;
    std::map<std::string, std::string> sources_;
    std::map<std::string, std::unique_ptr<Program>> cache_;
    ShaderObjectHandle vs_;
    ShaderObjectHandle discardFs_;
};

}  // namespace gltrain
