// Times Halide's ahead-of-time CUDA pipelines of halide_aot.py on buffers
// already on the device, as benches/cuda/src/main.rs times ours: the same
// inputs (the hash of benches/halide_compare.rs), warm-up calls, then the
// median and the fastest of RUNS calls, each waiting for the device. Prints
// `RESULT name WxH median_ms min_ms` per pipeline and, with a directory
// argument, writes each output's bytes there as name.bin. With
// CUDA_COMPARE_ONLY=name it times that pipeline alone.
//
//     halide_cuda [DUMP_DIR]        (RUNS from CUDA_COMPARE_RUNS, default 50)
#include "HalideBuffer.h"
#include "HalideRuntimeCuda.h"
#include "halide_bilateral_grid.h"
#include "halide_copy.h"
#include "halide_copy_vec.h"
#include "halide_blur_root.h"
#include "halide_blur_shared.h"
#include "halide_blur_slide.h"
#include "halide_blur_wide.h"
#include "halide_blur_vec.h"
#include "halide_down2.h"
#include "halide_gauss5x5.h"
#include "halide_grey.h"
#include "halide_harris.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using Halide::Runtime::Buffer;

static uint32_t hash(uint32_t x, uint32_t y, uint32_t c) {
    uint32_t h = (x * 0x9E3779B1u) ^ (y * 0x85EBCA77u) ^ (c * 0xC2B2AE3Du);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

// The float inputs: a ramp in [0, 0.75) plus noise in [0, 0.0625).
static float ramp_and_noise(uint32_t x, uint32_t y, uint32_t c) {
    uint32_t ramp = ((x + 2 * y + 97 * c) % 4096) * 3072;
    uint32_t noise = (hash(x, y, c) >> 22) * 1024;
    return (float)(ramp + noise) / 16777216.0f;
}

static bool wanted(const char* name) {
    const char* only = getenv("CUDA_COMPARE_ONLY");
    return !only || std::string(only) == name;
}

static int runs() {
    const char* r = getenv("CUDA_COMPARE_RUNS");
    return r ? atoi(r) : 50;
}

template <typename T>
static void dump(const char* dir, const char* name, Buffer<T>& out) {
    if (!dir || !wanted(name)) return;
    out.copy_to_host();
    std::string path = std::string(dir) + "/" + name + ".bin";
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) { perror(path.c_str()); exit(1); }
    // Dense, x fastest: the layout of a Buffer of these extents.
    fwrite(out.data(), sizeof(T), out.number_of_elements(), f);
    fclose(f);
}

// Times `call` (which runs the pipeline once into `out`) and reports it.
template <typename T, typename F>
static void timed(const char* name, Buffer<T>& out, F call) {
    if (!wanted(name)) return;
    for (int i = 0; i < 3; i++) {
        if (call() != 0) { fprintf(stderr, "%s failed\n", name); exit(1); }
        out.device_sync();
    }
    std::vector<double> ms;
    for (int i = 0; i < runs(); i++) {
        auto t0 = std::chrono::steady_clock::now();
        call();
        out.device_sync();
        auto t1 = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    printf("RESULT %s %dx%d %.4f %.4f\n", name, out.dim(0).extent(), out.dim(1).extent(), ms[ms.size() / 2], ms[0]);
    fflush(stdout);
}

template <typename T>
static Buffer<T> on_device(Buffer<T> b) {
    b.set_host_dirty();
    if (b.copy_to_device(halide_cuda_device_interface()) != 0) { fprintf(stderr, "copy to device failed\n"); exit(1); }
    return b;
}

template <typename T>
static Buffer<T> output(int w, int h) {
    Buffer<T> b(w, h);
    if (b.device_malloc(halide_cuda_device_interface()) != 0) { fprintf(stderr, "device_malloc failed\n"); exit(1); }
    return b;
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : nullptr;
    {
        const int w = 6400, h = 4800;
        Buffer<uint16_t> in(w, h);
        in.for_each_element([&](int x, int y) { in(x, y) = hash(x, y, 0) >> 16; });
        in = on_device(in);
        auto out = output<uint16_t>(w, h);
        timed("blur_root", out, [&] { return halide_blur_root(in, out); });
        dump(dir, "blur_root", out);
        timed("blur_shared", out, [&] { return halide_blur_shared(in, out); });
        dump(dir, "blur_shared", out);
        timed("blur_wide", out, [&] { return halide_blur_wide(in, out); });
        dump(dir, "blur_wide", out);
        timed("blur_vec", out, [&] { return halide_blur_vec(in, out); });
        dump(dir, "blur_vec", out);
        timed("blur_slide", out, [&] { return halide_blur_slide(in, out); });
        dump(dir, "blur_slide", out);
        timed("copy", out, [&] { return halide_copy(in, out); });
        dump(dir, "copy", out);
        timed("copy_vec", out, [&] { return halide_copy_vec(in, out); });
        dump(dir, "copy_vec", out);
        auto half = output<uint16_t>(w / 2, h / 2);
        timed("down2", half, [&] { return halide_down2(in, half); });
        dump(dir, "down2", half);
    }
    {
        const int w = 4096, h = 4096;
        Buffer<uint8_t> in(w, h);
        in.for_each_element([&](int x, int y) { in(x, y) = hash(x, y, 0) >> 24; });
        in = on_device(in);
        auto out = output<uint8_t>(w, h);
        timed("gauss5x5", out, [&] { return halide_gauss5x5(in, out); });
        dump(dir, "gauss5x5", out);
    }
    {
        const int w = 1920, h = 1024;
        Buffer<float> in(w, h, 3);
        in.for_each_element([&](int x, int y, int c) { in(x, y, c) = ramp_and_noise(x, y, c); });
        in = on_device(in);
        auto out = output<float>(w, h);
        timed("harris", out, [&] { return halide_harris(in, out); });
        dump(dir, "harris", out);
    }
    {
        const int w = 3840, h = 2160;
        Buffer<uint8_t> in(w, h, 3);
        in.for_each_element([&](int x, int y, int c) { in(x, y, c) = hash(x, y, c) >> 24; });
        in = on_device(in);
        auto out = output<uint8_t>(w, h);
        timed("grey", out, [&] { return halide_grey(in, out); });
        dump(dir, "grey", out);
    }
    {
        const int w = 2560, h = 1536;
        Buffer<float> in(w, h);
        in.for_each_element([&](int x, int y) { in(x, y) = ramp_and_noise(x, y, 0); });
        in = on_device(in);
        auto out = output<float>(w, h);
        timed("bilateral_grid", out, [&] { return halide_bilateral_grid(in, out); });
        dump(dir, "bilateral_grid", out);
    }
    return 0;
}
