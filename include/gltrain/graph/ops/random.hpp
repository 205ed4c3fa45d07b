// Random ops: dropout's mask, drawn from the counter hash of gltrain/random.hpp
// so that the GPU (util/random_fill), the CPU and the oracle draw the same
// numbers for (seed, step, element): M = uniform01 >= rate ? 1 / (1 - rate) : 0.
// The plan sets the step each training step (GpuPlan::randomPasses, CpuPlan::run).
#pragma once
#include "gltrain/graph/op.hpp"
#include "gltrain/ops/random.hpp"
#include "gltrain/random.hpp"

namespace gltrain::graph {

// A mask shaped like x (which it does not read: no gradient flows through it).
struct DropoutMask {
    static constexpr const char* kName = "dropout_mask";
    static constexpr int kInputs = 1, kOutputs = 1;
    static constexpr unsigned kGradInputs = 0, kGradOutputs = 0;
    float rate = 0.5f;
    uint32_t seed = 1;
    Shapes shapes(const Shapes& in) const {
        if (!(rate >= 0.0f && rate < 1.0f)) throw ShapeError("the rate must be in [0, 1), got " + std::to_string(rate));
        return {in[0]};
    }
    // The step a mask is drawn for: the training step, in the 24 bits a float uniform holds exactly.
    static uint32_t stepKey(long step) { return uint32_t(step & 0xFFFFFF); }
    template <class R>
    void gpu(R& r) const {
        r.addRandomPass(recordDropoutMask(r.list(), r.out(0), seed, 0, rate));
    }
    template <class Ctx>
    void cpu(Ctx& c) const {
        HostMatrix& m = c.out(0);
        const float keep = 1.0f / (1.0f - rate);
        const uint32_t step = stepKey(c.step());
        for (size_t j = 0; j < m.data.size(); ++j) m.data[j] = uniform01(seed, step, uint32_t(j)) >= rate ? keep : 0.0f;
    }
    static std::vector<Example<DropoutMask>> examples() {
        return {{{0.3f, 5}, {{Shape::batched({9})}}}, {{0.0f, 2}, {{Shape::batched({2, 3})}}}};
    }
};

}  // namespace gltrain::graph
