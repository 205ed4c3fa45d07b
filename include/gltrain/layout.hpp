// How a rows x cols fp32 matrix is laid out in RGBA32F texels and pages.
//
//   Unpacked: one value per texel (in .r), texel (c, r) holds element (r, c).
//   Packed:   four consecutive values of a row per texel, texel (c/4, r) holds
//             elements (r, c..c+3); when cols % 4 != 0 the last texel's spare
//             lanes are padding, kept at zero by every kernel (outputs are
//             masked), so reductions can sum whole texels.
//
// Packed is the default: on every renderer we measured (llvmpipe, SwiftShader,
// NVIDIA) one vec4 fetch costs about what one scalar fetch costs, so a packed
// kernel moves 4x the data per fetch and runs a quarter of the fragments; see
// bench/kernels for the figures. Unpacked stays for kernels whose output is
// naturally one value per row (argmax, per-row loss) and for comparison.
//
//   PackedRows4: packed, and rows interleaved over 4 layers — row r lives in
//             layer r % 4 at texel row r / 4. A fragment can then compute a
//             4-row x 4-column block and write its 4 rows at once through 4
//             render targets (the register-blocked matmul); every other kernel
//             reads and writes it through the same helpers as Packed.
//   PackedRows8: the same over 8 layers, for 8-row x 4-column blocks through 8
//             render targets (where MAX_DRAW_BUFFERS >= 8): 12 fetches per 128
//             multiply-adds instead of 8 per 64. Measured per CPU second of the
//             renderer at N = 512 and 1024: 1.2-1.6x the 4x4 kernel on both
//             SwiftShader and llvmpipe (bench/kernels shows both, wall time).
//
// Pages: a texel grid wider or taller than MAX_TEXTURE_SIZE is cut into
// pages of at most max x max texels, stored as the layers of one
// TEXTURE_2D_ARRAY (layer = (pageY * pagesX + pageX) * phases + row phase);
// a tensor of one layer (unpaged, no row phases) is a TEXTURE_2D, whose reads
// cost less on SwiftShader (textureTarget in texture_pool.hpp). Kernels sample through generated helpers that map a texel coordinate to
// (x, y, layer), so a paged tensor works everywhere an unpaged one does
// (TensorFlow.js throws here).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "gltrain/error.hpp"

namespace gltrain {

enum class Layout { Unpacked, Packed, PackedRows4, PackedRows8 };

inline const char* layoutName(Layout l) {
    return l == Layout::Packed        ? "packed"
           : l == Layout::PackedRows4 ? "packed_rows4"
           : l == Layout::PackedRows8 ? "packed_rows8"
                                      : "unpacked";
}
inline bool isPacked(Layout l) { return l != Layout::Unpacked; }
// The layers a layout interleaves its rows over: the rows a block kernel's fragment writes.
inline int rowPhases(Layout l) { return l == Layout::PackedRows4 ? 4 : l == Layout::PackedRows8 ? 8 : 1; }

struct TexelGeometry {
    int rows = 0, cols = 0;
    Layout layout = Layout::Packed;
    int texelsPerRow = 0;               // cols, or ceil(cols / 4) when packed
    int phases = 1;                     // rows interleaved over this many layers (rowPhases(layout))
    int gridRows = 0;                   // texel rows: ceil(rows / phases)
    int pageWidth = 0, pageHeight = 0;  // texels in one page (every page is allocated this size)
    int pagesX = 0, pagesY = 0;

    // The rest follows from these (and the texture size the pages were cut for).
    bool operator==(const TexelGeometry& o) const {
        return rows == o.rows && cols == o.cols && layout == o.layout && pageWidth == o.pageWidth &&
               pageHeight == o.pageHeight && pagesX == o.pagesX && pagesY == o.pagesY;
    }
    bool operator!=(const TexelGeometry& o) const { return !(*this == o); }

    int pages() const { return pagesX * pagesY; }
    bool paged() const { return pages() > 1; }
    int layers() const { return pages() * phases; }
    int valuesPerTexel() const { return isPacked(layout) ? 4 : 1; }

