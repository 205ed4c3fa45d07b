// Trains a classifier on Fashion-MNIST (Debian's dataset-fashion-mnist IDX
// files) on the GPU and prints the loss per epoch, samples/s and, as the
// last line, test_accuracy=<value>.
//   fashion_mnist [--model mlp] [--epochs N] [--batch B] [--data DIR] [--lr X]
//                 [--limit N] [--min-accuracy A] [--info]
// --min-accuracy makes the exit status non-zero below A (used by the tests).
#include <gltrain/gltrain.hpp>
#include <gltrain/idx.hpp>
#include <gltrain/sequential.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    std::string model = "mlp", dir = gltrain::kFashionMnistDir;
    int epochs = 2, batch = 128, limit = 0;
    float lr = 1e-3f, minAccuracy = -1.0f;
    bool info = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "fashion_mnist: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        try {
            if (a == "--model") model = value();
            else if (a == "--epochs") epochs = std::stoi(value());
            else if (a == "--batch") batch = std::stoi(value());
            else if (a == "--data") dir = value();
            else if (a == "--lr") lr = std::stof(value());
            else if (a == "--limit") limit = std::stoi(value());
            else if (a == "--min-accuracy") minAccuracy = std::stof(value());
            else if (a == "--info") info = true;
            else {
                std::cerr << "fashion_mnist: unknown argument '" << a
                          << "' (--model mlp, --epochs N, --batch B, --data DIR, --lr X, --limit N, --min-accuracy A, --info)\n";
                return 2;
            }
        } catch (const std::exception&) {
            std::cerr << "fashion_mnist: bad value for " << a << "\n";
            return 2;
        }
    }
    if (model != "mlp") {
        std::cerr << "fashion_mnist: unknown model '" << model << "' (available: mlp)\n";
        return 2;
    }
    try {
        gltrain::Context ctx;
        if (info) std::cout << ctx.caps();
        std::printf("renderer: %s\n", ctx.caps().renderer.c_str());
        gltrain::Dataset train = gltrain::loadFashionMnist(dir, gltrain::Split::Train);
        gltrain::Dataset test = gltrain::loadFashionMnist(dir, gltrain::Split::Test);
        if (limit > 0 && limit < train.size()) {
            train.images = gltrain::HostMatrix(limit, train.images.cols,
                                               std::vector<float>(train.images.data.begin(),
                                                                  train.images.data.begin() + std::ptrdiff_t(limit) * train.images.cols));
            train.labels.resize(size_t(limit));
        }
        std::printf("data: %d training and %d test images of %dx%d from %s\n", int(train.size()), int(test.size()),
                    train.imageRows, train.imageCols, dir.c_str());

        gltrain::Sequential net(ctx, train.images.cols);
        net.add(gltrain::Dense{256, gltrain::Activation::ReLU})
            .add(gltrain::Dense{128, gltrain::Activation::ReLU})
            .add(gltrain::Dense{10});
        gltrain::CompileOptions c;
        c.optimizer.kind = gltrain::OptimizerKind::Adam;
        c.optimizer.lr = lr;
        net.compile(c);
        gltrain::FitOptions f;
        f.epochs = epochs;
        f.batchSize = batch;
        f.lossEvery = 50;
        gltrain::Callbacks cb;
        cb.onEpoch = [&](const gltrain::EpochInfo& e) {
            std::printf("epoch %d: loss=%.4f accuracy=%.4f time=%.1fs samples/s=%.0f\n", e.epoch + 1, double(e.loss),
                        double(e.accuracy), e.seconds, e.samplesPerSecond);
            std::fflush(stdout);
        };
        net.fit(train.images, train.labels, f, cb);
        gltrain::Evaluation ev = net.evaluate(test.images, test.labels);
        std::printf("test_loss=%.4f\n", double(ev.loss));
        std::printf("test_accuracy=%.4f\n", double(ev.accuracy));
        if (minAccuracy >= 0 && ev.accuracy < minAccuracy) {
            std::fprintf(stderr, "fashion_mnist: test accuracy %.4f is below the required %.4f\n", double(ev.accuracy),
                         double(minAccuracy));
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
        return 1;
    }
}
