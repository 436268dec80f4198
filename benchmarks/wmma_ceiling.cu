// The ceiling of nvcuda::wmma on this GPU (benchmarks/wmma_ceiling.py runs it): each warp
// runs mma_sync on fragments loaded once from memory, so that the compiler cannot fold any
// multiply (with constant fragments it computes only half of them), into 8 independent
// accumulators, with no memory traffic in the loop. Nothing written with wmma can multiply
// faster than this.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;
#if defined(TC_BF16)
typedef __nv_bfloat16 frag_t; typedef __nv_bfloat16 elem_t;
#define FRAG_K 16
#elif defined(TC_TF32)
typedef wmma::precision::tf32 frag_t; typedef float elem_t;
#define FRAG_K 8
#else
typedef __half frag_t; typedef __half elem_t;
#define FRAG_K 16
#endif
extern "C" __global__ void wmma_ceiling(const elem_t* src, float* out, int iters) {
    wmma::fragment<wmma::matrix_a, 16, 16, FRAG_K, frag_t, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, FRAG_K, frag_t, wmma::row_major> b[4];
    wmma::fragment<wmma::accumulator, 16, 16, FRAG_K, float> c[8];
    for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], src + 256 * i, 16);
    for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(b[i], src + 512 + 256 * i, 16);
    for (int j = 0; j < 8; ++j) wmma::fill_fragment(c[j], 0.0f);
    for (int it = 0; it < iters; ++it)
        #pragma unroll
        for (int j = 0; j < 8; ++j) wmma::mma_sync(c[j], a[j / 4], b[j % 4], c[j]);
    for (int j = 0; j < 8; ++j)
        wmma::store_matrix_sync(out + (blockIdx.x * blockDim.x / 32 + threadIdx.x / 32) * 2048 + 256 * j, c[j], 16, wmma::mem_row_major);
}
