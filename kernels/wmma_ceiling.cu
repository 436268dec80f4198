// The ceiling of nvcuda::wmma on this GPU (`python -m tiling_course.measure.tune --ceiling` times it):
// each warp runs mma_sync on fragments loaded once from memory, so that the compiler cannot
// fold any multiply (with constant fragments it computes only half of them), into 8
// independent accumulators, with no memory traffic in the loop. Nothing written with wmma
// can multiply faster than this.
//
// Launch: blocks of whole warps, src holding 1,536 elements (two 16 x FRAG_K tiles of M,
// four FRAG_K x 16 tiles of N, each with rows 16 apart), out 2,048 floats per warp: warp w
// stores accumulator j, iters times a[j / 4] * b[j % 4], at out[w * 2048 + 256 * j].
#include <mma.h>
#if defined(TC_BF16)
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;
typedef __nv_bfloat16 frag_t;
#define FRAG_K 16
#elif defined(TC_TF32)
typedef float elem_t;
typedef nvcuda::wmma::precision::tf32 frag_t;
#define FRAG_K 8
#else
#include <cuda_fp16.h>
typedef __half elem_t;
typedef __half frag_t;
#define FRAG_K 16
#endif
using namespace nvcuda;

template <class Frag>
__device__ __forceinline__ void load_rounded(Frag& f, const elem_t* p) {
    wmma::load_matrix_sync(f, p, 16);
#if defined(TC_TF32)
    for (int i = 0; i < f.num_elements; ++i)
        f.x[i] = wmma::__float_to_tf32(f.x[i]);
#endif
}

extern "C" __global__ void wmma_ceiling(const elem_t* src, float* out, int iters) {
    wmma::fragment<wmma::matrix_a, 16, 16, FRAG_K, frag_t, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, FRAG_K, frag_t, wmma::row_major> b[4];
    wmma::fragment<wmma::accumulator, 16, 16, FRAG_K, float> c[8];
    for (int i = 0; i < 2; ++i)
        load_rounded(a[i], src + 256 * i);
    for (int i = 0; i < 4; ++i)
        load_rounded(b[i], src + 512 + 256 * i);
    for (int j = 0; j < 8; ++j)
        wmma::fill_fragment(c[j], 0.0f);
    for (int it = 0; it < iters; ++it)
        #pragma unroll
        for (int j = 0; j < 8; ++j)
            wmma::mma_sync(c[j], a[j / 4], b[j % 4], c[j]);
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    for (int j = 0; j < 8; ++j)
        wmma::store_matrix_sync(out + warp * 2048 + 256 * j, c[j], 16, wmma::mem_row_major);
}
