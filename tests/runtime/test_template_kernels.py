"""Template kernels on the CPU runtime exactly as C-linkage ones (issue 44, item 1): `__shared__`
variables declared in a template kernel, a member of a class template, an inline or an
internal-linkage device function template are shared memory (g++ drops the section of such a
static, frontend/cpu_build.wrapped_shared places it); `__cluster_dims__` naming a template
parameter gives each instance its own clusters; and wgmma's imm-scale and imm-trans operands
given as "n" constraint operands, the form CUTLASS's and fast.cu's wrappers use. Each kernel
runs plain and checked on fresh random inputs, compared bit for bit (exact arithmetic) or with
NumPy float64 within a stated bound."""
import numpy as np
import pytest

import cudacheck

# A block of N threads reverses its slice of `in` through a shared tile, after every block of its
# cluster of C has arrived on its mbarrier (a remote arrival: one from the previous rank), and
# writes its rank and the cluster's size. A cluster of one would fail at the remote arrival.
EXCHANGE = r'''
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ unsigned special(int which) {
    unsigned r;
    if (which) asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    else asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ void exchange_body(float* tile, unsigned long long* bar, int n, unsigned c, const float* in, float* out,
                              unsigned* ranks) {
    unsigned b = smem_u32(bar), rank = special(0), size = special(1), done = 0;
    tile[threadIdx.x] = in[blockIdx.x * n + threadIdx.x];
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    if (threadIdx.x == 0)
        asm volatile("{ .reg .b32 remote; mapa.shared::cluster.u32 remote, %0, %1; "
                     "mbarrier.arrive.shared::cluster.b64 _, [remote]; }" :: "r"(b), "r"((rank + 1) % c) : "memory");
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; "
                     "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b) : "memory");
    out[blockIdx.x * n + threadIdx.x] = 2.0f * tile[n - 1 - threadIdx.x];
    if (threadIdx.x == 0) { ranks[2 * blockIdx.x] = rank; ranks[2 * blockIdx.x + 1] = size; }
    cluster_sync();
}

namespace swap {
template <int N, int C>
__global__ void __launch_bounds__(N) __cluster_dims__(C, 1, 1) exchange(const float* in, float* out, unsigned* ranks) {
    __shared__ float tile[N];
    __shared__ __align__(8) unsigned long long bar[2];
    exchange_body(tile, &bar[1], N, C, in, out, ranks);
}
}
extern "C" __global__ void __launch_bounds__(64) __cluster_dims__(4, 1, 1)
exchange_c(const float* in, float* out, unsigned* ranks) {
    __shared__ float tile[64];
    __shared__ __align__(8) unsigned long long bar[2];
    exchange_body(tile, &bar[1], 64, 4, in, out, ranks);
}
'''


@pytest.fixture(scope="module")
def exchange():
    names = ("swap::exchange<64, 4>", "swap::exchange<32, 2>")
    return {check: cudacheck.RawModule(EXCHANGE, backend="cpu", check=check, name_expressions=names)
            for check in (False, True)}


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("kernel,n,c", [("swap::exchange<64, 4>", 64, 4), ("swap::exchange<32, 2>", 32, 2),
                                        ("exchange_c", 64, 4)])
def test_a_template_kernels_shared_memory_and_clusters_are_a_c_kernels(exchange, kernel, n, c, check, rng):
    blocks = 2 * c
    x = rng.standard_normal(blocks * n).astype(np.float32)
    out, ranks = np.full(blocks * n, np.nan, np.float32), np.zeros(2 * blocks, np.uint32)
    exchange[check].get_function(kernel)((blocks,), (n,), (x, out, ranks))
    assert np.array_equal(out, 2 * x.reshape(blocks, n)[:, ::-1].ravel())       # 2x is exact
    assert ranks.reshape(blocks, 2).tolist() == [[b % c, c] for b in range(blocks)]


