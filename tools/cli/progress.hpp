// Training progress on the terminal: a bar redrawn in place (\r) when stdout
// is a terminal, plain key=value lines otherwise (logs, pipes, CI), so a
// script can read them:
//
//   step=120/936 epoch=1/2 loss=0.5123 samples/s=1543 eta=0:29
//   epoch=1/2 step=468 loss=0.6012 accuracy=0.7921 time=15.2s samples/s=1538
//
// Every line is flushed as it is written: a reader of a log file or a pipe
// sees each step when it happens.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "gltrain/sequential.hpp"

namespace gltrain::cli {

class Progress {
public:
    enum class Style { Bar, Lines };

    // Steps run from firstStep (a resumed run starts later) to endStep;
    // Lines prints every logEvery steps and the last.
    Progress(Style style, std::FILE* out, long firstStep, long endStep, int epochs, long logEvery)
        : style_(style),
          out_(out),
          firstStep_(firstStep),
          endStep_(endStep),
          epochs_(epochs),
          logEvery_(logEvery),
          start_(Clock::now()) {}

    void step(const StepInfo& s) {
        if (s.lossRead) loss_ = s.loss;
        const double elapsed = seconds(start_);
        const double rate = double(s.step - firstStep_) / std::max(elapsed, 1e-9);  // steps/s in this run
        const double eta = double(endStep_ - s.step) / std::max(rate, 1e-9);
        const std::string lossText = std::isnan(loss_) ? "-" : fixed(loss_, 4);
        const int epoch = s.epoch + 1;
        if (style_ == Style::Lines) {
            if (s.step % logEvery_ != 0 && s.step != endStep_) return;
            std::fprintf(out_, "step=%ld/%ld epoch=%d/%d loss=%s samples/s=%.0f eta=%s\n", s.step, endStep_, epoch,
                         epochs_, lossText.c_str(), s.samplesPerSecond, clock(eta).c_str());
            std::fflush(out_);
            return;
        }
        // A terminal: redraw at most 10 times a second, and the last step.
        if (s.step != endStep_ && drawn_ && seconds(lastDraw_) < 0.1) return;
        lastDraw_ = Clock::now();
        drawn_ = true;
        const int width = 24;
        const double done = double(s.step) / double(endStep_);
        const int filled = int(std::floor(done * width));
        std::string bar(size_t(filled), '#');
        bar.resize(size_t(width), '.');
        std::fprintf(out_, "\repoch %d/%d [%s] %ld/%ld loss %s  %.0f samples/s  ETA %s\x1b[K", epoch, epochs_,
                     bar.c_str(), s.step, endStep_, lossText.c_str(), s.samplesPerSecond, clock(eta).c_str());
        std::fflush(out_);
    }

    void epoch(const EpochInfo& e) {
        std::string line = "epoch=" + std::to_string(e.epoch + 1) + "/" + std::to_string(epochs_) +
                           " step=" + std::to_string(e.step) + " loss=" + fixed(e.loss, 4);
        if (!std::isnan(e.accuracy)) line += " accuracy=" + fixed(e.accuracy, 4);
        if (!std::isnan(e.valLoss)) line += " val_loss=" + fixed(e.valLoss, 4);
        if (!std::isnan(e.valAccuracy)) line += " val_accuracy=" + fixed(e.valAccuracy, 4);
        for (const auto& [name, value] : e.metrics) line += " " + name + "=" + fixed(value, 4);
        line += " time=" + fixed(float(e.seconds), 1) + "s samples/s=" + fixed(float(e.samplesPerSecond), 0);
        print(line);
    }

    // A line of its own (the bar, if drawn, moves below it).
    void print(const std::string& line) {
        if (style_ == Style::Bar && drawn_) std::fputs("\r\x1b[K", out_);
        std::fprintf(out_, "%s\n", line.c_str());
        std::fflush(out_);
        drawn_ = false;
    }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
    static std::string fixed(float v, int digits) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", digits, double(v));
        return buf;
    }
    // m:ss, or h:mm:ss from an hour.
    static std::string clock(double s) {
        if (!std::isfinite(s) || s > 1e7) return "?";
        const long t = long(std::lround(s));
        char buf[32];
        if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
        else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
        return buf;
    }

    Style style_;
    std::FILE* out_;
    long firstStep_, endStep_;
    int epochs_;
    long logEvery_;
    Clock::time_point start_, lastDraw_{};
    bool drawn_ = false;
    float loss_ = std::nanf("");
};

}  // namespace gltrain::cli
