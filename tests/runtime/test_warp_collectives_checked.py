"""Checked mode on wmma and asynchronous copies (cpu/include/mma.h, cuda_pipeline.h): each
misuse raises its own exception naming the call's line, the block and the lanes or thread;
plain mode neither hangs nor crashes on them, and refuses what a GPU refuses (a misaligned
address, a copy size cp.async does not have)."""
import re

import numpy as np
import pytest

import cudacheck

HEAD = r'''#include <mma.h>
#include <cuda_pipeline.h>
using namespace nvcuda;
typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> A;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> C;
'''

KERNELS = {
    "partial_then_barrier": r'''
extern "C" __global__ void partial_then_barrier(const __half* p, float* out) {
    A a;
    wmma::fill_fragment(a, __float2half(1.0f));
    if (threadIdx.x % 32 < 16)
        wmma::load_matrix_sync(a, p, 16);       // MARK
    __syncthreads();
    out[threadIdx.x] = float(a.x[0]);
}''',
    "partial_then_return": r'''
extern "C" __global__ void partial_then_return(const __half* p, float* out) {
    C c;
    wmma::fill_fragment(c, 1.0f);
    if (threadIdx.x >= 40) return;              // OTHER
    wmma::store_matrix_sync(out, c, 16, wmma::mem_row_major);   // MARK
}''',
    "partial_mma": r'''
extern "C" __global__ void partial_mma(const __half* p, float* out) {
    A a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    C c;
    wmma::fill_fragment(a, __float2half(1.0f));
    wmma::fill_fragment(b, __float2half(1.0f));
    wmma::fill_fragment(c, 0.0f);
    if (threadIdx.x != 7)
        wmma::mma_sync(c, a, b, c);             // MARK
    out[threadIdx.x] = c.x[0];
}''',
    "short_warp": r'''
extern "C" __global__ void short_warp(const __half* p, float* out) {
    A a;
    wmma::load_matrix_sync(a, p, 16);           // MARK
    out[threadIdx.x] = float(a.x[0]);
}''',
    "different_pointers": r'''
extern "C" __global__ void different_pointers(const __half* p, float* out) {
    A a;
    wmma::load_matrix_sync(a, p + (threadIdx.x / 8) * 16, 16);   // MARK
    out[threadIdx.x] = float(a.x[0]);
}''',
    "different_ldm": r'''
extern "C" __global__ void different_ldm(const __half* p, float* out) {
    C c;
    wmma::fill_fragment(c, 0.0f);
    wmma::store_matrix_sync(out, c, threadIdx.x == 5 ? 24 : 16, wmma::mem_row_major);   // MARK
}''',
    "misaligned_pointer": r'''
extern "C" __global__ void misaligned_pointer(const __half* p, float* out) {
    A a;
    wmma::load_matrix_sync(a, p + 8, 16);       // MARK
    out[threadIdx.x] = float(a.x[0]);
}''',
    "bad_ldm": r'''
extern "C" __global__ void bad_ldm(const __half* p, float* out) {
    A a;
    wmma::load_matrix_sync(a, p, 20);           // MARK
    out[threadIdx.x] = float(a.x[0]);
}''',
    "oob_global": r'''
extern "C" __global__ void oob_global(const __half* p, float* out) {
    A a;
    wmma::load_matrix_sync(a, p + 16 * 16, 64); // MARK
    out[threadIdx.x] = float(a.x[0]);
}''',
    "oob_shared": r'''
extern "C" __global__ void oob_shared(const __half* p, float* out) {
    __shared__ __align__(32) __half s[16][16];
    __shared__ __align__(32) __half t[16][16];
    for (int i = threadIdx.x; i < 256; i += 32) { s[i / 16][i % 16] = p[i]; t[i / 16][i % 16] = p[i]; }
    __syncthreads();
    A a;
    wmma::load_matrix_sync(a, &s[8][0], 16);    // MARK
    out[threadIdx.x] = float(a.x[0]) + float(t[0][0]);
}''',
    "store_oob_shared": r'''
extern "C" __global__ void store_oob_shared(const __half* p, float* out) {
    __shared__ __align__(32) float s[16][8];
    C c;
    wmma::fill_fragment(c, 1.0f);
    wmma::store_matrix_sync(&s[0][0], c, 8, wmma::mem_col_major);   // MARK
    out[threadIdx.x] = s[0][threadIdx.x % 8];
}''',
    "fragment_race": r'''
extern "C" __global__ void fragment_race(const __half* p, float* out) {
    __shared__ __align__(32) float s[16 * 16];
    C c;
    wmma::fill_fragment(c, 2.0f);
    wmma::store_matrix_sync(s, c, 16, wmma::mem_row_major);
    // MARK: no __syncwarp() between; the element this lane reads is the one it stored under the runtime's
    // mapping, which CUDA does not promise: still a race
    out[threadIdx.x] = s[threadIdx.x];
}''',
    "fragment_synced": r'''
extern "C" __global__ void fragment_synced(const __half* p, float* out) {
    __shared__ __align__(32) float s[16 * 16];
    C c;
    wmma::fill_fragment(c, 2.0f);
    wmma::store_matrix_sync(s, c, 16, wmma::mem_row_major);
    __syncwarp();
    out[threadIdx.x] = s[255 - threadIdx.x];
}''',
    "copy_read_before_wait": r'''
extern "C" __global__ void copy_read_before_wait(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4], 16);   // OTHER
    __pipeline_commit();
    out[threadIdx.x] = s[threadIdx.x * 4 + 1];  // MARK
    __pipeline_wait_prior(0);
}''',
    "copy_read_by_another_before_wait": r'''
extern "C" __global__ void copy_read_by_another_before_wait(const __half* p, float* out) {
    __shared__ __align__(16) float s[64 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    if (threadIdx.x < 32) {
        __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4], 16);   // OTHER
        __pipeline_commit();
    }
    __syncthreads();
    if (threadIdx.x >= 32) out[threadIdx.x] = s[(threadIdx.x - 32) * 4];   // MARK
    __pipeline_wait_prior(0);
}''',
    "copy_uncommitted_wait": r'''
extern "C" __global__ void copy_uncommitted_wait(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4], 16);   // OTHER
    __pipeline_wait_prior(0);                   // waits for committed batches only: none
    out[threadIdx.x] = s[threadIdx.x * 4];      // MARK
}''',
    "copy_no_barrier": r'''
extern "C" __global__ void copy_no_barrier(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4], 16);   // OTHER
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[threadIdx.x] = s[(threadIdx.x * 4 + 4) % 128];   // MARK: another thread's copy, no barrier
}''',
    "copy_misaligned": r'''
extern "C" __global__ void copy_misaligned(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 4 + 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4 + 1], &q[threadIdx.x * 4], 16);   // MARK
    __pipeline_commit();
    __pipeline_wait_prior(0);
}''',
    "copy_misaligned_source": r'''
extern "C" __global__ void copy_misaligned_source(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 2];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 2], &q[threadIdx.x * 2 + 1], 8);   // MARK
    __pipeline_commit();
    __pipeline_wait_prior(0);
}''',
    "copy_bad_size": r'''
extern "C" __global__ void copy_bad_size(const __half* p, float* out) {
    __shared__ __align__(16) float s[32 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4], 12);   // MARK
    __pipeline_commit();
    __pipeline_wait_prior(0);
}''',
    "copy_into_global": r'''
extern "C" __global__ void copy_into_global(const __half* p, float* out) {
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&out[threadIdx.x], &q[threadIdx.x], 4);   // MARK
    __pipeline_commit();
    __pipeline_wait_prior(0);
}''',
    "copy_oob_source": r'''
extern "C" __global__ void copy_oob_source(const __half* p, float* out) {
    __shared__ __align__(16) float s[64 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    __pipeline_memcpy_async(&s[threadIdx.x * 4], &q[threadIdx.x * 4 + 500], 16);   // MARK
    __pipeline_commit();
    __pipeline_wait_prior(0);
}''',
    "copies_in_order": r'''
extern "C" __global__ void copies_in_order(const __half* p, float* out) {
    // Three batches in flight, waited for one by one; zfill writes zeros; the copies land at the
    // waits, so what each read finds says which had landed.
    __shared__ __align__(16) float s[3][32 * 4];
    const float* q = reinterpret_cast<const float*>(p);
    for (int b = 0; b < 3; ++b) {
        s[b][threadIdx.x * 4] = -1.0f;
        __pipeline_memcpy_async(&s[b][threadIdx.x * 4 + 0], &q[threadIdx.x * 4], 16, b == 1 ? 8 : 0);
        __pipeline_commit();
    }
    __pipeline_wait_prior(2);
    out[threadIdx.x * 4 + 0] = s[0][threadIdx.x * 4 + 0];
    __pipeline_wait_prior(1);
    out[threadIdx.x * 4 + 1] = s[1][threadIdx.x * 4 + 0];
    out[threadIdx.x * 4 + 2] = s[1][threadIdx.x * 4 + 3];
    __pipeline_wait_prior(0);
    out[threadIdx.x * 4 + 3] = s[2][threadIdx.x * 4 + 2];
}''',
}


