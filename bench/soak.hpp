// The soak run shared by bench/soak.cpp (20,000 steps, figures for the README)
// and tests/soak_test.cpp (a short run in CI): train an MLP on synthetic data
// for a long time and compare what the process holds at the start and at the
// end — textures (live, free, ever created), GPU bytes in the texture pool,
// compiled programs, host RSS — and whether GL reported an error. A leak of a
// texture, a program or host memory per step shows up as growth between the
// two snapshots; the start snapshot is taken after warm-up (the first epoch
// and its validation pass create every plan and texture the run needs; the
// first loss read and snapshot their read-back buffers).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gltrain/context.hpp"
#include "gltrain/gl.hpp"
#include "gltrain/reference/random.hpp"
#include "gltrain/sequential.hpp"

namespace gltrain::soak {

// Host resident set size in KiB from /proc/self/status (VmRSS); -1 where
// there is no /proc (the browser).
inline long rssKiB() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmRSS:", 6) == 0) {
            kib = std::strtol(line + 6, nullptr, 10);
            break;
        }
    std::fclose(f);
    return kib;
}

struct Snapshot {
    long step = 0;
    size_t liveTextures = 0, freeTextures = 0, createdTextures = 0;
    size_t gpuBytes = 0;  // pool bytes, live + free (RGBA32F texture storage)
    size_t programs = 0;  // compiled shader programs
    long rssKiB = -1;
    GLenum glError = GL_NO_ERROR;  // glGetError at the snapshot (one round trip; fine here)

    size_t textures() const { return liveTextures + freeTextures; }
};

inline Snapshot snapshot(Context& ctx, long step) {
    Snapshot s;
    s.step = step;
    const PoolStats& p = ctx.pool().stats();
    s.liveTextures = p.live;
    s.freeTextures = p.free;
    s.createdTextures = p.created;
    s.gpuBytes = p.liveBytes + p.freeBytes;
    s.programs = ctx.shaders().compiledCount();
    s.glError = glGetError();
    // RSS once the renderer is idle and free heap pages are back with the OS:
    // what the process holds, not the high-water mark of a busy moment. A
    // software renderer's threads allocate and free as they draw, and how much
    // of that stays resident depends on timing (one of two native suite runs
    // beside a compile measured 5 MiB more at the end than at the start).
    glFinish();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    s.rssKiB = rssKiB();
    return s;
}

inline std::string describe(const Snapshot& s) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "step %ld: textures %zu (live %zu, free %zu, created %zu), GPU bytes %zu (%.1f MiB), programs %zu, "
                  "RSS %s, GL error %s",
                  s.step, s.textures(), s.liveTextures, s.freeTextures, s.createdTextures, s.gpuBytes,
                  double(s.gpuBytes) / (1024.0 * 1024.0), s.programs,
                  s.rssKiB < 0 ? "n/a" : (std::to_string(s.rssKiB) + " KiB").c_str(),
                  s.glError == GL_NO_ERROR ? "none" : glErrorName(s.glError));
    return buf;
}

struct Options {
    long steps = 20000;
    long warmupSteps = 0;                           // 0: one step past the first epoch, loss read and snapshot
    std::vector<int> layers = {784, 256, 128, 10};  // input, hidden..., classes
    int batch = 128;
    int rows = 2000;           // training rows (synthetic): 15 batches of 128 and a short one of 80
    int validationRows = 256;  // evaluated at every epoch end
    int lossEvery = 50;        // asynchronous loss reads
    uint32_t seed = 7;
};

struct Result {
    Snapshot start, end;
    double seconds = 0;  // wall time of the measured steps (start .. end)
    float firstLoss = NAN, lastLoss = NAN;
    long lossReads = 0;
};

// Synthetic classification data: x uniform in [0, 1), the label of a row is
// the argmax of a fixed random linear map of it, so the loss has something
// to learn and goes down.
inline void makeData(int rows, int in, int classes, uint32_t seed, HostMatrix& x, std::vector<int>& y) {
    x = HostMatrix(rows, in);
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = ref::uniform01<float>(seed, 0, uint32_t(i));
    std::vector<float> w(size_t(in) * size_t(classes));
    for (size_t i = 0; i < w.size(); ++i) w[i] = ref::uniform01<float>(seed, 1, uint32_t(i)) - 0.5f;
    y.assign(size_t(rows), 0);
    for (int r = 0; r < rows; ++r) {
        float best = -INFINITY;
        for (int c = 0; c < classes; ++c) {
            float s = 0;
            for (int k = 0; k < in; ++k) s += x(r, k) * w[size_t(k) * size_t(classes) + size_t(c)];
            if (s > best) best = s, y[size_t(r)] = c;
        }
    }
}

// Trains for o.steps steps; `progress`, if set, sees a snapshot every
// `every` steps (and the start and end ones).
inline Result run(Context& ctx, const Options& o, const std::function<void(const Snapshot&)>& progress = {},
                  long every = 0) {
    if (o.layers.size() < 2) throw ArgumentError("soak: need at least an input and an output size");
    const int in = o.layers.front(), classes = o.layers.back();
    HostMatrix x, vx;
    std::vector<int> y, vy;
    makeData(o.rows, in, classes, o.seed, x, y);
    makeData(o.validationRows, in, classes, o.seed + 1, vx, vy);
    const Targets vt(vy);

    Sequential model(ctx, in);
    for (size_t i = 1; i + 1 < o.layers.size(); ++i) {
        Dense hidden;
        hidden.units = o.layers[i];
        hidden.activation = Activation::ReLU;
        model.add(hidden);
    }
    Dropout dropout;
    dropout.rate = 0.1f;
    model.add(dropout);
    Dense out;
    out.units = classes;
    model.add(out);
    CompileOptions c;
    c.clipNorm = 5.0f;  // exercises the norm and clip passes too
    c.seed = o.seed;
    model.compile(c);

    const long stepsPerEpoch = (o.rows + o.batch - 1) / o.batch;  // the last may be short
    FitOptions f;
    // Warm-up: past the first epoch end (every plan), the first loss read and the
    // first snapshot for a lost context (their read-back buffers, and whatever the
    // driver builds the first time it reads into one), so that nothing made once
    // counts as growth.
    const long warmup =
        o.warmupSteps > 0 ? o.warmupSteps : std::max({stepsPerEpoch, long(o.lossEvery), long(f.snapshotEvery)}) + 1;
    f.batchSize = o.batch;
    f.epochs = int((o.steps + warmup + stepsPerEpoch - 1) / stepsPerEpoch);
    f.lossEvery = o.lossEvery;
    f.asyncLoss = true;
    f.validationX = &vx;
    f.validationY = &vt;
    Result r;
    Callbacks cb;
    cb.onStep = [&](const StepInfo& s) {
        if (!s.lossRead || !std::isfinite(s.loss)) return;
        if (s.step > warmup && std::isnan(r.firstLoss)) r.firstLoss = s.loss;
        r.lastLoss = s.loss;
        r.lossReads++;
    };
    model.beginFit(x, y, f, cb);
    while (model.step() < warmup && model.stepOnce()) {
    }
    ctx.finish();
    r.start = snapshot(ctx, model.step());
    if (progress) progress(r.start);
    const auto t0 = std::chrono::steady_clock::now();
    const long endStep = warmup + o.steps;
    while (model.step() < endStep && model.stepOnce())
        if (progress && every > 0 && (model.step() - warmup) % every == 0 && model.step() < endStep)
            progress(snapshot(ctx, model.step()));
    ctx.finish();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.end = snapshot(ctx, model.step());
    if (progress) progress(r.end);
    return r;
}

}  // namespace gltrain::soak
