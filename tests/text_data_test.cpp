// Byte-level text data: windows of `context` bytes and their next bytes, the
// held-out tail cut off at floor((1 - heldOut) N), training windows drawn by
// (seed, epoch, window) inside the training part only, and the errors for
// texts too short to hold a window.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gltrain/text_data.hpp"
#include "test_context.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace text_data_test {

using namespace gltrain;

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

TEST(TextData, WindowsAreTheNextBytesInsideTheirPart) {
    std::string text;
    for (int i = 0; i < 50; ++i) text += char('a' + i % 26);
    text += "0123456789";  // 60 bytes: 54 train, 6 held out
    TextOptions o;
    o.context = 4;
    o.seed = 7;
    const TextData d(bytesOf(text), o);
    EXPECT_EQ(d.trainBytes(), 54u);  // floor(0.9 * 60)
    EXPECT_EQ(d.validationBytes(), 6u);
    EXPECT_EQ(d.windowsPerEpoch(), 13);
    const TextWindows w = d.trainWindows(0);
    ASSERT_EQ(w.x.rows, 13);
    ASSERT_EQ(w.x.cols, 4);
    std::vector<int> starts;
    for (int r = 0; r < w.x.rows; ++r) {
        // Find the window in the text: its targets are its bytes shifted by one, all in the training part.
        size_t at = std::string::npos;
        for (size_t s = 0; s + 4 < 54; ++s) {
            bool same = true;
            for (int t = 0; t < 4; ++t)
                same = same && w.x(r, t) == float(uint8_t(text[s + size_t(t)])) &&
                       w.y(r, t) == float(uint8_t(text[s + size_t(t) + 1]));
            if (same) at = s;
        }
        ASSERT_NE(at, std::string::npos) << "window " << r << " is not in the training part";
        starts.push_back(int(at));
    }
    // Seeded: the same epoch gives the same windows, another epoch others.
    EXPECT_EQ(d.trainWindows(0).x.data, w.x.data);
    EXPECT_NE(d.trainWindows(1).x.data, w.x.data);
    EXPECT_EQ(d.trainWindows(0, 3).x.rows, 3);
    // The held-out tail: one window of 4 and its next bytes (the 6 bytes hold one, then 1 left over).
    const TextWindows v = d.validationWindows();
    ASSERT_EQ(v.x.rows, 1);
    EXPECT_EQ(v.x(0, 0), float('4'));
    EXPECT_EQ(v.y(0, 3), float('8'));
}

TEST(TextData, ShortTextsAndBadOptionsAreRefused) {
    TextOptions o;
    o.context = 8;
    EXPECT_NE(test::message([&] {
                  TextData(bytesOf("short"), o);
              }).find("text: 5 bytes leave 4 for training, fewer than a window of 8 and its next byte"),
              std::string::npos);
    EXPECT_NE(test::message([&] {
                  TextData(bytesOf(std::string(30, 'x')), o);
              }).find("the held-out tail is 3 bytes, fewer than a window of 8"),
              std::string::npos);
    o.heldOut = 0.0;
    EXPECT_EQ(TextData(bytesOf(std::string(30, 'x')), o).validationWindows().x.rows, 0);
    o.heldOut = 1.0;
    EXPECT_NE(test::message([&] { TextData(bytesOf("abc"), o); }).find("heldOut must be in [0, 1)"), std::string::npos);
    o.heldOut = 0.1;
    o.context = 0;
    EXPECT_NE(test::message([&] { TextData(bytesOf("abc"), o); }).find("context must be >= 1"), std::string::npos);
}

}  // namespace text_data_test
}  // namespace