def line_of(name, tag="MARK"):
    src = HEAD + "".join(KERNELS.values())
    start = src.index(f"void {name}(")
    return src[:start].count("\n") + src[start:].split("\n").index(
        next(x for x in src[start:].split("\n") if f"// {tag}" in x)) + 1


@pytest.fixture(scope="module")
def mods():
    src = HEAD + "".join(KERNELS.values())
    return {check: cudacheck.RawModule(src, backend="cpu", check=check) for check in (False, True)}


def run(mods, name, check=True, block=32, grid=1, schedule="forward"):
    p = np.random.default_rng().uniform(-1, 1, 1024).astype(np.float16)
    out = np.zeros(max(256, block), np.float32)
    mods[check].get_function(name)(grid, block, (p, out), schedule=schedule)
    return p, out


def names_line(e, name, tag="MARK"):
    line = line_of(name, tag)
    assert e.value.line == line
    assert f"line {line}" in str(e.value)
    return line


@pytest.mark.parametrize("name,arrived,elsewhere", [
    ("partial_then_barrier", "lanes 0-15 only", r"lanes 16-31 wait at __syncthreads\(\) on line"),
    ("partial_then_return", "lanes 0-7 only", r"lanes 8-31 returned at line"),
    ("partial_mma", "lanes 0-6, 8-31 only", r"lane 7 "),
])
def test_a_wmma_call_that_part_of_a_warp_reaches(mods, name, arrived, elsewhere):
    with pytest.raises(cudacheck.WarpCollectiveError) as e:
        run(mods, name, block=64)
    names_line(e, name)
    msg = str(e.value)
    assert arrived in msg and re.search(elsewhere, msg), msg
    assert "warp 1 of block (0, 0, 0)" in msg if name == "partial_then_return" else "warp 0 of block (0, 0, 0)" in msg
    assert isinstance(e.value, cudacheck.WarpDivergenceError) and e.value.problem == "partial"
    assert len(e.value.arrived) < 32
    run(mods, name, check=False, block=64)   # plain mode: neither hangs nor crashes


