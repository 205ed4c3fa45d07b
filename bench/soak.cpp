// Soak benchmark: trains the Fashion-MNIST-sized MLP (784-256-128-10, batch
// 128, Adam, dropout, clip by norm, async loss reads, a validation pass every
// epoch) on synthetic data for many steps and reports textures, GPU bytes,
// programs, host RSS and GL errors at the start (after warm-up) and the end.
//   bench_soak [--steps N] [--layers 784,256,128,10] [--batch B] [--every N] [--rss-tolerance-kib K]
// Exit status 1 if a texture count, the GPU bytes or the program count
// changed, GL reported an error, or RSS grew by more than the tolerance
// (default 16384 KiB); the figures are printed either way.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>

#include "soak.hpp"

using namespace gltrain;

int main(int argc, char** argv) {
    soak::Options o;
    long every = 2000, rssTolerance = 16384;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "bench_soak: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        try {
            if (a == "--steps") o.steps = std::stol(value());
            else if (a == "--batch") o.batch = std::stoi(value());
            else if (a == "--every") every = std::stol(value());
            else if (a == "--rss-tolerance-kib") rssTolerance = std::stol(value());
            else if (a == "--layers") {
                o.layers.clear();
                std::stringstream ss(value());
                for (std::string part; std::getline(ss, part, ',');) o.layers.push_back(std::stoi(part));
            } else {
                std::cerr << "bench_soak: unknown argument '" << a
                          << "' (--steps N, --layers a,b,..., --batch B, --every N, --rss-tolerance-kib K)\n";
                return 2;
            }
        } catch (const std::exception&) {
            std::cerr << "bench_soak: bad value for " << a << "\n";
            return 2;
        }
    }
    try {
        ContextOptions gpu;
        gpu.backend =
            BackendPreference::Gpu;  // the GPU's textures and memory (Auto may train on the CPU on a software renderer)
        Context ctx(gpu);
        std::string layers;
        for (int l : o.layers) layers += (layers.empty() ? "" : "-") + std::to_string(l);
        std::printf("soak: MLP %s, batch %d, %ld steps after warm-up, synthetic data (%d rows, %d validation)\n",
                    layers.c_str(), o.batch, o.steps, o.rows, o.validationRows);
        std::printf("renderer: %s\n", ctx.caps().renderer.c_str());
        std::fflush(stdout);
        const soak::Result r = soak::run(
            ctx, o,
            [](const soak::Snapshot& s) {
                std::printf("%s\n", soak::describe(s).c_str());
                std::fflush(stdout);
            },
            every);
        const soak::Snapshot &a = r.start, &b = r.end;
        const long rssGrowth = a.rssKiB >= 0 && b.rssKiB >= 0 ? b.rssKiB - a.rssKiB : 0;
        std::printf("steps/s: %.1f (%.1f samples/s), loss %.4f -> %.4f\n", double(b.step - a.step) / r.seconds,
                    double(b.step - a.step) * o.batch / r.seconds, double(r.firstLoss), double(r.lastLoss));
        bool ok = true;
        auto check = [&](bool good, const std::string& what) {
            std::printf("%s: %s\n", good ? "flat" : "GREW", what.c_str());
            ok = ok && good;
        };
        check(a.liveTextures == b.liveTextures && a.freeTextures == b.freeTextures,
              "textures " + std::to_string(a.textures()) + " -> " + std::to_string(b.textures()));
        check(a.createdTextures == b.createdTextures,
              "textures created " + std::to_string(a.createdTextures) + " -> " + std::to_string(b.createdTextures));
        check(a.gpuBytes == b.gpuBytes,
              "GPU bytes " + std::to_string(a.gpuBytes) + " -> " + std::to_string(b.gpuBytes));
        check(a.programs == b.programs, "programs " + std::to_string(a.programs) + " -> " + std::to_string(b.programs));
        check(rssGrowth <= rssTolerance, "RSS " + std::to_string(a.rssKiB) + " -> " + std::to_string(b.rssKiB) +
                                             " KiB (" + (rssGrowth >= 0 ? "+" : "") + std::to_string(rssGrowth) +
                                             " KiB, tolerance " + std::to_string(rssTolerance) + " KiB)");
        check(a.glError == GL_NO_ERROR && b.glError == GL_NO_ERROR,
              std::string("GL errors: ") + (b.glError == GL_NO_ERROR && a.glError == GL_NO_ERROR ? "none" : "some"));
        std::printf("soak: %s\n", ok ? "flat" : "NOT FLAT");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "bench_soak: " << e.what() << "\n";
        return 1;
    }
}
