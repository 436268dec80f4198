"""Tensor maps with element strides (cuTensorMapEncodeTiled's elementStrides other than 1) on the
CPU runtime: a copy takes ceil(box[d] / s) elements along dimension d, every s-th from the box's
corner, laid out next to each other in shared memory (CUDA Driver API, cuTensorMapEncodeTiled; the
driver ignores dimension 0's stride), elements outside the tensor as zeros, and completes the
bytes of the elements it took; a store writes the same elements back. Loads and stores of 2 and 3
dimensions, plain and checked, on random matrices and strides that do not divide the box, bit for
bit against NumPy; the kernel that announces the whole box's bytes never completes its phase; and
the strides the driver refuses are refused, from Python and in a whole program. The im2col mode
stays refused, saying what loads the same elements."""
import numpy as np
import pytest

import cudacheck

SLAB = 16   # floats: 64 bytes a box row
KERNELS = r'''
struct alignas(64) Map { unsigned long long opaque[16]; };
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// The box at (0, y, z) of `in` into shared memory, announced as `bytes` transaction bytes, copied
// out to `out` (n floats), and stored back through `back` (a map of the same strides).
template <int DIMS>
__global__ void strided_box(const __grid_constant__ Map in, const __grid_constant__ Map back, float* out, int n,
                            int y, int z, unsigned bytes) {
    __shared__ alignas(128) float box[2048];
    __shared__ unsigned long long bar;
    unsigned b = smem_u32(&bar), dst = smem_u32(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
        if (DIMS == 2)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];" :: "r"(dst), "l"(&in), "n"(0), "r"(y), "r"(b) : "memory");
        else
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5];" :: "r"(dst), "l"(&in), "n"(0), "r"(y), "r"(z), "r"(b)
                         : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(b) : "memory");
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = box[i];
    if (threadIdx.x == 0) {
        if (DIMS == 2)
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                         :: "l"(&back), "n"(0), "r"(y), "r"(dst) : "memory");
        else
            asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
                         :: "l"(&back), "n"(0), "r"(y), "r"(z), "r"(dst) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
'''
NAMES = ("strided_box<2>", "strided_box<3>")


@pytest.fixture(scope="module")
def modules():
    return {check: cudacheck.RawModule(KERNELS, backend="cpu", check=check, name_expressions=NAMES)
            for check in (False, True)}


