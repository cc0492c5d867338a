// What nvcc provides, for host C++ (the tests' emulation of the generated
// `.cu` without a GPU): blocks run one after another, a kernel's call per
// block; inside it, each phase of thread code (`PL_PHASE { .. }`, between
// barriers) runs for every thread of the block before the next begins, so
// `__syncthreads()` holds without doing anything and `__shared__` arrays
// are the call's locals. Device memory is host memory, copies are memcpy.
// Then, for nvcc and the host alike, the launch macro and the pool of
// device memory.
#ifndef __CUDACC__
#include <stdlib.h>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __syncthreads()
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
static dim3 blockIdx, threadIdx, blockDim, gridDim;
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
static cudaError_t cudaMalloc(void** p, size_t n) {
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static cudaError_t cudaFree(void* p) {
    free(p);
    return cudaSuccess;
}
static cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
    memcpy(d, s, n);
    return cudaSuccess;
}
static cudaError_t cudaGetLastError() { return cudaSuccess; }
static cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
#define PL_TRAP() abort()
#define PL_LAUNCH(kernel, grid, block, ...)                                    \
    do {                                                                       \
        gridDim = (grid);                                                      \
        blockDim = (block);                                                    \
        for (unsigned bz = 0; bz < gridDim.z; bz++)                            \
            for (unsigned by = 0; by < gridDim.y; by++)                        \
                for (unsigned bx = 0; bx < gridDim.x; bx++) {                  \
                    blockIdx = dim3(bx, by, bz);                               \
                    threadIdx = dim3(0, 0, 0);                                 \
                    kernel(__VA_ARGS__);                                       \
                }                                                              \
    } while (0)
#define PL_PHASE                                                               \
    for (unsigned pl_tz = 0; pl_tz < blockDim.z; pl_tz++)                      \
        for (unsigned pl_ty = 0; pl_ty < blockDim.y; pl_ty++)                  \
            for (unsigned pl_tx = 0; pl_tx < blockDim.x; pl_tx++)              \
                if ((threadIdx = dim3(pl_tx, pl_ty, pl_tz)), true)
#else
#define PL_TRAP() __trap()
#define PL_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block)>>>(__VA_ARGS__)
// Every thread runs a phase of thread code; barriers lie between phases.
#define PL_PHASE
#endif

// The most elements a buffer may have for the kernels with 32-bit offsets
// (the tests lower it to run the others).
#ifndef PL_NARROW_LIMIT
#define PL_NARROW_LIMIT 2147483647
#endif

// Device memory pooled across launches, as Halide's runtime does:
// cudaMalloc and cudaFree synchronize the device and cost more than a
// small kernel. A released block is kept for the next request it fits (at
// most twice its size); past 1 GiB of kept blocks, released ones are
// freed. Host code only; any thread may launch.
#include <mutex>
#include <vector>
namespace pl {
struct PoolBlock {
    void* ptr;
    size_t bytes;
    bool used;
};
static std::mutex pool_lock;
static std::vector<PoolBlock> pool;
static size_t pool_kept = 0;
static cudaError_t device_alloc(void** p, size_t bytes) {
    if (bytes == 0) bytes = 1;
    {
        std::lock_guard<std::mutex> g(pool_lock);
        PoolBlock* best = 0;
        for (auto& b : pool)
            if (!b.used && b.bytes >= bytes && b.bytes / 2 <= bytes && (!best || b.bytes < best->bytes)) best = &b;
        if (best) {
            best->used = true;
            pool_kept -= best->bytes;
            *p = best->ptr;
            return cudaSuccess;
        }
    }
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) return e;
    std::lock_guard<std::mutex> g(pool_lock);
    pool.push_back(PoolBlock{*p, bytes, true});
    return cudaSuccess;
}
static void device_release(void* p) {
    std::lock_guard<std::mutex> g(pool_lock);
    for (size_t i = 0; i < pool.size(); i++) {
        if (pool[i].ptr != p) continue;
        if (pool_kept + pool[i].bytes > ((size_t)1 << 30)) {
            cudaFree(p);
            pool.erase(pool.begin() + i);
        } else {
            pool[i].used = false;
            pool_kept += pool[i].bytes;
        }
        return;
    }
}
} // namespace pl
