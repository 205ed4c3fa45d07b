// lib/filter_slice: what one slice of a filter gradient covers, for kernels
// that "use" it after lib/window. The sum over (sample, output pixel) is cut
// into slices of `slicing.x` whole samples, or — where one sample alone is more
// than a slice's share — of one sample's band of `slicing.y` output rows; the
// kernel writes one partial sum per slice and reduce/sum_slices adds them.
// uniforms: slicing (samples per slice, output rows per slice)
// formula: slice s = group * bands + band (bands = ceil(OH / slicing.y)):
//          samples [group*slicing.x, +slicing.x) within N, output rows
//          [band*slicing.y, +slicing.y), narrowed to the positions oy, ox whose
//          tap at offset (ky, kx) (the tap times the dilation) reads inside the image
uniform ivec2 slicing;

struct TapRange {
    ivec2 n, oy, ox;  // [begin, end) of samples, output rows, output columns
};

TapRange tapRange(int slice, int samples, int ky, int kx) {
    int bands = (outHWC.x + slicing.y - 1) / slicing.y;
    int group = slice / bands, band = slice - group * bands;
    TapRange r;
    r.n = ivec2(group * slicing.x, min(samples, group * slicing.x + slicing.x));
    // (Negative numerators are clamped first: GLSL's division truncates toward zero.)
    int ny = inHWC.x - 1 + pad.x - ky, nx = inHWC.y - 1 + pad.y - kx;
    r.oy = ivec2(max(band * slicing.y, max(0, (pad.x - ky + stride.x - 1) / stride.x)),
                 ny < 0 ? 0 : min(min(outHWC.x, band * slicing.y + slicing.y), ny / stride.x + 1));
    r.ox = ivec2(max(0, (pad.y - kx + stride.y - 1) / stride.y), nx < 0 ? 0 : min(outHWC.y, nx / stride.y + 1));
    return r;
}
