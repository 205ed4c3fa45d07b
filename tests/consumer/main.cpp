// Links against the installed gltrain, checks its version header and runs one kernel.
#include <gltrain/backend_choice.hpp>
#include <gltrain/gltrain.hpp>
#include <gltrain/version.hpp>

#include <iostream>
#include <memory>

constexpr bool same(const char* a, const char* b) { return *a == *b && (*a == '\0' || same(a + 1, b + 1)); }
static_assert(same(GLTRAIN_VERSION, GLTRAIN_FOUND_VERSION),
              "the installed gltrain/version.hpp differs from the version find_package() found");

int main() {
    const std::unique_ptr<gltrain::Context> context = gltrain::makeContext();
    gltrain::Context& ctx = *context;
    gltrain::Tensor a(ctx, gltrain::HostMatrix(1, 3, {1, 2, 3}));
    gltrain::Tensor b(ctx, gltrain::HostMatrix(1, 3, {10, 20, 30}));
    gltrain::Tensor c(ctx, 1, 3);
    gltrain::Pass(ctx, "forward/binary", {{"OP(a, b)", "((a) + (b))"}}).input("A", a).input("B", b).output(c).run();
    auto r = c.download();
    std::cout << "consumer: " << r.data[0] << " " << r.data[1] << " " << r.data[2] << "\n";
    return r.data[2] == 33.0f ? 0 : 1;
}