def test_a_warp_of_fewer_than_32_threads(mods):
    with pytest.raises(cudacheck.WarpCollectiveError, match=r"warp of 16 threads \(the block has 48") as e:
        run(mods, "short_warp", block=48)
    names_line(e, "short_warp")
    run(mods, "short_warp", check=False, block=48)


@pytest.mark.parametrize("name,what", [("different_pointers", r"not with one pointer: lane 0 passes 0x[0-9a-f]+ and "
                                                           r"lane 8 passes 0x[0-9a-f]+"),
                                       ("different_ldm", "not with one ldm: lane 0 passes 16 and lane 5 passes 24")])
def test_lanes_that_pass_different_arguments(mods, name, what):
    with pytest.raises(cudacheck.WarpCollectiveError, match=what) as e:
        run(mods, name)
    names_line(e, name)
    assert e.value.problem == "arguments"


@pytest.mark.parametrize("check", [False, True])
def test_a_misaligned_wmma_pointer_is_refused_in_both_modes(mods, check):
    with pytest.raises(cudacheck.MisalignedAddressError, match=r"not 32-byte aligned \(it is 16 bytes past") as e:
        run(mods, "misaligned_pointer", check=check)
    names_line(e, "misaligned_pointer")
    assert "thread (0, 0, 0) (lane 0 of warp 0) of block (0, 0, 0)" in str(e.value)


def test_a_leading_dimension_that_is_not_16_bytes(mods):
    with pytest.raises(cudacheck.LeadingDimensionError, match=r"ldm = 20, which is not a multiple of 8 elements") as e:
        run(mods, "bad_ldm")
    names_line(e, "bad_ldm")
    run(mods, "bad_ldm", check=False)   # undefined on a GPU: plain mode reads what it is told


def test_an_out_of_bounds_fragment_load_from_global_memory(mods):
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        run(mods, "oob_global")
    names_line(e, "oob_global")
    assert e.value.array == "p" and e.value.index[0] >= 1024 and e.value.op == "read"
    assert "of the 16 x 16 tile that wmma::load_matrix_sync reads, with ldm 64, row-major" in str(e.value)


def test_an_out_of_bounds_fragment_load_from_shared_memory_into_the_next_array(mods):
    # rows 8..23 of a 16 x 16 array: past its end, though t lies there
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        run(mods, "oob_shared")
    names_line(e, "oob_shared")
    assert e.value.array == "s" and e.value.index[0] == 16 and e.value.extent == (16, 16)
    assert re.search(r"thread \(\d+, 0, 0\) of block \(0, 0, 0\) reads s\[16\]\[\d+\]", str(e.value))


def test_an_out_of_bounds_fragment_store_into_shared_memory(mods):
    with pytest.raises(cudacheck.OutOfBoundsError, match=r"writes s\[16\]\[0\].*column-major") as e:
        run(mods, "store_oob_shared")
    names_line(e, "store_oob_shared")


