// One part of a training step and its time, as a profile reports it: a GPU
// pass (PassList::profile) or a CPU op (graph::CpuPlan::profile).
#pragma once
#include <string>

namespace gltrain {

struct PassTiming {
    std::string kernel;
    double ms = 0;          // median over the runs
    bool gpuTimer = false;  // timed by a GPU timer query; else on the host, the pass waited for
};

}  // namespace gltrain
