// lib/channels: per-channel access to N x (P*C) image rows (P pixels of C
// channels; P = 1 for a Dense layer's output) for kernels whose output is
// one value per channel (1 x C, packed: a texel is channels 4x..4x+3).
// defines: VEC_C (C % 4 == 0 and every tensor packed: a texel of the row is 4 channels of one pixel)
// uniforms: channels (C)
uniform int channels;

int pixelsPerRow(ivec2 shape) { return shape.y / channels; }
// The channels of the output texel being computed, clamped to the last one
// (lanes past it are padding, zeroed by setOutput).
ivec4 channelLanes() {
#if OUT_PACKED
    int c = outTexel().x * 4;
    return min(ivec4(c, c + 1, c + 2, c + 3), ivec4(channels - 1));
#else
    return ivec4(outTexel().x);  // one channel per texel, in .x
#endif
}
