// Tensors as textures: bit-exact round trips (packed, unpacked, paged),
// async readback, the texture pool.
#include <gtest/gtest.h>

#include <cstring>

#include "gltrain/ops/elementwise.hpp"
#include "gltrain/readback.hpp"
#include "gltrain/tensor.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace tensor_test {

using namespace gltrain;
using gltrain::test::context;
using gltrain::test::randomMatrix;
using gltrain::test::smallContext;

namespace {

struct Shape {
    int rows, cols;
};
const Shape kShapes[] = {{1, 1}, {3, 5}, {7, 4}, {129, 33}, {1, 5000}, {5000, 1}};

bool bitEqual(const HostMatrix& a, const HostMatrix& b) {
    return a.rows == b.rows && a.cols == b.cols &&
           std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// Values that would not survive a lossy path: negative zero, denormals, huge, tiny, NaN payload-free.
HostMatrix trickyMatrix(int rows, int cols, unsigned seed) {
    HostMatrix m = randomMatrix(rows, cols, seed, -1e6f, 1e6f);
    const float special[] = {-0.0f, 1e-40f, 3.4e38f, -1.17549435e-38f, 1.0f / 3.0f};
    for (size_t i = 0; i < m.data.size(); i += 7) m.data[i] = special[(i / 7) % 5];
    return m;
}

}  // namespace

std::string roundTripName(const ::testing::TestParamInfo<std::tuple<Shape, Layout, bool>>& info) {
    const Shape s = std::get<0>(info.param);
    return std::to_string(s.rows) + "x" + std::to_string(s.cols) + "_" + layoutName(std::get<1>(info.param)) +
           (std::get<2>(info.param) ? "_limit64" : "");
}

class TensorRoundTrip : public ::testing::TestWithParam<std::tuple<Shape, Layout, bool>> {};

TEST_P(TensorRoundTrip, UploadDownloadIsBitExact) {
    auto [shape, layout, small] = GetParam();
    Context& ctx = small ? smallContext() : context();
    HostMatrix m = trickyMatrix(shape.rows, shape.cols, unsigned(shape.rows * 31 + shape.cols));
    Tensor t(ctx, m, layout);
    EXPECT_TRUE(bitEqual(t.download(), m)) << shape.rows << "x" << shape.cols << " " << layoutName(layout);
}

TEST_P(TensorRoundTrip, AsyncReadbackEqualsSyncReadback) {
    auto [shape, layout, small] = GetParam();
    Context& ctx = small ? smallContext() : context();
    HostMatrix m = trickyMatrix(shape.rows, shape.cols, 7u);
    Tensor t(ctx, m, layout);
    AsyncReadback rb(t);
    HostMatrix async = rb.get();
    EXPECT_TRUE(bitEqual(async, t.download()));
    EXPECT_TRUE(bitEqual(async, m));
}

INSTANTIATE_TEST_SUITE_P(Shapes, TensorRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kShapes),
                                            ::testing::Values(Layout::Packed, Layout::Unpacked, Layout::PackedRows4,
                                                              Layout::PackedRows8),
                                            ::testing::Bool()),
                         roundTripName);

TEST(Tensor, SmallLimitReallyPages) {
    Context& ctx = smallContext();
    EXPECT_EQ(ctx.maxTextureSize(), 64);
    Tensor wide(ctx, 1, 5000, Layout::Unpacked), tall(ctx, 5000, 1), both(ctx, 129, 33, Layout::Unpacked);
    EXPECT_EQ(wide.geometry().pagesX, 79);
    EXPECT_EQ(tall.geometry().pagesY, 79);
    EXPECT_EQ(both.geometry().pages(), 3);
    Tensor packed(ctx, 1, 5000, Layout::Packed);  // 1250 texels wide
    EXPECT_EQ(packed.geometry().pagesX, 20);
    for (auto* t : {&wide, &tall, &both, &packed})
        for (int i = 0; i < t->geometry().pages(); ++i) {
            auto pr = t->geometry().pageRect(i);
            EXPECT_LE(pr.width, 64);
            EXPECT_LE(pr.height, 64);
            EXPECT_GT(pr.width, 0);
            EXPECT_GT(pr.height, 0);
        }
}

TEST(Tensor, PackedPaddingIsZeroAfterUpload) {
    Context& ctx = context();
    HostMatrix m(2, 5, 9.0f);
    Tensor t(ctx, m, Layout::Packed);
    EXPECT_EQ(t.geometry().texelsPerRow, 2);
    // Read the raw texels: lanes 5..7 of each row are padding and must be 0.
    glBindFramebuffer(GL_FRAMEBUFFER, ctx.framebuffer());
    t.attachPage(0);
    float texels[2 * 2 * 4];
    glReadPixels(0, 0, 2, 2, GL_RGBA, GL_FLOAT, texels);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(texels[r * 8 + 4], 9.0f);
        for (int k = 5; k < 8; ++k) EXPECT_EQ(texels[r * 8 + k], 0.0f);
    }
}