# Shared variables in the other functions whose statics g++ gives vague linkage (a COMDAT
# section, or none of its own): an inline device function, a member function of a class
# template, a device function template of internal linkage. Each holds an mbarrier, which
# mbarrier.init accepts only in shared memory, and a tile the block reverses a row through.
VAGUE = r'''
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ void init_and_reverse(unsigned long long* bar, float* tile, const float* in, float* out, int n) {
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(bar)));
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[n - 1 - threadIdx.x] + 1.0f;
}
__device__ __forceinline__ void inline_fn(const float* in, float* out) {
    __shared__ unsigned long long bar;
    __shared__ float tile[32];
    init_and_reverse(&bar, tile, in, out, 32);
}
template <int N> struct Holder {
    __device__ void run(const float* in, float* out) {
        __shared__ unsigned long long bar[2];
        __shared__ float tile[N];
        init_and_reverse(&bar[1], tile, in, out, N);
    }
};
namespace {
template <int N> __device__ void internal_fn(const float* in, float* out) {
    __shared__ unsigned long long bar;
    __shared__ float tile[N];
    init_and_reverse(&bar, tile, in, out, N);
}
}
extern "C" __global__ void via_inline(const float* in, float* out) { inline_fn(in, out); }
extern "C" __global__ void via_member(const float* in, float* out) { Holder<32>().run(in, out); }
extern "C" __global__ void via_internal(const float* in, float* out) { internal_fn<32>(in, out); }
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("kernel", ["via_inline", "via_member", "via_internal"])
def test_shared_variables_of_inline_functions_and_templates_are_shared_memory(kernel, check, rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    cudacheck.RawModule(VAGUE, backend="cpu", check=check).get_function(kernel)((1,), (32,), (x, out))
    assert np.array_equal(out, x[::-1] + np.float32(1))


# One warpgroup: D (64 x 8) = sum over 4 k steps of scale_a A (64 x 16) B (16 x 8), A and B K-major
# in a template kernel's shared memory, no swizzle; every immediate of the wgmma an "n" operand
# (scale-d too: 0 makes each step overwrite D, so D is the last step's product alone).
NIMM = r'''
// Element (row, k) of a K-major bf16 operand in wgmma's canonical layout without swizzle: core
// matrices of 8 rows x 16 bytes, the next in k 128 bytes on (LBO), the next 8 rows 1,024 on (SBO).
__device__ unsigned kmajor(int row, int k) { return (row / 8) * 1024 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2; }
__device__ unsigned long long descriptor(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(128 >> 4) << 16
         | (unsigned long long)(1024 >> 4) << 32;
}
template <int ScaleD, int ScaleA, int ScaleB>
__global__ void __launch_bounds__(128) nimm(const unsigned short* A, const unsigned short* B, float* D, float init) {
    __shared__ __align__(1024) unsigned char raw[2048 + 128 * 8 + 128 * 64];
    unsigned base = ((unsigned)__cvta_generic_to_shared(raw) + 1023) & ~1023u;
    unsigned char* s = (unsigned char*)__cvta_shared_to_generic(base);
    const int t = threadIdx.x, w = t / 32, l = t % 32, r = 16 * w + l / 4;
    for (int i = t; i < 8 * 64; i += 128)
        *(unsigned short*)(s + kmajor(i / 64, i % 64)) = B[(i % 64) * 8 + i / 64];
    for (int i = t; i < 64 * 64; i += 128) *(unsigned short*)(s + 1024 + kmajor(i / 64, i % 64)) = A[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[4] = {init, init, init, init};
    for (int st = 0; st < 4; ++st) {
        unsigned long long da = descriptor(base + 1024 + 256 * st), db = descriptor(base + 256 * st);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, "
                     "%6, %7, %8, %9, %10;"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "l"(da), "l"(db), "n"(ScaleD), "n"(int(ScaleA)), "n"(int(ScaleB)), "n"(0), "n"(0));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(0) : "memory");
    }
    for (int h = 0; h < 4; ++h) D[(r + 8 * (h / 2)) * 8 + 2 * (l % 4) + h % 2] = d[h];
}
'''
NIMM_CASES = ["nimm<1, 1, 1>", "nimm<1, -1, 1>", "nimm<0, 1, -1>"]


def bf16_bits(x):
    """float32 -> (the bfloat16 bits by truncation, their float64 values)."""
    bits = (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_wgmma_immediates_given_as_n_operands(check, rng):
    module = cudacheck.RawModule(NIMM, backend="cpu", check=check, name_expressions=tuple(NIMM_CASES))
    (a, af), (b, bf) = bf16_bits(rng.standard_normal((64, 64))), bf16_bits(rng.standard_normal((64, 8)))
    init = np.float32(rng.standard_normal())
    for expr in NIMM_CASES:
        scale_d, scale_a, scale_b = map(int, expr[5:-1].split(","))
        d = np.zeros((64, 8), np.float32)
        module.get_function(expr)((1,), (128,), (a, b, d, init))
        if scale_d:
            exact, bound = init + scale_a * scale_b * af @ bf, abs(init) + np.abs(af) @ np.abs(bf)
        else:
            exact, bound = scale_a * scale_b * af[:, 48:] @ bf[48:], np.abs(af[:, 48:]) @ np.abs(bf[48:])
        # bf16 products are exact in float32; each of the 64 (16) additions rounds once
        assert np.all(np.abs(d - exact) <= 65 * 2.0 ** -24 * bound), expr


def test_an_n_operand_outside_the_values_ptx_takes_is_a_compile_error():
    bad = NIMM.replace('"n"(int(ScaleB))', '"n"(int(2 * ScaleB))')
    with pytest.raises(cudacheck.CompileError, match=r"outside the values the instruction takes"):
        cudacheck.RawModule(bad, backend="cpu", name_expressions=("nimm<1, 1, 1>",)).get_function("nimm<1, 1, 1>")


# fast.cu's kernels name uint64_t and uint32_t, which NVRTC has no header for: a kernel declares
# them itself, with the types NVRTC's own headers give them (unsigned long long where glibc has
# unsigned long). The last line reads one element past `in` on purpose (for checked mode's line).
OWN_TYPEDEFS = r'''
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t; typedef int int32_t;
static_assert(sizeof(uint64_t) == 8, "64 bits");
extern "C" __global__ void pack(const uint32_t* in, uint64_t* out, int past) {
    uint32_t x = in[threadIdx.x]; int32_t y = -int32_t(threadIdx.x);
    unsigned long long* as_ull = &out[threadIdx.x];            // the same type as on a GPU
    *as_ull = (uint64_t)x << 32 | (uint32_t)y;
    if (past) out[0] = in[blockDim.x];
}
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_kernels_own_typedefs_of_the_c_librarys_integer_types(check, rng):
    x = rng.integers(0, 2 ** 32, 40, dtype=np.uint32)
    out = np.zeros(40, np.uint64)
    k = cudacheck.RawModule(OWN_TYPEDEFS, backend="cpu", check=check).get_function("pack")
    k((1,), (40,), (x, out, np.int32(0)))
    assert out.tolist() == [(int(v) << 32) | ((-i) & 0xFFFFFFFF) for i, v in enumerate(x)]
    if check:   # the lines after the typedefs keep their numbers
        with pytest.raises(cudacheck.OutOfBoundsError, match=r"line 9"):
            k((1,), (40,), (x, out, np.int32(1)))
