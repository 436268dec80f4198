"""kernels/hopper.cu on the CPU runtime: its non-clustered kernels, unchanged, BF16 and FP16,
against float64 NumPy of the rounded inputs on awkward shapes (launched by tiling_course.hopper,
the rule measure.bench_hopper launches them by on a GPU, with tensor maps of NumPy arrays);
the TMA copy (zero fill at an edge, the 128-byte swizzle) and one wgmma against NumPy with
hand-built descriptors; and tensor maps refused by the backend that cannot read them. The
clustered kernels: test_hopper_clusters.py."""

import numpy as np
import pytest

import cudacheck
from tests.support.hopper import HOPPER, KERNELS, STORE_D, WGMMA_DESCRIPTORS, WGMMA_OPERANDS, bf16, rounded
from tiling_course import hopper


@pytest.fixture(scope="module")
def modules():
    return {prec: cudacheck.RawModule(HOPPER, backend="cpu", options=hopper.options(prec)) for prec in ("bf16", "fp16")}


@pytest.mark.parametrize("prec", ["bf16", "fp16"])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", [(70, 130, 100), (128, 256, 64)])
def test_hopper_kernels_match_float64(modules, kernel, prec, shape, rng):
    m, n, k = shape
    (M, Mf), (N, Nf) = rounded(rng.standard_normal((m, k), np.float32), prec), \
        rounded(rng.standard_normal((k, n), np.float32), prec)
    P, _ = hopper.launch(modules[prec], kernel, M, N, sms=3)
    exact = Mf.astype(np.float64) @ Nf.astype(np.float64)
    scale = np.abs(Mf.astype(np.float64)) @ np.abs(Nf.astype(np.float64))
    assert np.all(np.abs(P - exact) <= 2 * k * 2.0 ** -24 * scale), np.nanmax(np.abs(P - exact) / scale)


TMA = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void tma(const __grid_constant__ TensorMap map, int x, int y, unsigned short* out, int bytes) {
    __shared__ unsigned long long bar;
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("{ .reg .b64 s; mbarrier.arrive.expect_tx.shared::cta.b64 s, [%0], %1; }" :: "r"(b), "r"(bytes));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(base), "l"(&map), "r"(x), "r"(y), "r"(b) : "memory");
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(b));
    const unsigned short* s = (const unsigned short*)__cvta_shared_to_generic(base);
    for (int i = 0; i < bytes / 2; ++i) out[i] = s[i];
}
"""


def swizzle128(offset):
    """The 128-byte swizzle: the 16-byte chunk bits [4:6] XOR the row bits [7:9]."""
    return offset ^ (((offset >> 7) & 7) << 4)


@pytest.mark.parametrize("swizzle", [0, 128])
def test_tma_copies_a_box_at_an_edge_with_zero_fill_and_the_swizzle(swizzle, rng):
    a = rng.integers(1, 60000, (20, 72), dtype=np.uint16)
    tmap = cudacheck.tensor_map_2d(a, box_rows=16, box_cols=64, swizzle=swizzle)
    out = np.zeros(16 * 64, np.uint16)
    x, y = 40, 10   # the box reaches past the last row (19) and the last column (71)
    cudacheck.RawModule(TMA, backend="cpu").get_function("tma")(1, 1, (tmap, np.int32(x), np.int32(y), out,
                                                                        np.int32(out.nbytes)), shared_mem=4096)
    box = np.zeros((16, 64), np.uint16)
    box[:10, :32] = a[10:20, 40:72]
    expect = np.zeros(16 * 64, np.uint16)
    for i in range(16):
        for j in range(64):
            off = 2 * (i * 64 + j)
            expect[(swizzle128(off) if swizzle else off) // 2] = box[i, j]
    assert np.array_equal(out, expect)
    # one element against the rule: row 3, column 8 (chunk 1) lands in chunk 1 ^ 3 = 2
    assert out[(3 * 128 + 2 * 16) // 2 if swizzle else (3 * 128 + 16) // 2] == a[13, 48]


WGMMA = r"""
extern "C" __global__ void one_wgmma(const unsigned short* A, const unsigned short* B, float* D, int at) {
    __shared__ int static_too;                  // a static variable: the window holds both regions
    extern __shared__ unsigned char smem[];
    if (threadIdx.x == 0)
        static_too = at;
    unsigned base = (((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u) + at;
    unsigned short* s = (unsigned short*)__cvta_shared_to_generic(base);
""" + WGMMA_OPERANDS + r"""
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // the stores, before the wgmma reads them
    __syncthreads();
""" + WGMMA_DESCRIPTORS + r"""    float d[4];
    for (int j = 0; j < 4; ++j) d[j] = 1.0f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %6, 0; "
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 1; }"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db), "r"(1));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
""" + STORE_D + r"""}
"""


# The operands' 10,240 bytes at the start of a small buffer, and at the end of the most a block
# may opt into (232,448 bytes with the static variable's): a descriptor's start address has 18
# bits, so every shared address of a block must lie below 256 KB, as a GPU's do.
@pytest.mark.parametrize("shared_mem,at", [(16384, 0), (232448 - 1024, 232448 - 1024 - 2 * 1024 - 10240)])
def test_one_wgmma_against_numpy_with_hand_built_descriptors(shared_mem, at, rng):
    (A, Af), (B, Bf) = bf16(rng.standard_normal((64, 16), np.float32)), bf16(rng.standard_normal((16, 8), np.float32))
    D = np.zeros((64, 8), np.float32)
    one_wgmma = cudacheck.RawModule(WGMMA, backend="cpu").get_function("one_wgmma")
    one_wgmma.max_dynamic_shared_size_bytes = shared_mem
    one_wgmma(1, 128, (A, B, D, np.int32(at)), shared_mem=shared_mem)
    exact = Af.astype(np.float64) @ Bf.astype(np.float64) + 1.0
    scale = np.abs(Af.astype(np.float64)) @ np.abs(Bf.astype(np.float64)) + 1.0
    assert np.all(np.abs(D - exact) <= 17 * 2.0 ** -24 * scale)


def test_a_map_of_a_numpy_array_holds_the_cpu_layout():
    a = cudacheck.pad_rows(np.zeros((10, 7), np.float16))
    tmap = cudacheck.tensor_map_2d(a, 8, 8, swizzle=0)
    from cudacheck.cpu import abi
    m = abi.CpuTensorMap.from_buffer_copy(tmap.tobytes())
    assert (m.magic, m.element_size, m.rows, m.cols, m.row_pitch, m.box_rows, m.box_cols, m.swizzle) == \
        (abi.TENSOR_MAP_MAGIC, 2, 10, 7, 16, 8, 8, 0)
    assert m.address == a.ctypes.data and tmap.source is a


def test_a_map_for_the_other_backend_is_refused(modules):
    class FakeCupyArray:   # what a CuPy array's map keeps as its source
        pass
    M = np.zeros((64, 64), np.uint16)
    tmap = cudacheck.tensor_map_2d(M, 64, 64, element="bf16")
    tmap.source = FakeCupyArray()
    f = modules["bf16"].get_function("matmul_tma_wgmma")
    with pytest.raises(cudacheck.ArgumentError, match="tensor map of a .* array, but this backend takes numpy"):
        f((1, 1), (128,), (tmap, tmap, np.zeros((64, 64), np.float32), 64, 64, 64), shared_mem=1024)