    // One layer's used rectangle: layer = page * phases + phase; x0, y0 are the
    // page's origin in the texel grid; texel row y of it holds logical row
    // (y0 + y) * phases + phase. The last page in a row or column, and the
    // last phases, may be partial.
    struct PageRect {
        int layer, x0, y0, width, height, phase;
    };
    PageRect pageRect(int layer) const {
        int page = layer / phases, phase = layer % phases;
        int px = page % pagesX, py = page / pagesX;
        int x0 = px * pageWidth, y0 = py * pageHeight;
        int phaseRows = (rows - phase + phases - 1) / phases;  // grid rows that hold a row of this phase
        return {
            layer, x0, y0, std::min(pageWidth, texelsPerRow - x0), std::max(0, std::min(pageHeight, phaseRows - y0)),
            phase};
    }
    int rowOf(const PageRect& pr, int y) const { return (pr.y0 + y) * phases + pr.phase; }

    // The texel rows [y0, y1) of a layer that hold logical rows in [first, first + count).
    std::pair<int, int> pageRowsOf(const PageRect& pr, int first, int count) const {
        // The first grid row g with g * phases + phase >= row (row - phase > -phases: no negative division).
        auto gridRowFrom = [&](int row) { return (row - pr.phase + phases - 1) / phases; };
        const int y0 = std::max(0, gridRowFrom(first) - pr.y0);
        const int y1 = std::min(pr.height, gridRowFrom(first + count) - pr.y0);
        return {y0, std::max(y0, y1)};
    }

    // Scatters one layer's RGBA texels (as read back) into a row-major host array.
    void unpackPage(const PageRect& pr, const float* texels, float* out) const {
        unpackPageRows(pr, 0, pr.height, texels, out, 0);
    }
    // The same for its texel rows [y0, y1) (read back from y0 on), into a host
    // array whose first row is logical row `firstRow`.
    void unpackPageRows(const PageRect& pr, int y0, int y1, const float* texels, float* out, int firstRow) const {
        const int vpt = valuesPerTexel();
        for (int y = y0; y < y1; ++y) {
            float* row = out + size_t(rowOf(pr, y) - firstRow) * size_t(cols);
            const float* in = texels + size_t(y - y0) * size_t(pr.width) * 4;
            for (int x = 0; x < pr.width; ++x)
                for (int k = 0; k < vpt; ++k) {
                    int c = (pr.x0 + x) * vpt + k;
                    if (c < cols) row[c] = in[size_t(x) * 4 + size_t(k)];
                }
        }
    }

    static TexelGeometry make(int rows, int cols, Layout layout, int maxTextureSize, int maxLayers) {
        if (rows <= 0 || cols <= 0)
            throw ArgumentError("Tensor: shape " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " is empty or negative");
        if (maxTextureSize <= 0) throw ArgumentError("Tensor: max texture size must be positive");
        // Counted in 64 bits: with a large shape (or a small forced texture
        // size) ceil-divisions and the page count would overflow int.
        using i64 = long long;
        auto ceilDiv = [](i64 a, i64 b) { return (a + b - 1) / b; };
        const i64 tpr = isPacked(layout) ? ceilDiv(cols, 4) : cols;
        const i64 phases = rowPhases(layout);
        const i64 gridRows = ceilDiv(rows, phases);
        const i64 pagesX = ceilDiv(tpr, maxTextureSize), pagesY = ceilDiv(gridRows, maxTextureSize);
        const i64 layers = pagesX * pagesY * phases;  // at most ~2^62 (phases > 1 only with packed): fits
        if (layers > maxLayers)
            throw UnsupportedError("Tensor: " + std::to_string(rows) + "x" + std::to_string(cols) + " needs " +
                                   std::to_string(layers) + " texture layers, more than MAX_ARRAY_TEXTURE_LAYERS (" +
                                   std::to_string(maxLayers) + ")");
        TexelGeometry g;
        g.rows = rows;
        g.cols = cols;
        g.layout = layout;
        g.texelsPerRow = int(tpr);
        g.phases = int(phases);
        g.gridRows = int(gridRows);
        g.pagesX = int(pagesX);
        g.pagesY = int(pagesY);
        // Balance the pages so the last one is not a sliver: ceil(n / pages).
        g.pageWidth = int(ceilDiv(tpr, pagesX));
        g.pageHeight = int(ceilDiv(gridRows, pagesY));
        return g;
    }
};

}  // namespace gltrain