def test_a_fragment_store_then_reads_of_other_lanes_elements_need_a_syncwarp(mods):
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="__syncwarp") as e:
        run(mods, "fragment_race")
    assert line_of("fragment_race") + 2 in (e.value.line, e.value.other_line)
    _, out = run(mods, "fragment_synced")
    assert (out[:32] == 2).all()


def test_reading_a_copy_before_its_wait(mods):
    with pytest.raises(cudacheck.AsyncCopyRaceError) as e:
        run(mods, "copy_read_before_wait")
    names_line(e, "copy_read_before_wait")
    assert e.value.other_line == line_of("copy_read_before_wait", "OTHER")
    assert isinstance(e.value, cudacheck.SharedMemoryRaceError)
    assert re.search(r"thread \(\d+, 0, 0\) reads it at line \d+ while the asynchronous copy it issued", str(e.value))
    # plain mode: the copy lands at the wait, so the early read finds the old contents (zeros)
    _, out = run(mods, "copy_read_before_wait", check=False)
    assert (out[:32] == 0).all()


def test_reading_another_threads_copy_before_it_waited(mods):
    # Threads 0-31 copy and wait only after threads 32-63 read: a race under every schedule.
    # Where the reader runs first the copy is still in flight; where the copier runs first
    # it has waited, and the barrier missing after its wait is the race.
    with pytest.raises(cudacheck.AsyncCopyRaceError, match=r"thread \(31, 0, 0\) issued into it") as e:
        run(mods, "copy_read_by_another_before_wait", block=64, schedule="reverse")
    names_line(e, "copy_read_by_another_before_wait")
    assert e.value.thread == (63, 0, 0) and e.value.other_thread == (31, 0, 0)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="no barrier between them") as e:
        run(mods, "copy_read_by_another_before_wait", block=64)
    assert e.value.line == line_of("copy_read_by_another_before_wait")
    assert e.value.other_line == line_of("copy_read_by_another_before_wait", "OTHER")


def test_a_wait_does_not_complete_copies_never_committed(mods):
    with pytest.raises(cudacheck.AsyncCopyRaceError) as e:
        run(mods, "copy_uncommitted_wait")
    names_line(e, "copy_uncommitted_wait")


def test_a_copy_read_by_another_thread_needs_a_barrier_after_the_wait(mods):
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="read after write") as e:
        run(mods, "copy_no_barrier")
    assert not isinstance(e.value, cudacheck.AsyncCopyRaceError)
    assert {e.value.line, e.value.other_line} == {line_of("copy_no_barrier"), line_of("copy_no_barrier", "OTHER")}


@pytest.mark.parametrize("check", [False, True])
@pytest.mark.parametrize("name,error,what", [
    ("copy_misaligned", cudacheck.MisalignedAddressError, r"copy of 16 bytes whose destination \(0x[0-9a-f]+\) is "
                                                          r"not 16-byte aligned"),
    ("copy_misaligned_source", cudacheck.MisalignedAddressError, r"whose source .* is not 8-byte aligned"),
    ("copy_bad_size", cudacheck.InvalidOperandError, r"size of 12 bytes: asynchronous copies move 4, 8 or 16"),
])
def test_copies_a_gpu_refuses(mods, name, error, what, check):
    with pytest.raises(error, match=what) as e:
        run(mods, name, check=check)
    names_line(e, name)
    assert re.search(r"thread \(\d+, 0, 0\) \(lane \d+ of warp 0\) of block \(0, 0, 0\)", str(e.value))


def test_a_copy_must_go_from_global_to_shared_memory(mods):
    with pytest.raises(cudacheck.InvalidOperandError, match="outside shared memory") as e:
        run(mods, "copy_into_global")
    names_line(e, "copy_into_global")


def test_a_copy_that_reads_past_its_array(mods):
    with pytest.raises(cudacheck.OutOfBoundsError) as e:
        run(mods, "copy_oob_source")
    names_line(e, "copy_oob_source")
    assert e.value.array == "p" and e.value.op == "read"


@pytest.mark.parametrize("check", [False, True])
def test_batches_land_at_their_waits_and_zfill_writes_zeros(mods, check):
    p, out = run(mods, "copies_in_order", check=check)
    q = p.view(np.float32)
    got = out[:128].reshape(32, 4)
    np.testing.assert_array_equal(got[:, 0], q.reshape(-1, 4)[:32, 0])
    np.testing.assert_array_equal(got[:, 1], q.reshape(-1, 4)[:32, 0])   # the first 8 bytes were read
    assert (got[:, 2] == 0).all()                                         # the last 8 zero-filled
    np.testing.assert_array_equal(got[:, 3], q.reshape(-1, 4)[:32, 2])