TEST(Tensor, WrongLengthIsRejected) {
    Context& ctx = context();
    Tensor t(ctx, 3, 5);
    HostMatrix before = randomMatrix(3, 5, 1);
    t.upload(before);
    std::vector<float> bad(14, 1.0f);
    try {
        t.upload(bad);
        FAIL() << "expected ArgumentError";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("14 values for a 3x5 tensor"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(bitEqual(t.download(), before)) << "a rejected upload must leave the tensor unchanged";
    EXPECT_THROW(t.upload(HostMatrix(5, 3)), ArgumentError);
}

TEST(Tensor, EmptyOrNegativeShapeIsRejected) {
    Context& ctx = context();
    EXPECT_THROW(Tensor(ctx, 0, 3), ArgumentError);
    EXPECT_THROW(Tensor(ctx, 3, -1), ArgumentError);
    Tensor moved(ctx, 2, 2);
    Tensor other = std::move(moved);
    EXPECT_THROW(moved.download(), ArgumentError);  // NOLINT: use after move is the point
}

// Rows [first, first + count) of m.
HostMatrix sliceRows(const HostMatrix& m, int first, int count) {
    HostMatrix out(count, m.cols);
    std::copy_n(m.data.begin() + std::ptrdiff_t(size_t(first) * size_t(m.cols)), out.data.size(), out.data.begin());
    return out;
}

// A pass samples a row window as the rows it covers, in every layout, paged
// or not: scale(window, 1) (through X_aligned, or X_at lane by lane when the
// layouts differ) equals those rows of the base exactly; moving the window
// changes what the same recorded pass reads next.
class TensorRowWindow : public ::testing::TestWithParam<std::tuple<Layout, bool>> {};

TEST_P(TensorRowWindow, PassesSampleTheWindowsRows) {
    const auto [layout, small] = GetParam();
    Context& ctx = small ? smallContext() : context();
    for (Shape base : {Shape{129, 33}, Shape{1030, 5}}) {
        HostMatrix hb = randomMatrix(base.rows, base.cols, 71);
        Tensor b(ctx, hb, layout);
        if (small && base.rows > 1000) ASSERT_TRUE(b.geometry().paged());
        const std::pair<int, int> windows[] = {
            {0, 1}, {5, 3}, {3, 5}, {1, 127}, {base.rows - 1, 1}, {2, base.rows - 2}};
        for (auto [first, count] : windows) {
            Tensor w = Tensor::rowWindow(b, first, count);
            EXPECT_EQ(w.rows(), count);
            EXPECT_EQ(w.cols(), base.cols);
            EXPECT_EQ(w.firstRow(), first);
            for (Layout outLayout : {Layout::Packed, layout}) {
                Tensor out(ctx, count, base.cols, outLayout);
                scale(w, 1.0f, out);
                EXPECT_TRUE(bitEqual(out.download(), sliceRows(hb, first, count)))
                    << base.rows << "x" << base.cols << " rows [" << first << ", " << first + count << ") into "
                    << layoutName(outLayout);
            }
            EXPECT_TRUE(bitEqual(w.download(), sliceRows(hb, first, count)));
            HostMatrix reused(2, 3, std::vector<float>(6, 9.0f));  // reshaped, its old values gone
            w.download(reused);
            ASSERT_EQ(reused.data.size(), size_t(count) * size_t(base.cols));
            EXPECT_TRUE(bitEqual(reused, sliceRows(hb, first, count))) << "into a reused matrix";
            HostMatrix fresh;  // the window's rows only: no host array for the whole base on the way
            w.download(fresh);
            EXPECT_LT(fresh.data.capacity(), hb.data.size()) << "rows [" << first << ", " << first + count << ")";
        }
        // One recorded pass, the window moved between runs.
        Tensor w = Tensor::rowWindow(b, 0, 3), out(ctx, 3, base.cols);
        PassList l;
        recordScale(l, w, 2.0f, out);
        for (int first : {0, 7, base.rows - 3, 1}) {
            w.moveWindow(first);
            l.run();
            HostMatrix want = sliceRows(hb, first, 3);
            for (auto& v : want.data) v *= 2.0f;
            EXPECT_TRUE(bitEqual(out.download(), want)) << "window moved to row " << first;
        }
        // A window of a window is a window of the base.
        Tensor ww = Tensor::rowWindow(Tensor::rowWindow(b, 4, 100), 3, 2);
        EXPECT_EQ(ww.firstRow(), 7);
        Tensor o2(ctx, 2, base.cols);
        scale(ww, 1.0f, o2);
        EXPECT_TRUE(bitEqual(o2.download(), sliceRows(hb, 7, 2)));
        EXPECT_TRUE(bitEqual(ww.download(), sliceRows(hb, 7, 2)));
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, TensorRowWindow,
                         ::testing::Combine(::testing::Values(Layout::Packed, Layout::Unpacked, Layout::PackedRows4,
                                                              Layout::PackedRows8),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(layoutName(std::get<0>(info.param))) +
                                    (std::get<1>(info.param) ? "_limit64" : "");
                         });

// A window is read-only and stays inside its base; every refusal names what was wrong.
TEST(Tensor, RowWindowMisuseIsRejected) {
    Context& ctx = context();
    HostMatrix hb = randomMatrix(10, 6, 72);
    Tensor b(ctx, hb);
    auto message = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const ArgumentError& e) {
            return e.what();
        }
        return "(no ArgumentError)";
    };
    EXPECT_NE(message([&] { Tensor::rowWindow(b, 8, 3); }).find("rows [8, 11) are not within the 10x6 tensor"),
              std::string::npos);
    EXPECT_NE(message([&] { Tensor::rowWindow(b, -1, 2); }).find("not within"), std::string::npos);
    EXPECT_NE(message([&] { Tensor::rowWindow(b, 0, 0); }).find("not within"), std::string::npos);
    EXPECT_NE(message([&] { Tensor::rowWindow(Tensor(), 0, 1); }).find("empty"), std::string::npos);
    Tensor w = Tensor::rowWindow(b, 2, 4);
    // A window of that window stays within its 4 rows, though the base has more.
    EXPECT_NE(message([&] { Tensor::rowWindow(w, 3, 2); }).find("rows [3, 5) are not within the 4x6 tensor"),
              std::string::npos);
    EXPECT_NE(message([&] { w.moveWindow(7); }).find("rows [7, 11) are not within the 10x6 base"), std::string::npos);
    EXPECT_NE(message([&] { b.moveWindow(0); }).find("not a row window"), std::string::npos);
    EXPECT_NE(message([&] { w.upload(HostMatrix(4, 6)); }).find("is a row window of a 10x6 tensor"), std::string::npos);
    EXPECT_NE(message([&] { w.clear(); }).find("row window"), std::string::npos);
    EXPECT_NE(message([&] { AsyncReadback r(w); }).find("row window"), std::string::npos);
    Tensor src(ctx, 4, 6);
    EXPECT_NE(message([&] { scale(src, 1.0f, w); }).find("is a row window of another tensor; a pass writes whole"),
              std::string::npos);
    EXPECT_TRUE(bitEqual(b.download(), hb)) << "a refused write must leave the base unchanged";
    EXPECT_EQ(w.firstRow(), 2) << "a refused move must leave the window where it was";
}

TEST(Tensor, ClearZeroes) {
    Context& ctx = smallContext();
    Tensor t(ctx, randomMatrix(70, 300, 3), Layout::Packed);
    t.clear();
    for (float v : t.download().data) ASSERT_EQ(v, 0.0f);
}

TEST(TexturePool, ReleasedTextureIsReused) {
    Context& ctx = context();
    const PoolStats before = ctx.pool().stats();
    GLuint first;
    {
        Tensor t(ctx, 37, 41);
        first = t.texture();
        EXPECT_EQ(ctx.pool().stats().live, before.live + 1);
        EXPECT_EQ(ctx.pool().stats().liveBytes, before.liveBytes + size_t(11 * 37 * 16));
    }
    EXPECT_EQ(ctx.pool().stats().live, before.live);
    size_t created = ctx.pool().stats().created;
    Tensor again(ctx, 37, 41);
    EXPECT_EQ(ctx.pool().stats().created, created) << "same shape must reuse the released texture";
    EXPECT_EQ(again.texture(), first);
    Tensor different(ctx, 37, 45);  // 12 texels wide: a new key
    EXPECT_EQ(ctx.pool().stats().created, created + 1);
}

TEST(TexturePool, TensorOutlivingItsContextIsDroppedSafely) {
    Tensor survivor;
    {
        Context ctx;
        survivor = Tensor(ctx, 4, 4);
        EXPECT_EQ(ctx.pool().stats().live, 1u);
    }
    survivor = Tensor();  // must not touch the dead pool
    context();            // make the shared context current again for later tests
    SUCCEED();
}

}  // namespace tensor_test
}  // namespace
