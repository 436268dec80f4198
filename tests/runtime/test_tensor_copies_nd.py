"""Tensor maps and TMA copies of 3 to 5 dimensions on the CPU runtime (issue 44, item 1; fast.cu's
kernels 7-12 load their tiles so): cudacheck.tensor_map_tiled with the driver's arguments, and
cp.async.bulk.tensor.{3,5}d loads (`.tile`, and `.multicast::cluster` into both blocks of a
cluster) and a 3-d store, written here. A row-major matrix is mapped as fast.cu maps it, as
slabs of 16 columns (sizes 16, rows, columns / 16): a box of R rows and S slabs lands in shared
memory as S blocks of R x 16, elements outside the matrix as zeros; stored back, only the
elements inside are written. Plain and checked, on random matrices, bit for bit."""
import numpy as np
import pytest

import cudacheck

SLAB = 16   # floats: 64 bytes a box row
KERNELS = r'''
__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ unsigned rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ void wait(unsigned bar) {
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar) : "memory");
}
struct alignas(64) Map { unsigned long long opaque[16]; };
// The box of R rows x S slabs at (row y, slab z) into shared memory, copied out to `out`, and stored
// back from shared memory into `back` through its own map (the 3-d store).
template <int R, int S, int DIMS>
__global__ void copy_box(const __grid_constant__ Map in, const __grid_constant__ Map back_map, float* out, int y,
                         int z) {
    __shared__ alignas(128) float box[S * R * 16];
    __shared__ unsigned long long bar;
    unsigned b = smem_u32(&bar), dst = smem_u32(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"((int)sizeof(box))
                     : "memory");
        if (DIMS == 3)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5];" :: "r"(dst), "l"(&in), "n"(0), "r"(y), "r"(z), "r"(b)
                         : "memory");
        else
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, 0, 0}], [%5];" :: "r"(dst), "l"(&in), "n"(0), "r"(y), "r"(z), "r"(b)
                         : "memory");
    }
    wait(b);
    for (int i = threadIdx.x; i < S * R * 16; i += blockDim.x) out[i] = box[i];
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
                     :: "l"(&back_map), "n"(0), "r"(y), "r"(z), "r"(dst) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
// Rank 0 multicasts a box of 8 rows x 2 slabs at (row y, slab z) into both blocks of the cluster.
extern "C" __global__ void __cluster_dims__(2, 1, 1) multicast(const __grid_constant__ Map in, float* out, int y,
                                                                int z) {
    __shared__ alignas(128) float box[2 * 8 * 16];
    __shared__ unsigned long long bar;
    unsigned b = smem_u32(&bar), dst = smem_u32(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"((int)sizeof(box))
                     : "memory");
        if (rank() == 0)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                         :: "r"(dst), "l"(&in), "n"(0), "r"(y), "r"(z), "r"(b), "h"((unsigned short)3) : "memory");
    }
    wait(b);
    for (int i = threadIdx.x; i < 2 * 8 * 16; i += blockDim.x) out[blockIdx.x * 256 + i] = box[i];
    cluster_sync();
}
'''
NAMES = ("copy_box<8, 3, 3>", "copy_box<8, 3, 5>")


@pytest.fixture(scope="module")
def modules():
    return {check: cudacheck.RawModule(KERNELS, backend="cpu", check=check, name_expressions=NAMES)
            for check in (False, True)}