def taken(box, step):
    return -(-box // step)


def slab_map(x, rows, slabs, steps, rank):
    """A row-major matrix as slabs of SLAB columns (sizes SLAB, rows, columns / SLAB), box SLAB x rows
    x slabs, element strides (1, *steps), of `rank` 2 (one slab) or 3."""
    r, c = x.shape
    return cudacheck.tensor_map_tiled(x, (SLAB, r, c // SLAB)[:rank], (4 * c, 4 * SLAB)[:rank - 1],
                                      (SLAB, rows, slabs)[:rank], element_strides=(1, *steps)[:rank], swizzle=0)


def expected(x, y, z, rows, slabs, steps):
    """The elements a copy takes, as shared memory holds them: [slab][row][SLAB], zeros outside x; and
    where each came from (a mask of x)."""
    s1, s2 = steps
    slab_of = x.reshape(x.shape[0], -1, SLAB).transpose(1, 0, 2)   # [slab][row][column]
    out = np.zeros((taken(slabs, s2), taken(rows, s1), SLAB), np.float32)
    source = np.zeros(slab_of.shape, bool)
    for k2 in range(out.shape[0]):
        for k1 in range(out.shape[1]):
            s, r = z + k2 * s2, y + k1 * s1
            if s < slab_of.shape[0] and r < slab_of.shape[1]:
                out[k2, k1] = slab_of[s, r]
                source[s, r] = True
    return out, source.transpose(1, 0, 2).reshape(x.shape)


# (rank, box rows, box slabs, (row stride, slab stride)): strides that divide the box and that do not,
# and a box whose last strided rows and slabs lie past the matrix
CASES = [(2, 12, 1, (3, 1)), (2, 7, 1, (2, 1)), (3, 9, 3, (2, 2)), (3, 8, 5, (8, 3)), (3, 5, 2, (1, 1))]


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("rank,rows,slabs,steps", CASES)
def test_a_copy_takes_every_sth_element_and_a_store_writes_them_back(modules, rank, rows, slabs, steps, check, rng):
    height, width = int(rng.integers(rows, 3 * rows)), SLAB * (slabs + int(rng.integers(0, 3)))
    x = rng.standard_normal((height, width)).astype(np.float32)
    y, z = height - rows // 2, (width // SLAB) - slabs + 1 if rank == 3 else 0   # partly past the matrix
    y, z = max(y, 0), max(z, 0)
    box, source = expected(x, y, z, rows, slabs if rank == 3 else 1, steps)
    out = np.full(box.size, np.nan, np.float32)
    back = np.full_like(x, np.nan)
    modules[check].get_function(f"strided_box<{rank}>")(
        (1,), (64,), (slab_map(x, rows, slabs, steps, rank), slab_map(back, rows, slabs, steps, rank), out,
                      np.int32(out.size), np.int32(y), np.int32(z), np.uint32(4 * box.size)))
    assert np.array_equal(out.reshape(box.shape), box)
    assert np.array_equal(back[source], x[source]) and np.isnan(back[~source]).all()


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_announcing_the_whole_box_never_completes_the_phase(modules, check, rng):
    # box of 12 rows, every 3rd taken: 4 rows arrive, the kernel expects 12
    x = rng.standard_normal((40, SLAB)).astype(np.float32)
    tmap = slab_map(x, 12, 1, (3, 1), 2)
    with pytest.raises(cudacheck.ForwardProgressError, match=r"(?s)mbarrier.*bytes"):
        modules[check].get_function("strided_box<2>")(
            (1,), (32,), (tmap, tmap, np.zeros(12 * SLAB, np.float32), np.int32(4 * SLAB), np.int32(0),
                          np.int32(0), np.uint32(4 * 12 * SLAB)))


@pytest.mark.parametrize("steps", [(0, 1), (1, 9)])
def test_element_strides_the_driver_refuses_are_refused(steps):
    with pytest.raises(cudacheck.TensorMapError, match=r"element strides \[1, \d, \d\]: each 1 to 8"):
        slab_map(np.zeros((16, 2 * SLAB), np.float32), 8, 2, steps, 3)


def test_a_whole_program_encodes_element_strides_and_refuses_the_driver_s_bad_ones():
    src = r'''
#include <cuda.h>
#include <cstdio>
int main() {
    float* a;
    cudaMalloc(&a, 64 * 64 * sizeof(float));
    CUtensorMap map;
    cuuint64_t dims[2] = {64, 64}, strides[1] = {64 * sizeof(float)};
    cuuint32_t box[2] = {16, 12}, good[2] = {5, 3}, bad[2] = {1, 9};
    CUresult ok = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, dims, strides, box, good,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CUresult refused = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, dims, strides, box, bad,
                                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("%d %d\n", (int)ok, (int)refused);
    cudaFree(a);
    return 0;
}'''
    result = cudacheck.run_program(src, backend="cpu")
    assert result.stdout.split() == ["0", "1"]   # CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE


@pytest.mark.gpu
@pytest.mark.parametrize("rank,rows,slabs,steps", CASES)
def test_the_gpu_takes_the_same_elements(rank, rows, slabs, steps, rng):
    """The same kernel and maps on an H100 or H200 (the driver's encoding of the same arguments):
    the box and the store as the expectation the CPU runtime meets above."""
    from tiling_course import magic
    why = magic.gpu_unfit(("-arch=sm_90a",))
    if why:
        pytest.skip(why)
    import cupy
    height, width = 3 * rows, SLAB * (slabs + 1)
    x = rng.standard_normal((height, width)).astype(np.float32)
    y, z = height - rows // 2, 1 if rank == 3 else 0
    box, source = expected(x, y, z, rows, slabs if rank == 3 else 1, steps)
    out, back = cupy.full(box.size, np.nan, cupy.float32), cupy.full(x.shape, np.nan, cupy.float32)
    module = cudacheck.RawModule(KERNELS, backend="gpu", options=("-arch=sm_90a",), name_expressions=NAMES)
    module.get_function(f"strided_box<{rank}>")(
        (1,), (64,), (slab_map(cupy.asarray(x), rows, slabs, steps, rank), slab_map(back, rows, slabs, steps, rank),
                      out, np.int32(box.size), np.int32(y), np.int32(z), np.uint32(4 * box.size)))
    assert np.array_equal(out.get().reshape(box.shape), box)
    got = back.get()
    assert np.array_equal(got[source], x[source]) and np.isnan(got[~source]).all()


def test_the_im2col_mode_is_refused_saying_what_loads_the_same_elements():
    src = r"""
struct alignas(64) Map { unsigned long long opaque[16]; };
extern "C" __global__ void k(const __grid_constant__ Map in, float* out) {
    __shared__ alignas(128) float box[256];
    __shared__ unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar), dst = (unsigned)__cvta_generic_to_shared(box);
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %2, %2, %2}], [%3], {%4};" :: "r"(dst), "l"(&in), "r"(0), "r"(b), "h"((short)0)
                 : "memory");
    out[threadIdx.x] = box[threadIdx.x];
}"""
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=r"(?s)the TMA's im2col mode; a `\.tile` copy of a map "
                                                                r"over the image.*\(line 7\).*backend='gpu'"):
        cudacheck.RawModule(src, backend="cpu").get_function("k")
