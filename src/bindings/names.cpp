// The module's version and the activation, optimizer and loss names the API takes.
#include <emscripten/bind.h>

#include <string>

#include "gltrain/activation.hpp"
#include "values.hpp"

namespace gltrain::js {
namespace {

val activationNames() {
    val a = val::array();
    for (Activation x : kAllActivations) a.call<void>("push", std::string(activationName(x)));
    return a;
}

}  // namespace
}  // namespace gltrain::js

EMSCRIPTEN_BINDINGS(gltrain_names) {
    using namespace emscripten;
    using namespace gltrain::js;
    function("activationNames", &activationNames);
    function("optimizerNames", +[]() { return listOf({"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop"}); });
    function("lossNames", +[]() { return listOf({"softmax_cross_entropy", "mse", "binary_cross_entropy"}); });
    function("version", +[]() { return std::string("0.1.0"); });
}