def slab_map(x, rows, slabs, rank):
    """fast.cu's map of a row-major matrix as slabs of SLAB columns, box rows x slabs, of `rank`."""
    r, c = x.shape
    return cudacheck.tensor_map_tiled(x, (SLAB, r, c // SLAB, 1, 1)[:rank], (4 * c, 4 * SLAB, 0, 0)[:rank - 1],
                                      (SLAB, rows, slabs, 1, 1)[:rank], swizzle=0)


def expected_box(x, y, z, rows, slabs):
    """The box as the TMA lays it out: slabs x rows x SLAB, zeros outside the matrix."""
    padded = np.zeros((x.shape[0] + rows, x.shape[1] + slabs * SLAB), np.float32)
    padded[:x.shape[0], :x.shape[1]] = x
    return np.stack([padded[y:y + rows, (z + s) * SLAB:(z + s + 1) * SLAB] for s in range(slabs)])


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("name,rank", [("copy_box<8, 3, 3>", 3), ("copy_box<8, 3, 5>", 5)])
def test_a_box_of_slabs_loads_and_stores_as_the_tma_lays_it_out(modules, name, rank, check, rng):
    rows, slabs = int(rng.integers(10, 30)), int(rng.integers(2, 6))
    x = rng.standard_normal((rows, slabs * SLAB)).astype(np.float32)
    y, z = rows - 5, slabs - 2        # the box's last rows and slab lie outside the matrix
    out = np.full(3 * 8 * SLAB, np.nan, np.float32)
    back = np.full_like(x, np.nan)
    modules[check].get_function(name)((1,), (64,), (slab_map(x, 8, 3, rank), slab_map(back, 8, 3, 3), out,
                                                     np.int32(y), np.int32(z)))
    assert np.array_equal(out.reshape(3, 8, SLAB), expected_box(x, y, z, 8, 3))
    inside = np.zeros(x.shape, bool)
    inside[y:y + 8, z * SLAB:(z + 3) * SLAB] = True
    assert np.array_equal(back[inside], x[inside]) and np.isnan(back[~inside]).all()


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_multicast_box_of_slabs_lands_in_both_blocks(modules, check, rng):
    x = rng.standard_normal((24, 4 * SLAB)).astype(np.float32)
    out = np.zeros((4, 256), np.float32)
    modules[check].get_function("multicast")((4,), (32,), (slab_map(x, 8, 2, 3), out, np.int32(9), np.int32(1)))
    assert all(np.array_equal(out[b].reshape(2, 8, SLAB), expected_box(x, 9, 1, 8, 2)) for b in range(4))


@pytest.mark.parametrize("dims,strides,box,message", [
    ((16, 8, 2, 1, 1, 1), (64, 64, 0, 0, 0), (16, 8, 1, 1, 1, 1), "rank 1 to 5"),
    ((16, 8, 2), (64, 40), (16, 8, 1), r"strides \[64, 40\] bytes: each a multiple of 16"),
    ((16, 8, 4), (64, 64), (16, 8, 1), r"the tensor reaches 704 bytes past the array.s start, and the array has 256"),
])
def test_a_map_the_driver_or_the_array_cannot_hold_is_refused(dims, strides, box, message):
    x = np.zeros((8, 8), np.float32)
    with pytest.raises(cudacheck.TensorMapError, match=message):
        cudacheck.tensor_map_tiled(x, dims, strides, box, swizzle=0)


@pytest.mark.gpu
@pytest.mark.parametrize("name,rank", [("copy_box<8, 3, 3>", 3), ("copy_box<8, 3, 5>", 5)])
def test_the_gpu_lays_out_the_box_of_slabs_as_the_cpu_runtime(name, rank, rng):
    """The same kernel and maps on an H100 or H200 (the driver's cuTensorMapEncodeTiled of the
    same arguments): the box and the store as the expectation the CPU runtime meets above."""
    from tiling_course import magic
    why = magic.gpu_unfit(("-arch=sm_90a",))
    if why:
        pytest.skip(why)
    import cupy
    x = rng.standard_normal((21, 4 * SLAB)).astype(np.float32)
    y, z = 16, 2
    out, back = cupy.full(3 * 8 * SLAB, np.nan, cupy.float32), cupy.full(x.shape, np.nan, cupy.float32)
    gx = cupy.asarray(x)
    module = cudacheck.RawModule(KERNELS, backend="gpu", options=("-arch=sm_90a",), name_expressions=NAMES)
    module.get_function(name)((1,), (64,), (slab_map(gx, 8, 3, rank), slab_map(back, 8, 3, 3), out,
                                            np.int32(y), np.int32(z)))
    assert np.array_equal(out.get().reshape(3, 8, SLAB), expected_box(x, y, z, 8, 3))
    inside = np.zeros(x.shape, bool)
    inside[y:y + 8, z * SLAB:(z + 3) * SLAB] = True
    got = back.get()
    assert np.array_equal(got[inside], x[inside]) and np.isnan(got[~inside]).all()
