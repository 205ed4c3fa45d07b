// Rows and columns added around (or cut from) an image: Keras's ZeroPadding2D
// `padding` and Cropping2D `cropping`, written n, [h, w] or
// [[top, bottom], [left, right]].
#pragma once
#include <string>

namespace gltrain {

// The rows above and below and the columns left and right of an image.
struct Margins {
    // Rows above.
    int top = 0;
    // Rows below.
    int bottom = 0;
    // Columns on the left.
    int left = 0;
    // Columns on the right.
    int right = 0;

    constexpr Margins() = default;
    // n on every side (an int converts, so `ZeroPadding2D{1}` pads one pixel all round).
    constexpr Margins(int n) : top(n), bottom(n), left(n), right(n) {}  // NOLINT(google-explicit-constructor)
    // h rows above and below, w columns left and right.
    constexpr Margins(int h, int w) : top(h), bottom(h), left(w), right(w) {}
    // Each side.
    constexpr Margins(int t, int b, int l, int r) : top(t), bottom(b), left(l), right(r) {}

    // Whether every side is the same (written as one number).
    constexpr bool even() const { return top == bottom && left == right && top == left; }
    // Whether top equals bottom and left equals right (written [h, w]).
    constexpr bool symmetric() const { return top == bottom && left == right; }
    // The rows and columns added in all.
    constexpr int rows() const { return top + bottom; }
    // The columns added in all.
    constexpr int cols() const { return left + right; }
    // "1", "[1, 2]" or "[[1, 0], [2, 3]]", as Keras writes it.
    std::string str() const {
        const auto n = [](int v) { return std::to_string(v); };
        if (even()) return n(top);
        if (symmetric()) return "[" + n(top) + ", " + n(left) + "]";
        return "[[" + n(top) + ", " + n(bottom) + "], [" + n(left) + ", " + n(right) + "]]";
    }
    // Whether every side is the same as o's.
    constexpr bool operator==(const Margins& o) const {
        return top == o.top && bottom == o.bottom && left == o.left && right == o.right;
    }
    // Whether any side differs from o's.
    constexpr bool operator!=(const Margins& o) const { return !(*this == o); }
};

}  // namespace gltrain
