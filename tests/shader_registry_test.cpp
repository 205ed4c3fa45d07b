// ShaderRegistry and Pass: compile cache, error messages, specialisation.
#include <gtest/gtest.h>

#include "gltrain/pass.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace shader_registry_test {

using namespace gltrain;
using gltrain::test::context;
using gltrain::test::randomMatrix;
using gltrain::test::smallContext;

TEST(ShaderRegistry, EmbeddedKernelsAreThere) {
    auto names = context().shaders().names();
    EXPECT_NE(std::find(names.begin(), names.end(), "util/precision_probe"), names.end());
    EXPECT_EQ(ShaderRegistry::declaredInputs(context().shaders().source("util/precision_probe")),
              (std::vector<std::string>{"A", "B"}));
}

TEST(ShaderRegistry, CompileErrorNamesKernelAndBadLine) {
    Context& ctx = context();
    ctx.shaders().add("test/broken",
                      "// test/broken: a kernel with a type error on line 4.\n"
                      "// inputs: A\n"
                      "void main() {\n"
                      "    vec3 oops = A_texel(0, 0) * undefined_thing;\n"
                      "    setOutput(vec4(oops, 1.0));\n"
                      "}\n");
    Tensor a(ctx, 2, 2), out(ctx, 2, 2);
    try {
        Pass(ctx, "test/broken").input("A", a).output(out).run();
        FAIL() << "expected ShaderError";
    } catch (const ShaderError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("kernel 'test/broken'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("A_PACKED 1"), std::string::npos) << "the defines are listed: " << msg;
        EXPECT_NE(msg.find("test/broken.glsl:4:"), std::string::npos) << msg;
        EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
    }
}

TEST(ShaderRegistry, QuotesTheBadLineFromEveryDriversLog) {
    // Mesa, ANGLE (SwiftShader) and NVIDIA point at a line each their own way; 10 prelude lines.
    const std::string body = "void main() {\n    float x = nope;\n}\n";
    const std::string want = "  shaders/k.glsl:2:     float x = nope;\n";
    EXPECT_EQ(ShaderRegistry::quoteBadLines("0:12(15): error: `nope' undeclared\n", body, 10, "k"), want);
    EXPECT_EQ(ShaderRegistry::quoteBadLines("ERROR: 0:12: 'nope' : undeclared identifier\n", body, 10, "k"), want);
    EXPECT_EQ(ShaderRegistry::quoteBadLines("0(12) : error C1503: undefined variable \"nope\"\n", body, 10, "k"), want);
    EXPECT_EQ(ShaderRegistry::quoteBadLines("0(3) : error C0000: syntax error\n", body, 10, "k"),
              "  (line 3 of the generated prelude)\n");
    EXPECT_EQ(ShaderRegistry::quoteBadLines("no line here\n", body, 10, "k"), "");
}

TEST(ShaderRegistry, BlockSizesAreNumbersOrDefines) {
    // "// block: R x C": numbers, or names the pass's defines set (forward/matmul_feedback's BLOCK_ROWS).
    const std::string fixed = "// stage: feedback\n// block: 8 x 2\n",
                      named = "// stage: feedback\n// block: ROWS x 2\n";
    EXPECT_EQ(ShaderRegistry::feedbackBlock("k", fixed), std::make_pair(8, 2));
    EXPECT_EQ(ShaderRegistry::feedbackBlock("k", named, "#define A 1\n#define ROWS 12\n"), std::make_pair(12, 2));
    auto expectError = [](const std::string& src, const std::string& defines, const std::string& want) {
        try {
            ShaderRegistry::feedbackBlock("k", src, defines);
            ADD_FAILURE() << "expected ShaderError for " << src;
        } catch (const ShaderError& e) {
            EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
        }
    };
    expectError(named, "#define ROWSX 12\n", "names ROWS in its '// block:' line, which its defines do not set");
    expectError(named, "#define ROWS 0\n", "a size >= 1 is expected");
    expectError("// stage: feedback\n// block: 0 x 2\n", "", "a size >= 1 is expected");
    expectError("// stage: feedback\n", "", "has no '// block: R x C' header line");
    // The shipped kernel names its rows; ops/matmul.hpp sets them from the device's limit.
    const std::string src = context().shaders().source("forward/matmul_feedback");
    EXPECT_EQ(ShaderRegistry::feedbackBlock("forward/matmul_feedback", src, "#define BLOCK_ROWS 12\n"),
              std::make_pair(12, 2));
}

TEST(ShaderRegistry, ProgramsAreCachedByNameAndDefines) {
    Context& ctx = context();
    Tensor a(ctx, randomMatrix(3, 5, 1)), b(ctx, randomMatrix(3, 5, 2)), out(ctx, 3, 5);
    Pass p(ctx, "util/precision_probe");
    p.input("A", a).input("B", b).output(out);
    p.run();
    size_t n = ctx.shaders().compiledCount();
    p.run();
    Pass(ctx, "util/precision_probe").input("A", a).input("B", b).output(out).run();
    EXPECT_EQ(ctx.shaders().compiledCount(), n) << "same kernel and layouts: no new program";
    Tensor u(ctx, randomMatrix(3, 5, 3), Layout::Unpacked);
    Pass(ctx, "util/precision_probe").input("A", u).input("B", b).output(out).run();
    EXPECT_EQ(ctx.shaders().compiledCount(), n + 1) << "an unpacked input is a new specialisation";
}

TEST(Pass, MixedLayoutsAndPagesGiveTheSameSum) {
    // The probe kernel is A + B; run it over every combination of layouts,
    // with pages forced, against the host sum.
    Context& ctx = smallContext();
    HostMatrix a = randomMatrix(129, 70, 4), b = randomMatrix(129, 70, 5), sum(129, 70);
    for (size_t i = 0; i < sum.data.size(); ++i) sum.data[i] = a.data[i] + b.data[i];
    for (Layout la : {Layout::Packed, Layout::Unpacked})
        for (Layout lb : {Layout::Packed, Layout::Unpacked})
            for (Layout lo : {Layout::Packed, Layout::Unpacked}) {
                Tensor ta(ctx, a, la), tb(ctx, b, lb), out(ctx, 129, 70, lo);
                Pass(ctx, "util/precision_probe").input("A", ta).input("B", tb).output(out).run();
                HostMatrix r = out.download();
                EXPECT_EQ(r.data, sum.data) << layoutName(la) << "+" << layoutName(lb) << "->" << layoutName(lo);
            }
}

TEST(Pass, BadBindingsAreRejected) {
    Context& ctx = context();
    Tensor a(ctx, 2, 2), b(ctx, 2, 2);
    EXPECT_THROW(Pass(ctx, "no/such_kernel"), ShaderError);
    try {
        Pass(ctx, "util/precision_probe").input("C", a);
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("no input 'C' (inputs: A, B)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Pass(ctx, "util/precision_probe").input("A", a).output(b).run(), ArgumentError);  // B unbound
    try {
        Pass(ctx, "util/precision_probe").input("A", a).input("B", b).output(a).run();
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("never reads and writes one texture"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Pass(ctx, "util/precision_probe").uniform("nope", 1.0f), ArgumentError);
}

TEST(Pass, RowBlockKernelsNeedARowInterleavedOutput) {
    // A row-block kernel ("blocks: rows") writes one render target per row phase of its
    // output: 4 for PackedRows4, 8 for PackedRows8; a packed output has none to spread over.
    Context& ctx = context();
    Tensor a(ctx, randomMatrix(9, 8, 1)), b(ctx, randomMatrix(8, 4, 2)), c(ctx, 9, 4);
    try {
        Pass(ctx, "forward/matmul_block")
            .input("A", a)
            .input("B", b)
            .output(c)
            .uniformInt("k0", 0)
            .uniformInt("k1", 8)
            .run();
        FAIL();
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("needs a packed_rows4 or packed_rows8 output, got packed"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace shader_registry_test
}  // namespace
