"""libcu++'s <cuda/barrier> on the CPU runtime (cpu/include/cuda/barrier, issue 44, item 1):
cuda::barrier<cuda::thread_scope_block> as an mbarrier in shared memory, barrier_arrive_tx, and
cuda::device::experimental's 2-D bulk tensor copies, proxy fence and bulk groups, as fast.cu's
kernels 2-6 use them; a tensor map read through a pointer (`const CUtensorMap*`, the map in
device memory); `extern __shared__` of a struct type. Kernels written here, plain and checked,
on random inputs and edge tiles, compared bit for bit (the copies and 2x are exact). The copies
of rank 3 the same. A whole program's host code encodes maps with the driver's cuTensorMapEncodeTiled
(an interleaved one refused, saying what to do). cuda::barrier of device or system scope in shared
memory, which only its block reaches, as the same mbarrier (a missing wait a race in checked mode);
one in global memory refused at its init; a completion function refused at compile time."""
import numpy as np
import pytest

import cudacheck

# Each block copies one R x C tile of `in` (through a map by value) into shared memory, doubles it,
# and stores it through a map read by pointer; tiles at the edges are partly outside the matrix
# (zeros in, nothing out). The tile lives in `extern __shared__ Stage<R, C> s` (a struct).
COPY = r'''
#include <cuda/barrier>
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;
template <int R, int C> struct Stage { alignas(128) float tile[R * C]; };
template <int R, int C>
__global__ void __launch_bounds__(128) double_tiles(const __grid_constant__ CUtensorMap in, const CUtensorMap* out) {
    extern __shared__ Stage<R, C> s;
    __shared__ barrier bar;
    if (threadIdx.x == 0) { init(&bar, blockDim.x); cde::fence_proxy_async_shared_cta(); }
    __syncthreads();
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(s.tile, &in, blockIdx.x * C, blockIdx.y * R, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(s.tile));
    } else {
        token = bar.arrive();
    }
    bar.wait(static_cast<barrier::arrival_token&&>(token));
    for (int i = threadIdx.x; i < R * C; i += blockDim.x) s.tile[i] *= 2.0f;
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(out, blockIdx.x * C, blockIdx.y * R, s.tile);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
    bar.arrive_and_wait();   // a second phase: every thread past the first
}
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_libcudacxx_barrier_and_tma_copy_tiles_through_maps_by_value_and_by_pointer(check, rng):
    rows, cols = int(rng.integers(17, 60)), 4 * int(rng.integers(9, 30))   # rows a multiple of 16 bytes
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    map_in = cudacheck.tensor_map_2d(x, 16, 32, swizzle=128)
    map_out = cudacheck.tensor_map_2d(out, 16, 32, swizzle=128)
    kernel = cudacheck.RawModule(COPY, backend="cpu", check=check,
                                 name_expressions=("double_tiles<16, 32>",)).get_function("double_tiles<16, 32>")
    kernel((-(-cols // 32), -(-rows // 16)), (128,), (map_in, map_out), shared_mem=16 * 32 * 4)
    assert np.array_equal(out, 2 * x)
    assert map_out.tobytes() == cudacheck.tensor_map_2d(out, 16, 32, swizzle=128).tobytes()   # the caller's map


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_the_3d_copy_of_a_map_of_rank_3_is_the_2d_copys(check, rng):
    rows, cols = int(rng.integers(17, 60)), 4 * int(rng.integers(9, 30))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    map_in = cudacheck.tensor_map_tiled(x, (cols, rows, 1), (4 * cols, 4 * cols * rows), (32, 16, 1), swizzle=128)
    source = COPY.replace("2d_global_to_shared(s.tile, &in, blockIdx.x * C, blockIdx.y * R, bar)",
                          "3d_global_to_shared(s.tile, &in, blockIdx.x * C, blockIdx.y * R, 0, bar)")
    kernel = cudacheck.RawModule(source, backend="cpu", check=check,
                                 name_expressions=("double_tiles<16, 32>",)).get_function("double_tiles<16, 32>")
    kernel((-(-cols // 32), -(-rows // 16)), (128,), (map_in, cudacheck.tensor_map_2d(out, 16, 32, swizzle=128)),
           shared_mem=16 * 32 * 4)
    assert np.array_equal(out, 2 * x)


# A whole program's host code encodes the map with the driver's cuTensorMapEncodeTiled (cpu/include/
# cuda.h: the CPU runtime's map of the device allocation), as fast.cu's create_tensor_map does, and
# a C-linkage kernel with `__shared__ alignas(128)` copies the box at column 16, row 8. An interleaved
# map is refused: CUDA_ERROR_NOT_SUPPORTED (801), and a line on stderr saying what to do.
PROGRAM = r'''
#include <cuda.h>
#include <cuda/barrier>
#include <cstdio>
using barrier = cuda::barrier<cuda::thread_scope_block>;
__global__ void tile(const __grid_constant__ CUtensorMap map, float* out) {
    __shared__ alignas(128) float box[8 * 16];
    __shared__ barrier bar;
    if (threadIdx.x == 0) init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared(box, &map, 16, 8, bar);
        bar.wait(cuda::device::barrier_arrive_tx(bar, 1, sizeof(box)));
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 8 * 16; i += blockDim.x) out[i] = box[i];
}
int main() {
    const int rows = 24, cols = 40;
    float host[rows * cols], got[8 * 16];
    for (int i = 0; i < rows * cols; ++i) scanf("%f", &host[i]);
    float *d, *o;
    cudaMalloc(&d, sizeof(host)); cudaMalloc(&o, sizeof(got));
    cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice);
    CUtensorMap map;
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * sizeof(float)};
    cuuint32_t box[2] = {16, 8}, one[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, one,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    tile<<<1, 32>>>(map, o);
    cudaMemcpy(got, o, sizeof(got), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 8 * 16; ++i) bad += got[i] != host[(8 + i / 16) * cols + 16 + i % 16];
    cuuint64_t dims5[5] = {cols, rows, 1, 1, 1}, strides5[4] = {cols * 4, cols * 4 * rows, 0, 0};
    cuuint32_t box5[5] = {16, 8, 1, 1, 1}, one5[5] = {1, 1, 1, 1, 1};
    CUresult r5 = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 5, d, dims5, strides5, box5, one5,
        CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("%d %d %d\n", r, bad, r5);
    cudaFree(d); cudaFree(o);
    return 0;
}
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_host_code_encodes_a_tensor_map_with_the_drivers_call(check, rng):
    x = rng.standard_normal((24, 40)).astype(np.float32)
    result = cudacheck.run_program(PROGRAM, backend="cpu", check=check, stdin=" ".join(map(repr, x.ravel().tolist())))
    assert result.stdout == "0 0 801\n", result
    assert "interleaved maps are not provided by the CPU runtime; use CU_TENSOR_MAP_INTERLEAVE_NONE" in result.stderr


