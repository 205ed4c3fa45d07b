// loss/metric_rows: each row's statistics for a metric (graph's MetricRows);
// RunningSum adds them up over an epoch, gltrain/metric_spec.hpp makes the figure.
// inputs: P, T
// defines: METRIC = 0 binary accuracy, 1 categorical accuracy, 2 sparse categorical accuracy,
//          3 precision, 4 recall, 5 AUC, 6 sparse categorical accuracy per token
// uniforms: threshold (METRIC 0, 3, 4), thresholds (METRIC 5: how many), steps (METRIC 6)
// output: N x K, any layout; P is N x C, T N x C (N x 1 class labels for METRIC 2;
//         N x steps class ids for METRIC 6, P then N x steps * V)
// formula (positive: P > threshold; a target is positive when T > 0.5):
//   0: K = 1, the fraction of the row's elements whose positives agree
//   1: K = 1, argmax P == argmax T;  2: K = 1, argmax P == T (first maximum; NaN never wins)
//   3: K = 2, (true positives, predicted positives);  4: K = 2, (true positives, actual positives)
//   6: K = 2, (steps whose argmax over their V logits is T, steps with T >= 0): a negative id masks its step
//   5: K = 2 * thresholds, (true positives, false positives) at each threshold i of
//      metric_spec.hpp's aucThreshold: -1e-7, i / (thresholds - 1), 1 + 1e-7
uniform float threshold;
uniform int thresholds;
uniform int steps;

int argmaxP(int r) {
    float best = uintBitsToFloat(0xff800000u);  // -inf
    int arg = 0;
    for (int c = 0; c < P_shape().y; ++c) {
        float v = P_at(r, c);
        if (v > best) {
            best = v;
            arg = c;
        }
    }
    return arg;
}
int argmaxT(int r) {
    float best = uintBitsToFloat(0xff800000u);
    int arg = 0;
    for (int c = 0; c < T_shape().y; ++c) {
        float v = T_at(r, c);
        if (v > best) {
            best = v;
            arg = c;
        }
    }
    return arg;
}

float stat(int r, int k) {
    int C = P_shape().y;
#if METRIC == 0
    float agree = 0.0;
    for (int c = 0; c < C; ++c) agree += float((P_at(r, c) > threshold) == (T_at(r, c) > 0.5));
    return agree / float(C);
#elif METRIC == 1
    return float(argmaxP(r) == argmaxT(r));
#elif METRIC == 2
    return float(float(argmaxP(r)) == T_at(r, 0));
#elif METRIC == 6
    int V = C / steps;
    float n = 0.0;
    for (int s = 0; s < steps; ++s) {
        float id = T_at(r, s);
        if (!(id >= 0.0)) continue;
        if (k == 1) {
            n += 1.0;
            continue;
        }
        float best = uintBitsToFloat(0xff800000u);
        int arg = 0;
        for (int c = 0; c < V; ++c) {
            float v = P_at(r, s * V + c);
            if (v > best) {
                best = v;
                arg = c;
            }
        }
        n += float(float(arg) == id);
    }
    return n;
#elif METRIC == 3 || METRIC == 4
    float n = 0.0;
    for (int c = 0; c < C; ++c) {
        bool predicted = P_at(r, c) > threshold, actual = T_at(r, c) > 0.5;
#if METRIC == 3
        n += float(k == 0 ? predicted && actual : predicted);
#else
        n += float(k == 0 ? predicted && actual : actual);
#endif
    }
    return n;
#else
    int i = k >> 1;
    float t = i == 0 ? -1e-7 : i == thresholds - 1 ? 1.0 + 1e-7 : float(i) / float(thresholds - 1);
    bool wantPositive = (k & 1) == 0;
    float n = 0.0;
    for (int c = 0; c < C; ++c) n += float(P_at(r, c) > t && (T_at(r, c) > 0.5) == wantPositive);
    return n;
#endif
}

void main() {
    ivec2 t = outTexel();
    int lanes = OUT_PACKED == 1 ? 4 : 1, cols = outShape().y;
    vec4 v = vec4(0.0);
    for (int k = 0; k < lanes; ++k) {
        int c = t.x * lanes + k;
        if (c >= cols) break;
        v[k] = stat(t.y, c);
    }
    setOutput(v);
}
