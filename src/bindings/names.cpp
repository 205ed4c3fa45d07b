// The module's version and the activation, optimizer and loss names the API
// takes, from the tables next to their enums.
#include <emscripten/bind.h>

#include <string>

#include "gltrain/activation.hpp"
#include "gltrain/optimizer_config.hpp"
#include "gltrain/training_types.hpp"
#include "gltrain/version.hpp"
#include "values.hpp"

namespace gltrain::js {
namespace {

val activationNames() {
    val a = val::array();
    for (Activation x : kAllActivations) a.call<void>("push", std::string(activationName(x)));
    return a;
}
val optimizerNames() {
    val a = val::array();
    for (OptimizerKind k : kAllOptimizers) a.call<void>("push", std::string(optimizerName(k)));
    return a;
}
val lossNames() {
    val a = val::array();
    for (const LossName& l : kLossNames) a.call<void>("push", std::string(l.name));
    return a;
}

}  // namespace
}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_names) {
    using namespace emscripten;
    using namespace gltrain::js;
    function("activationNames", &activationNames);
    function("optimizerNames", &optimizerNames);
    function("lossNames", &lossNames);
    function(
        "version", +[]() { return std::string(GLTRAIN_VERSION); });
}
