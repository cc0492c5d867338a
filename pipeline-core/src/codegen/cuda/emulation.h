// What nvcc provides, for host C++ (the tests' emulation of the generated
// `.cu` without a GPU): blocks and threads run one after another, each
// thread to its end (the kernels have no barriers yet), device memory is
// host memory, copies are memcpy.
#ifndef __CUDACC__
#include <stdlib.h>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
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
                for (unsigned bx = 0; bx < gridDim.x; bx++)                    \
                    for (unsigned tz = 0; tz < blockDim.z; tz++)               \
                        for (unsigned ty = 0; ty < blockDim.y; ty++)           \
                            for (unsigned tx = 0; tx < blockDim.x; tx++) {     \
                                blockIdx = dim3(bx, by, bz);                   \
                                threadIdx = dim3(tx, ty, tz);                  \
                                kernel(__VA_ARGS__);                           \
                            }                                                  \
    } while (0)
#else
#define PL_TRAP() __trap()
#define PL_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block)>>>(__VA_ARGS__)
#endif
