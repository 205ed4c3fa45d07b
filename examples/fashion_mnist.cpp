// Trains a classifier on Fashion-MNIST (Debian's dataset-fashion-mnist IDX
// files) on the GPU and prints the loss per epoch, samples/s and, as the
// last line, test_accuracy=<value>.
//   fashion_mnist [--model mlp|cnn|cnn-bn] [--epochs N] [--batch B] [--data DIR] [--lr X]
//                 [--limit N] [--min-accuracy A] [--backend auto|gpu|cpu] [--info]
// --min-accuracy makes the exit status non-zero below A (used by the tests).
// --backend: the engine (ContextOptions::backend; default auto, which may take
// the CPU on a software renderer); the line "backend: ..." says which and why.
// Models: mlp 784-256-128-10 (batch 128 by default); cnn, the TensorFlow.js
// MNIST example (conv 8@5x5 ReLU, max pool 2, conv 16@5x5 ReLU, max pool 2,
// dense 10; batch 64); cnn-bn, two 3x3 conv blocks (32, 64) with batch
// normalization (batch 64).
#include <gltrain/backend_choice.hpp>
#include <gltrain/gltrain.hpp>
#include <gltrain/idx.hpp>
#include <gltrain/sequential.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    std::string model = "mlp", dir = gltrain::kFashionMnistDir, backend = "auto";
    int epochs = 2, batch = 0, limit = 0;
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
            else if (a == "--backend") backend = value();
            else if (a == "--info") info = true;
            else {
                std::cerr
                    << "fashion_mnist: unknown argument '" << a
                    << "' (--model mlp|cnn|cnn-bn, --epochs N, --batch B, --data DIR, --lr X, --limit N, --min-accuracy A, "
                       "--backend auto|gpu|cpu, --info)\n";
                return 2;
            }
        } catch (const std::exception&) {
            std::cerr << "fashion_mnist: bad value for " << a << "\n";
            return 2;
        }
    }
    if (model != "mlp" && model != "cnn" && model != "cnn-bn") {
        std::cerr << "fashion_mnist: unknown model '" << model << "' (available: mlp, cnn, cnn-bn)\n";
        return 2;
    }
    if (batch == 0) batch = model == "mlp" ? 128 : 64;
    if (backend != "auto" && backend != "gpu" && backend != "cpu") {
        std::cerr << "fashion_mnist: unknown backend '" << backend << "' (auto, gpu, cpu)\n";
        return 2;
    }
    try {
        gltrain::ContextOptions options;
        options.backend = backend == "cpu"   ? gltrain::BackendPreference::Cpu
                          : backend == "gpu" ? gltrain::BackendPreference::Gpu
                                             : gltrain::BackendPreference::Auto;
        gltrain::Context ctx(options);
        gltrain::chooseFasterBackend(ctx);
        if (info) std::cout << ctx.caps();
        std::printf("renderer: %s\n", ctx.caps().renderer.c_str());
        std::printf("backend: %s (%s)\n", gltrain::backendName(ctx.backend()), ctx.caps().backendReason.c_str());
        gltrain::Dataset train = gltrain::loadFashionMnist(dir, gltrain::Split::Train);
        gltrain::Dataset test = gltrain::loadFashionMnist(dir, gltrain::Split::Test);
        if (limit > 0 && limit < train.size()) {
            train.images = gltrain::HostMatrix(
                limit, train.images.cols,
                std::vector<float>(train.images.data.begin(),
                                   train.images.data.begin() + std::ptrdiff_t(limit) * train.images.cols));
            train.labels.resize(size_t(limit));
        }
        std::printf("data: %d training and %d test images of %dx%d from %s\n", int(train.size()), int(test.size()),
                    train.imageRows, train.imageCols, dir.c_str());

        using namespace gltrain;
        Sequential net(ctx, Shape3{train.imageRows, train.imageCols, 1});
        if (model == "mlp") {
            net.add(Flatten{}).add(Dense{256, Activation::ReLU}).add(Dense{128, Activation::ReLU}).add(Dense{10});
        } else if (model == "cnn") {
            // He initialisation suits the ReLU convolutions (the tfjs example uses variance scaling).
            const Initializer he{Initializer::HeUniform};
            net.add(Conv2D{8, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
            net.add(Conv2D{16, 5, 1, Padding::Valid, Activation::ReLU, 0.01f, he}).add(MaxPool2D{2});
            net.add(Flatten{}).add(Dense{10});
        } else {
            net.add(Conv2D{32, 3, 1, Padding::Same}).add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
            net.add(MaxPool2D{2});
            net.add(Conv2D{64, 3, 1, Padding::Same}).add(BatchNormalization{}).add(ActivationLayer{Activation::ReLU});
            net.add(MaxPool2D{2}).add(Flatten{}).add(Dense{10});
        }
        std::printf("model: %s, batch %d\n", model.c_str(), batch);
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
