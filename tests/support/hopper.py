"""Kernel sources and helpers shared by the Hopper tests (tests/runtime/test_hopper_*.py,
test_proxy_fence.py) and scripts/hopper_hazard_on_gpu.py, which runs the hazard kernel on a GPU
under compute-sanitizer."""
from tiling_course import hopper, precision

from . import ROOT

HOPPER = (ROOT / "kernels" / "hopper.cu").read_text()
OPTIONS = hopper.ARCH_OPTIONS
KERNELS = hopper.KERNELS[:3]   # the clustered ones: test_hopper_clusters.py


def rounded(x, prec):
    """(what a kernel of `prec` takes for the float32 x, the float32 values it multiplies):
    tiling_course.precision's rounding, the one the checker and the benchmark use."""
    return precision.to_device_format(x, prec), precision.rounded(x, prec)


def bf16(x):
    return rounded(x, "bf16")


# One wgmma m64n8k16 in a test kernel: its operands written by the block's 128 threads with
# ordinary stores, through `s` (the generic address of `base`), from A and B in global memory;
# its shared-memory descriptors: A (64 x 16, K-major, the 128-byte swizzle) at `base`, B (16 x 8,
# MN-major) 8,192 bytes on; and the store of its 64 x 8 product d from the accumulator fragments
# (thread t holds rows 16 w + l/4 and that + 8, columns 2 (l % 4) and the next). Shared by the
# wgmma kernels of the tests (the WRITE tags mark the stores' lines for test_proxy_fence.py).
WGMMA_OPERANDS = r"""
    // A: 64 x 16, K-major, 128-byte swizzle: row i at byte 128 i (+ 1,024 per 8 rows), k 2 bytes apart
    // B: 16 x 8, MN-major: row k of 8 values at byte 128 k, in the next 2,048 bytes
    for (int t = threadIdx.x; t < 64 * 16; t += 128) {
        int i = t / 16, kk = t % 16, off = i * 128 + kk * 2;
        s[(off ^ (((off >> 7) & 7) << 4)) / 2] = A[t];   // A WRITE
    }
    for (int t = threadIdx.x; t < 16 * 8; t += 128) {
        int kk = t / 8, n = t % 8, off = 8192 + kk * 128 + n * 2;
        s[(off ^ (((off >> 7) & 7) << 4)) / 2] = B[t];   // B WRITE
    }
"""
WGMMA_DESCRIPTORS = r"""
    unsigned long long da = (unsigned long long)((base & 0x3FFFF) >> 4) | 1ull << 16
                          | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
    unsigned long long db = (unsigned long long)(((base + 8192) & 0x3FFFF) >> 4) | (unsigned long long)(8192 >> 4) << 16
                          | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
"""
STORE_D = r"""
    int w = threadIdx.x / 32, l = threadIdx.x % 32, r = 16 * w + l / 4, c = 2 * (l % 4);
    D[r * 8 + c] = d[0];   // STORE D
    D[r * 8 + c + 1] = d[1];
    D[(r + 8) * 8 + c] = d[2];
    D[(r + 8) * 8 + c + 1] = d[3];
"""


# mode 0: correct. 1: no thread waits before the wgmma. 2: the issuing thread reads the tile
# before waiting. 3: a thread stores into the A tile between its wgmma and wait_group. 4:
# expect_tx of half the box. 5: expect_tx of twice the box. 6: warp 3 skips the wgmma.
# 7: the box lands 12 KiB into the slot, past the end of the dynamic shared memory. The wgmma's
# accumulators touched before wgmma.wait_group 0 retires it: 8: a thread reads d[1] after the
# commit; 9: a thread zeroes d[2] before the commit; 10: wgmma.wait_group 1 where 0 was needed,
# so the store of d reads it in flight. 11 (correct): a register fence of the accumulators while
# the wgmma is in flight, which names them in no instruction and so touches none.
HAZARDS = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void hazards(const __grid_constant__ TensorMap map, const unsigned short* B, float* D, int mode,
                                   int* out) {
    __shared__ unsigned long long bar;
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned short* s = (unsigned short*)__cvta_shared_to_generic(base);
    for (int t = threadIdx.x; t < 16 * 8; t += 128) {   // B: 16 x 8, MN-major, 128-byte swizzle, at base + 8192
        int kk = t / 8, n = t % 8, off = 8192 + kk * 128 + n * 2;
        s[(off ^ (((off >> 7) & 7) << 4)) / 2] = B[t];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // B's stores, before the wgmma reads them
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned bytes = mode == 4 ? 4096 : mode == 5 ? 16384 : 8192, dst = base + (mode == 7 ? 12288 : 0);
        asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" :: "r"(b), "r"(bytes));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"   // COPY
                     " [%0], [%1, {%2, %3}], [%4];" :: "r"(dst), "l"(&map), "r"(0), "r"(0), "r"(b) : "memory");
        if (mode == 2) out[0] = s[3];   // EARLY READ
    }
    if (mode != 1) {
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "   // WAIT
                         "selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(b));
    }
    if (mode == 6 && threadIdx.x >= 96) {
        __syncthreads();   // SKIP
        return;
    }
""" + WGMMA_DESCRIPTORS + r"""    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"   // WGMMA
                 " {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
    if (mode == 3 && threadIdx.x == 5) s[(3 * 128 + 48 + 2) / 2] = 0;   // OVERWRITE (row 3, k 1: chunk 0 swizzled to 3)
    if (mode == 9 && threadIdx.x == 70) d[2] = 0.0f;   // ACC ZEROED
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (mode == 8 && threadIdx.x == 33) out[0] = (int)d[1];   // ACC READ
    if (mode == 11) asm volatile("" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) :: "memory");
    if (mode == 10)
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    else
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (threadIdx.x == 5) s[(3 * 128 + 48 + 2) / 2] = 0;   // the group is retired: the tile may be reused
""" + STORE_D + r"""    __syncthreads();
}
"""
HAZARDS_SHARED = 17408   # two slots' worth: A (8 KiB) and B at 8 KiB, and 1 KiB for the rounding up
