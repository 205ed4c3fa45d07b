// SnapshotReads (engine/snapshot_reads.hpp): a GPU-side copy of a set of
// tensors read back a part per call — the values of the moment begin() was
// called, whatever is written to the tensors after, bit for bit, on odd and
// paged shapes in every layout; a part never over the budget; non-finite
// values noted; a begin() while parts are in flight starting over; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "gltrain/engine/snapshot_reads.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace snapshot_reads_test {

using namespace gltrain;
using gltrain::test::context;
using gltrain::test::randomMatrix;
using gltrain::test::smallContext;

bool bitEqual(const HostMatrix& a, const HostMatrix& b) {
    return a.rows == b.rows && a.cols == b.cols &&
           std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// Odd shapes in every layout: a single value, a column and a row that page on
// the small context (MAX_TEXTURE_SIZE 64), row phases of 4 and 8 with a partial last phase.
struct Case {
    int rows, cols;
    Layout layout;
};
const Case kCases[] = {{1, 1, Layout::Unpacked},    {129, 33, Layout::Packed},      {5000, 1, Layout::PackedRows4},
                       {1, 5000, Layout::Unpacked}, {70, 301, Layout::PackedRows8}, {3, 5, Layout::Packed}};

struct Tensors {
    std::vector<Tensor> list;
    std::vector<HostMatrix> values;
    std::vector<const Tensor*> pointers() const {
        std::vector<const Tensor*> p;
        for (const Tensor& t : list) p.push_back(&t);
        return p;
    }
};
Tensors makeTensors(Context& ctx, unsigned seed) {
    Tensors t;
    for (const Case& c : kCases) {
        t.values.push_back(randomMatrix(c.rows, c.cols, seed++, -1e3f, 1e3f));
        t.list.emplace_back(ctx, t.values.back(), c.layout);
    }
    return t;
}

// advance() until the snapshot is in, the GPU finished before each call (so
// each takes a part); the calls it took.
int advanceToEnd(SnapshotReads& r, std::vector<HostMatrix>& into) {
    int calls = 1;
    for (glFinish(); !r.advance(into); glFinish())
        if (++calls > 100000) ADD_FAILURE() << "the snapshot never completed";
    return calls;
}

#ifndef __EMSCRIPTEN__  // a browser signals fences only between event-loop turns: these would never end

class SnapshotReadsOn : public ::testing::TestWithParam<bool> {
protected:
    Context& ctx() { return GetParam() ? smallContext() : context(); }
};

TEST_P(SnapshotReadsOn, PartsReadOverManyCallsHoldTheValuesOfBegin) {
    Tensors t = makeTensors(ctx(), 11);
    const size_t budget = 4096;       // 256 texels: many parts, some of a single row
    size_t bytes = 0, part = budget;  // a part holds at least one texel row
    for (const Tensor& x : t.list)
        for (int l = 0; l < x.geometry().layers(); ++l) {
            const auto pr = x.geometry().pageRect(l);
            bytes += size_t(pr.width) * size_t(pr.height) * 16;
            part = std::max(part, size_t(pr.width) * 16);
        }
    SnapshotReads r(ctx(), t.pointers(), budget);
    r.begin(t.pointers());
    // The steps after overwrite what was copied.
    for (size_t i = 0; i < t.list.size(); ++i) t.list[i].upload(randomMatrix(t.list[i].rows(), t.list[i].cols(), 99));
    std::vector<HostMatrix> got;
    const int calls = advanceToEnd(r, got);
    EXPECT_GE(size_t(calls), bytes / part) << "a call took more than a part";
    EXPECT_TRUE(r.finite());
    EXPECT_FALSE(r.pending());
    ASSERT_EQ(got.size(), t.values.size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(bitEqual(got[i], t.values[i])) << "tensor " << i << " (" << t.list[i].shapeString() << ")";
}

TEST_P(SnapshotReadsOn, ABeginWhilePartsAreInFlightStartsOver) {
    Tensors a = makeTensors(ctx(), 21), b = makeTensors(ctx(), 31);
    SnapshotReads r(ctx(), a.pointers(), 2048);
    r.begin(a.pointers());
    std::vector<HostMatrix> got;
    for (int i = 0; i < 3; ++i) {
        glFinish();
        ASSERT_FALSE(r.advance(got));
    }
    r.begin(b.pointers());
    advanceToEnd(r, got);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(bitEqual(got[i], b.values[i])) << "tensor " << i;
    // And again from the same buffers, as a fit's next snapshot is.
    r.begin(a.pointers());
    advanceToEnd(r, got);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(bitEqual(got[i], a.values[i])) << "tensor " << i;
}

TEST_P(SnapshotReadsOn, AValueThatIsNotFiniteIsNoted) {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
        Tensors t = makeTensors(ctx(), 41);
        HostMatrix& last = t.values[4];  // 70x301 rows8: the value in its last row, last column
        last.data.back() = bad;
        t.list[4].upload(last);
        SnapshotReads r(ctx(), t.pointers(), 4096);
        r.begin(t.pointers());
        std::vector<HostMatrix> got;
        advanceToEnd(r, got);
        EXPECT_FALSE(r.finite()) << bad;
        // The same tensors, finite again: a new snapshot is.
        last.data.back() = 1.0f;
        t.list[4].upload(last);
        r.begin(t.pointers());
        advanceToEnd(r, got);
        EXPECT_TRUE(r.finite());
        EXPECT_TRUE(bitEqual(got[4], last));
    }
}

INSTANTIATE_TEST_SUITE_P(Paged, SnapshotReadsOn, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Paged" : "Whole"; });

#endif

TEST(SnapshotReads, TheCopyIsValidGl) {
    // In a browser too: WebGL2 copies RGBA32F into RGBA32F (EXT_color_buffer_float).
    Tensors t = makeTensors(smallContext(), 51);
    SnapshotReads r(smallContext(), t.pointers(), 4096);
    while (glGetError() != GL_NO_ERROR) {
    }
    r.begin(t.pointers());
    EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR));
    EXPECT_TRUE(r.pending());
}

TEST(SnapshotReads, RefusesTensorsOtherThanItsOwn) {
    Tensors t = makeTensors(context(), 61);
    SnapshotReads r(context(), t.pointers(), 4096);
    std::vector<const Tensor*> fewer = t.pointers();
    fewer.pop_back();
    try {
        r.begin(fewer);
        ADD_FAILURE() << "5 tensors for a snapshot of 6 were taken";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("5 tensors for a snapshot of 6"), std::string::npos) << e.what();
    }
    Tensor other(context(), 129, 34);
    std::vector<const Tensor*> swapped = t.pointers();
    swapped[1] = &other;
    try {
        r.begin(swapped);
        ADD_FAILURE() << "a 129x34 tensor in place of a 129x33 one was taken";
    } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("tensor 1 is 129x34, the snapshot's is 129x33"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(r.pending()) << "a refused begin starts nothing";
}

}  // namespace snapshot_reads_test
}  // namespace
