// The smoke example: create a context, print what the device can do, upload
// two matrices, add them with a GLSL kernel, read the sum back and check it.
// Natively it runs on EGL (llvmpipe here); built with em++ it runs the same
// code on WebGL2 in a browser.
#include <gltrain/backend_choice.hpp>
#include <gltrain/gltrain.hpp>

#include <cstdio>
#include <iostream>

int main() {
    try {
        gltrain::Context ctx;
        gltrain::chooseFasterBackend(ctx);  // Auto's timing too: the report says which engine trains models
        std::cout << ctx.caps();
        gltrain::HostMatrix a(2, 3, {1, 2, 3, 4, 5, 6}), b(2, 3, {10, 20, 30, 40, 50, 60});
        gltrain::Tensor ta(ctx, a), tb(ctx, b), sum(ctx, 2, 3);
        gltrain::Pass(ctx, "forward/binary", {{"OP(a, b)", "((a) + (b))"}})
            .input("A", ta)
            .input("B", tb)
            .output(sum)
            .run();
        gltrain::HostMatrix s = sum.download();
        std::cout << "A + B on the GPU =\n";
        bool ok = true;
        for (int r = 0; r < s.rows; ++r) {
            for (int c = 0; c < s.cols; ++c) {
                std::printf(" %6.1f", double(s(r, c)));
                ok = ok && s(r, c) == a(r, c) + b(r, c);
            }
            std::printf("\n");
        }
        std::cout << (ok ? "smoke: OK" : "smoke: WRONG RESULT") << std::endl;
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "smoke: " << e.what() << std::endl;
        return 1;
    }
}
