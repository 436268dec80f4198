// The lecture's complete tiled matrix-multiply program, host code included, as nvcc
// compiles it. It queries the device, copies two random matrices to the GPU,
// multiplies them with the tiled kernel (static shared memory, TILE_WIDTH x TILE_WIDTH
// tiles), again with the tile size chosen from the device's shared memory (dynamic shared
// memory), times both with CUDA events, checks both against a CPU loop and frees
// everything. Usage: program_tiled [m k n [seed]]  (P is m x n = M (m x k) times N (k x n)).
// Runs unchanged with nvcc on a GPU and on cudacheck's CPU runtime (cudacheck.run_program).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

// Every runtime call returns a cudaError_t: stop with its name and the line if it failed.
#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "CUDA error %s at line %d: %s\n", cudaGetErrorName(err_),  \
                    __LINE__, cudaGetErrorString(err_));                               \
            exit(EXIT_FAILURE);                                                        \
        }                                                                              \
    } while (0)

// The kernels are the book's own (chapter 4): the bounds-checked tiled kernel, whose tile
// is fixed when the program is compiled, and the one whose tile comes from the launch.
// (The file program_tiled.cu #includes them; what the book shows and runs has them pasted in.)
#include "tiled_bounds.cu"
#include "tiled_dynamic.cu"

// A small linear congruential generator, so that a test can rebuild the same inputs:
// values uniform in [-1, 1).
static unsigned int state;
static float next_value() {
    state = state * 1103515245u + 12345u;
    return float((state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

// The largest error of P against a CPU product accumulated in double precision.
static double max_error(const float* M, const float* N, const float* P, int m, int k, int n) {
    double worst = 0.0;
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c) {
            double ref = 0.0;
            for (int i = 0; i < k; ++i) ref += double(M[r * k + i]) * double(N[i * n + c]);
            worst = fmax(worst, fabs(ref - double(P[r * n + c])));
        }
    return worst;
}

// One launch's result, as the host received it: a checksum, the error against the CPU, the time.
static void report(const char* what, const float* M, const float* N, const float* P, int m, int k, int n,
                   float ms) {
    double checksum = 0.0;
    for (int i = 0; i < m * n; ++i) checksum += P[i];
    double err = max_error(M, N, P, m, k, n);
    printf("%s: P[0][0] = %.6f, checksum = %.6f\n", what, P[0], checksum);
    printf("%s: max error %.3e against the CPU: %s; time %.3f ms\n", what, err, err < 1e-3 ? "PASSED" : "FAILED", ms);
}

int main(int argc, char** argv) {
    int m = argc > 3 ? atoi(argv[1]) : 100, k = argc > 3 ? atoi(argv[2]) : 70, n = argc > 3 ? atoi(argv[3]) : 45;
    state = argc > 4 ? unsigned(atoi(argv[4])) : 1u;

    // Step 1: ask the device what it offers.
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("Device: %s, compute capability %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    printf("Shared memory per block: %zu bytes; max threads per block: %d\n", prop.sharedMemPerBlock,
           prop.maxThreadsPerBlock);

    // Step 2: the matrices on the host (malloc) and room for them on the device (cudaMalloc),
    // sizes in bytes.
    size_t bytesM = size_t(m) * k * sizeof(float), bytesN = size_t(k) * n * sizeof(float);
    size_t bytesP = size_t(m) * n * sizeof(float);
    float* h_M = (float*)malloc(bytesM);
    float* h_N = (float*)malloc(bytesN);
    float* h_P = (float*)malloc(bytesP);
    for (int i = 0; i < m * k; ++i) h_M[i] = next_value();
    for (int i = 0; i < k * n; ++i) h_N[i] = next_value();
    float *d_M, *d_N, *d_P;
    CHECK(cudaMalloc(&d_M, bytesM));
    CHECK(cudaMalloc(&d_N, bytesN));
    CHECK(cudaMalloc(&d_P, bytesP));

    // Step 3: copy the inputs to the device: destination, source, bytes, direction.
    CHECK(cudaMemcpy(d_M, h_M, bytesM, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_N, h_N, bytesN, cudaMemcpyHostToDevice));

    // Step 4: launch TILE_WIDTH x TILE_WIDTH blocks, enough to cover P (rounded up), timed
    // with events; a launch returns at once, and its errors wait for cudaGetLastError.
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    dim3 block(TILE_WIDTH, TILE_WIDTH);
    dim3 grid((n + TILE_WIDTH - 1) / TILE_WIDTH, (m + TILE_WIDTH - 1) / TILE_WIDTH);
    CHECK(cudaEventRecord(start));
    matmul_tiled_bounds<<<grid, block>>>(d_M, d_N, d_P, m, k, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));

    // Step 5: copy the result back (this waits for the kernel) and check it.
    CHECK(cudaMemcpy(h_P, d_P, bytesP, cudaMemcpyDeviceToHost));
    printf("Static tiles %d x %d, grid %u x %u\n", TILE_WIDTH, TILE_WIDTH, grid.x, grid.y);
    report("Static tiles", h_M, h_N, h_P, m, k, n, ms);

    // Step 6: the tile chosen at run time: the largest whose two tiles fit the device's
    // shared memory per block and whose threads fit a block; the launch passes the bytes.
    int tile = 32;
    while (2 * size_t(tile) * tile * sizeof(float) > prop.sharedMemPerBlock || tile * tile > prop.maxThreadsPerBlock)
        tile /= 2;
    size_t shared = 2 * size_t(tile) * tile * sizeof(float);
    dim3 block2(tile, tile);
    dim3 grid2((n + tile - 1) / tile, (m + tile - 1) / tile);
    CHECK(cudaMemset(d_P, 0, bytesP));
    CHECK(cudaEventRecord(start));
    matmul_tiled_dynamic<<<grid2, block2, shared>>>(d_M, d_N, d_P, m, k, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(h_P, d_P, bytesP, cudaMemcpyDeviceToHost));
    printf("Dynamic tiles %d x %d, %zu bytes of shared memory, grid %u x %u\n", tile, tile, shared, grid2.x, grid2.y);
    report("Dynamic tiles", h_M, h_N, h_P, m, k, n, ms);

    // Step 7: clean up: every cudaMalloc gets its cudaFree, every malloc its free.
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(d_M));
    CHECK(cudaFree(d_N));
    CHECK(cudaFree(d_P));
    free(h_M);
    free(h_N);
    free(h_P);
    return 0;
}