def test_a_barrier_with_a_completion_function_is_refused_with_what_to_do():
    source = ('#include <cuda/barrier>\nstruct Done { __device__ void operator()() noexcept {} };\n'
              'extern "C" __global__ void k(int* out) {\n'
              '    __shared__ cuda::barrier<cuda::thread_scope_block, Done> bar;\n'
              '    if (threadIdx.x == 0) init(&bar, 1);\n    out[0] = 1;\n}\n')
    with pytest.raises(cudacheck.CompileError, match=r"provides cuda::barrier of block, device or system scope without "
                                                      r"a completion function .* or run on a GPU"):
        cudacheck.RawModule(source, backend="cpu").get_function("k")


# Two phases of a barrier of scope S in shared memory: each thread writes its slot, waits, reads its
# neighbour's, waits again, and overwrites its own slot. WAIT false: the first wait left out.
SCOPED = r'''
#include <cuda/barrier>
template <cuda::thread_scope S, bool WAIT>
__global__ void neighbours(const float* in, float* out) {
    __shared__ cuda::barrier<S> bar;
    __shared__ float slot[64];
    int t = threadIdx.x;
    if (t == 0) init(&bar, blockDim.x);
    __syncthreads();
    slot[t] = in[blockIdx.x * 64 + t];
    if (WAIT) bar.arrive_and_wait();
    float next = slot[(t + 1) % 64];
    bar.arrive_and_wait();
    slot[t] = -next;
    out[blockIdx.x * 64 + t] = next + slot[t] + next;
}
__device__ cuda::barrier<cuda::thread_scope_device> everywhere;
extern "C" __global__ void in_global(int* out) {
    if (threadIdx.x == 0) init(&everywhere, blockDim.x);   // INIT
    out[threadIdx.x] = 1;
}
'''
SCOPES = ("cuda::thread_scope_device", "cuda::thread_scope_system", "cuda::thread_scope_block")


@pytest.fixture(scope="module")
def scoped():
    names = tuple(f"neighbours<{s}, {w}>" for s in SCOPES for w in ("true", "false"))
    return {check: cudacheck.RawModule(SCOPED, backend="cpu", check=check, name_expressions=names)
            for check in (False, True)}


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("scope", SCOPES)
def test_a_barrier_of_device_or_system_scope_in_shared_memory_orders_its_block(scoped, scope, check, rng):
    x = rng.standard_normal(3 * 64).astype(np.float32)
    out = np.zeros_like(x)
    scoped[check].get_function(f"neighbours<{scope}, true>")((3,), (64,), (x, out))
    assert np.array_equal(out, np.roll(x.reshape(3, 64), -1, axis=1).ravel())


@pytest.mark.parametrize("scope", SCOPES)
def test_a_missing_wait_on_such_a_barrier_is_a_race(scoped, scope, rng):
    x = rng.standard_normal(64).astype(np.float32)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match=r"slot"):
        scoped[True].get_function(f"neighbours<{scope}, false>")((1,), (64,), (x, np.zeros(64, np.float32)))


def test_a_barrier_of_device_scope_in_global_memory_is_refused_at_its_init(scoped):
    with pytest.raises(cudacheck.InvalidOperandError, match=r"mbarrier\.init .*not an 8-byte aligned address in "
                                                            r"shared memory") as e:
        scoped[False].get_function("in_global")((1,), (32,), (np.zeros(32, np.int32),))
    assert e.value.line == next(i for i, s in enumerate(SCOPED.splitlines(), 1) if "// INIT" in s)
