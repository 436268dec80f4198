"""Grid-wide cooperative groups on the CPU runtime: cooperative_groups::this_grid() and its
sync() in a cooperative launch (RawKernel/RawModule's enable_cooperative_groups=True, a whole
program's cudaLaunchCooperativeKernel). Multi-phase kernels give NumPy's results on random
inputs and odd grids, plain and checked; what a GPU refuses or leaves undefined is an error
that says what to do: a grid larger than the GPU holds at once, grid.sync() outside a
cooperative launch, a grid.sync() some threads or a whole block skip. Checked mode's global
race check takes grid.sync() as a barrier of the whole grid, and still finds a race within
one phase."""
import textwrap

import numpy as np
import pytest

import cudacheck
from cudacheck import (
    BarrierDivergenceError,
    ForwardProgressError,
    GlobalMemoryRaceError,
    LaunchConfigError,
)
from tests.support.numerics import UNIT_ROUNDOFF

HEADER = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"


def kernel(src, name, check=False, cooperative=True, options=()):
    return cudacheck.RawKernel(HEADER + textwrap.dedent(src), name, options=options, backend="cpu", check=check,
                               enable_cooperative_groups=cooperative)


def line_of(src, text):
    """The line of `text` in HEADER + src, as the kernel's messages number it."""
    lines = (HEADER + textwrap.dedent(src)).splitlines()
    return next(i for i, s in enumerate(lines, 1) if text in s)


# Three phases, two grid.sync(): each block sums the squares of its grid-stride elements into
# partial[block]; block 0 adds the partials into total[0]; every thread scales its elements by the
# total. Phase 2 reads what every block wrote in phase 1, phase 3 what block 0 wrote in phase 2.
NORMALIZE = r'''
extern "C" __global__ void normalize(const float* x, float* partial, float* total, float* y, int n) {
    cg::grid_group g = cg::this_grid();
    extern __shared__ float s[];
    float t = 0.0f;
    for (unsigned long long i = g.thread_rank(); i < n; i += g.size()) t += x[i] * x[i];
    s[threadIdx.x] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        float a = 0.0f;
        for (unsigned k = 0; k < blockDim.x; ++k) a += s[k];
        partial[g.block_rank()] = a;
    }
    g.sync();
    if (g.block_rank() == 0 && threadIdx.x == 0) {
        float a = 0.0f;
        for (unsigned long long b = 0; b < g.num_blocks(); ++b) a += partial[b];
        total[0] = a;
    }
    cg::sync(g);
    for (unsigned long long i = g.thread_rank(); i < n; i += g.size()) y[i] = x[i] / total[0];
}
'''


@pytest.mark.parametrize("check", [False, True])
@pytest.mark.parametrize("grid,block,n", [(1, 64, 300), (7, 96, 1001), (13, 32, 4099)])
def test_two_syncs_normalize_like_numpy(rng, check, grid, block, n):
    x = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    partial, total, y = np.zeros(grid, np.float32), np.zeros(1, np.float32), np.zeros(n, np.float32)
    kernel(NORMALIZE, "normalize", check)(grid, block, (x, partial, total, y, np.int32(n)), shared_mem=4 * block)
    x64 = x.astype(np.float64)
    want = (x64 * x64).sum()
    # n products and sums in float32, each rounded once (u = 2^-24), fused or not: within 2 n u of the sum
    assert abs(total[0] - want) <= 2 * n * UNIT_ROUNDOFF * want
    assert abs(partial.astype(np.float64).sum() - want) <= 2 * n * UNIT_ROUNDOFF * want
    np.testing.assert_allclose(y, x64 / want, rtol=(2 * n + 1) * UNIT_ROUNDOFF, atol=0)


# Jacobi iteration on a line with fixed ends, one grid.sync() per step: each step reads what the
# neighbouring blocks wrote in the step before. Threads past the end keep calling grid.sync().
JACOBI = r'''
extern "C" __global__ void jacobi(float* u, float* v, int n, int steps) {
    cg::grid_group g = cg::this_grid();
    unsigned long long i = g.thread_rank();
    for (int s = 0; s < steps; ++s) {
        const float* from = s % 2 ? v : u;
        float* to = s % 2 ? u : v;
        if (i < n) to[i] = i == 0 || i == n - 1 ? from[i] : 0.5f * (from[i - 1] + from[i + 1]);
        g.sync();
    }
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_jacobi_steps_match_numpy_bit_for_bit(rng, check):
    n, steps, block = int(rng.integers(200, 352)), 15, 32
    grid = -(-n // block)   # 7 to 11 blocks, the last one partly past the end
    u0 = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    u, v = u0.copy(), np.zeros(n, np.float32)
    kernel(JACOBI, "jacobi", check)(grid, block, (u, v, np.int32(n), np.int32(steps)))
    ref, half = u0.copy(), np.float32(0.5)
    ref64 = u0.astype(np.float64)
    for _ in range(steps):
        ref = np.concatenate([ref[:1], half * (ref[:-2] + ref[2:]), ref[-1:]])   # float32, as the kernel rounds
        ref64 = np.concatenate([ref64[:1], 0.5 * (ref64[:-2] + ref64[2:]), ref64[-1:]])
    got = v if steps % 2 else u
    assert got.tobytes() == ref.tobytes()   # the same float32 operations in the same order: the same bits
    np.testing.assert_allclose(got, ref64, rtol=0, atol=steps * UNIT_ROUNDOFF)


RANKS = r'''
extern "C" __global__ void ranks(unsigned long long* out) {
    cg::grid_group g = cg::this_grid();
    unsigned long long me = (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))
                            * (blockDim.x * blockDim.y * blockDim.z)
                            + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    dim3 d = g.dim_blocks();
    out[6 * me + 0] = g.thread_rank();
    out[6 * me + 1] = g.block_rank();
    out[6 * me + 2] = g.num_blocks();
    out[6 * me + 3] = g.size() + g.num_threads();
    out[6 * me + 4] = d.x + 100 * d.y + 10000 * d.z;
    out[6 * me + 5] = g.is_valid();
}
'''


@pytest.mark.parametrize("cooperative", [True, False])
def test_grid_group_ranks_sizes_and_validity(cooperative):
    grid, block = (3, 2, 2), (4, 3, 2)
    blocks, threads = 12, 24
    out = np.zeros((blocks * threads, 6), np.uint64)
    kernel(RANKS, "ranks", cooperative=cooperative)(grid, block, (out,))
    rank = np.arange(blocks * threads)
    assert out[:, 0].tolist() == rank.tolist()
    assert out[:, 1].tolist() == (rank // threads).tolist()
    assert set(out[:, 2].tolist()) == {blocks}
    assert set(out[:, 3].tolist()) == {2 * blocks * threads}
    assert set(out[:, 4].tolist()) == {3 + 100 * 2 + 10000 * 2}
    assert set(out[:, 5].tolist()) == {int(cooperative)}   # is_valid(): only in a cooperative launch


STATIC = r'''
extern "C" __global__ void tile(float* out) {
    __shared__ float s[1024];
    extern __shared__ float d[];
    cg::grid_group g = cg::this_grid();
    s[threadIdx.x] = d[0] = 1.0f;
    g.sync();
    out[g.thread_rank()] = s[threadIdx.x];
}
'''


@pytest.mark.parametrize("block,dynamic,per_sm", [
    (1024, 0, 2),            # threads: 2048 per SM
    (32, 0, 32),             # blocks: 32 per SM
    (96, 0, 21),             # threads, in whole warps: 2048 // 96
    (64, 40 * 1024, 5),      # shared: 228 KiB // (4 KiB static + 40 KiB dynamic + 1 KiB reserved)
])
def test_a_cooperative_grid_larger_than_the_gpu_holds_is_refused(block, dynamic, per_sm):
    k = kernel(STATIC, "tile")
    k.max_dynamic_shared_size_bytes = dynamic or None
    limit = 132 * per_sm
    out = np.zeros(block * (limit + 1), np.float32)
    with pytest.raises(LaunchConfigError) as e:
        k(limit + 1, block, (out,), shared_mem=dynamic)
    assert e.value.cuda_error == "cudaErrorCooperativeLaunchTooLarge"
    msg = str(e.value)
    assert f"at most {limit} blocks" in msg and f"({per_sm} per SM on its 132 SMs" in msg
    assert "registers" in msg and "grid-stride loop" in msg and "`tile`" in msg
    assert not out.any()   # refused before any block ran


@pytest.mark.parametrize("check", [False, True])
def test_grid_sync_without_a_cooperative_launch_is_an_error(check):
    x = np.ones(4 * 32, np.float32)
    k = kernel(NORMALIZE, "normalize", check, cooperative=False)
    with pytest.raises(ForwardProgressError) as e:
        k(4, 32, (x, np.zeros(4, np.float32), np.zeros(1, np.float32), np.zeros_like(x), np.int32(x.size)),
          shared_mem=128)
    msg = str(e.value)
    assert e.value.line == line_of(NORMALIZE, "g.sync();")
    assert "`normalize`" in msg and "not launched cooperatively" in msg
    assert "enable_cooperative_groups=True" in msg and "cudaLaunchCooperativeKernel" in msg


SKIPPED_BY_THREADS = r'''
extern "C" __global__ void skip(float* out) {
    cg::grid_group g = cg::this_grid();
    if (threadIdx.x >= 24) return;
    out[g.thread_rank()] = 1.0f;
    g.sync();
}
'''

SKIPPED_BY_A_BLOCK = r'''
extern "C" __global__ void skip(float* out) {
    cg::grid_group g = cg::this_grid();
    if (blockIdx.x == 2) return;
    out[g.thread_rank()] = 1.0f;
    g.sync();
    out[g.thread_rank()] = 2.0f;
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_a_grid_sync_some_threads_of_a_block_skip_is_divergent(check):
    with pytest.raises(BarrierDivergenceError) as e:
        kernel(SKIPPED_BY_THREADS, "skip", check)(3, 32, (np.zeros(96, np.float32),))
    msg = str(e.value)
    assert "threads with threadIdx.x >= 24 returned at line" in msg
    assert f"the others wait at grid.sync() on line {line_of(SKIPPED_BY_THREADS, 'g.sync();')}" in msg
    assert "Every thread of a block must reach the same grid.sync()" in msg


@pytest.mark.parametrize("check", [False, True])
def test_a_block_that_returns_before_a_grid_sync_is_named(check):
    with pytest.raises(ForwardProgressError) as e:
        kernel(SKIPPED_BY_A_BLOCK, "skip", check)(4, 32, (np.zeros(128, np.float32),))
    assert e.value.returned == (2, 0, 0)
    assert e.value.line == line_of(SKIPPED_BY_A_BLOCK, "g.sync();")
    assert "block (2, 0, 0) has returned without reaching it" in str(e.value)


# Each thread publishes a[i], then reads the element of the same thread of the next block. With
# the grid.sync() between them the read is ordered after the write; without it the two blocks
# race. RACE: after the barrier, thread 0 of every block writes one flag: a race within a phase.
PUBLISH = r'''
extern "C" __global__ void publish(float* a, float* b, int* flag) {
    cg::grid_group g = cg::this_grid();
    unsigned long long i = g.thread_rank(), n = g.size();
    a[i] = float(i);
#if SYNC
    g.sync();
#endif
    b[i] = a[(i + blockDim.x) % n];
#if RACE
    if (threadIdx.x == 0) flag[0] = blockIdx.x;
#endif
}
'''


def publish(sync, race, grid=5, block=32):
    a, b, flag = np.zeros(grid * block, np.float32), np.zeros(grid * block, np.float32), np.zeros(1, np.int32)
    kernel(PUBLISH, "publish", check=True, options=(f"-DSYNC={sync}", f"-DRACE={race}"))(grid, block, (a, b, flag))
    return a, b


def test_checked_mode_orders_global_memory_across_a_grid_sync():
    a, b = publish(sync=1, race=0)
    assert b.tolist() == np.roll(a, -32).tolist()


def test_checked_mode_finds_the_race_without_the_grid_sync():
    with pytest.raises(GlobalMemoryRaceError) as e:
        publish(sync=0, race=0)
    assert e.value.array == "a" and e.value.block != e.value.other_block


def test_checked_mode_finds_a_race_within_a_phase_after_a_grid_sync():
    with pytest.raises(GlobalMemoryRaceError) as e:
        publish(sync=1, race=1)
    assert e.value.array == "flag" and e.value.block != e.value.other_block


PROGRAM = HEADER + r'''
#include <cstdio>
__global__ void sum(const int* in, int* partial, int* out, int n) {
    cg::grid_group g = cg::this_grid();
    __shared__ int s[64];
    int t = 0;
    for (unsigned long long i = g.thread_rank(); i < n; i += g.size()) t += in[i];
    s[threadIdx.x] = t;
    __syncthreads();
    if (threadIdx.x == 0) { int a = 0; for (int k = 0; k < blockDim.x; ++k) a += s[k]; partial[blockIdx.x] = a; }
    g.sync();
    if (g.thread_rank() == 0) { int a = 0; for (int b = 0; b < g.num_blocks(); ++b) a += partial[b]; out[0] = a; }
}
int main(int argc, char** argv) {
    int n = atoi(argv[1]), blocks = atoi(argv[2]);
    int* h = (int*)malloc(n * sizeof(int));
    long long want = 0;
    for (int i = 0; i < n; ++i) { h[i] = (i * 7919) % 201 - 100; want += h[i]; }
    int sms = 0, coop = 0, per_sm = 0, per_sm_big = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum, 64, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_big, sum, 1024, 0);
    printf("SMs %d, cooperative launch %d, blocks per SM %d (of 1024 threads: %d)\n", sms, coop, per_sm, per_sm_big);
    int *d_in, *d_partial, *d_out;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_partial, (sms * per_sm + 1) * sizeof(int));
    cudaMalloc(&d_out, sizeof(int));
    cudaMemcpy(d_in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    void* args[] = {&d_in, &d_partial, &d_out, &n};
    cudaError_t e = cudaLaunchCooperativeKernel((void*)sum, dim3(blocks), dim3(64), args, 0, 0);
    int out = 0;
    cudaMemcpy(&out, d_out, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%s: %d (want %lld)\n", cudaGetErrorName(e), out, want);
    e = cudaLaunchCooperativeKernel((void*)sum, sms * per_sm + 1, 64, args);
    printf("%s\n", cudaGetErrorName(e));
    cudaGetLastError();
    cudaFree(d_in); cudaFree(d_partial); cudaFree(d_out);
    free(h);
    return 0;
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_a_whole_program_launches_cooperatively(rng, check):
    n, blocks = int(rng.integers(500, 3000)), int(rng.choice([1, 3, 5]))
    r = cudacheck.run_program(PROGRAM, backend="cpu", check=check, args=(n, blocks))
    want = sum((i * 7919) % 201 - 100 for i in range(n))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [
        "SMs 132, cooperative launch 1, blocks per SM 32 (of 1024 threads: 2)",
        f"cudaSuccess: {want} (want {want})",
        "cudaErrorCooperativeLaunchTooLarge",
    ]
    # the launch too large to be cooperative did not run, and is reported as compute-sanitizer
    # reports a failed launch; checked mode's reading of the launch that ran: the partial sums
    # stay on the device (all it says)
    failed = [w for w in r.warnings if isinstance(w, cudacheck.LaunchFailedWarning)]
    assert len(failed) == 1 and "cudaErrorCooperativeLaunchTooLarge" in str(failed[0]), r.warnings
    assert [(type(w).__name__, "`d_partial`" in str(w)) for w in r.warnings if w not in failed] == (
        [("ResultNeverCopiedWarning", True)] if check else [])


def test_a_program_whose_kernel_syncs_the_grid_after_a_plain_launch_is_told_to_launch_cooperatively():
    src = PROGRAM.replace("cudaError_t e = cudaLaunchCooperativeKernel((void*)sum, dim3(blocks), dim3(64), args, "
                          "0, 0);",
                          "sum<<<blocks, 64>>>(d_in, d_partial, d_out, n); cudaError_t e = cudaGetLastError();")
    with pytest.raises(ForwardProgressError) as e:
        cudacheck.run_program(src, backend="cpu", check=True, args=(100, 2))
    assert "not launched cooperatively" in str(e.value) and "cudaLaunchCooperativeKernel" in str(e.value)


def test_an_unchecked_cooperative_launch_that_is_too_large_is_reported_in_checked_mode():
    src = PROGRAM.replace("    cudaGetLastError();\n", "")
    with pytest.raises(LaunchConfigError) as e:
        cudacheck.run_program(src, backend="cpu", check=True, args=(100, 2))
    assert "cudaErrorCooperativeLaunchTooLarge" in str(e.value) and "4224 blocks" in str(e.value)


# Block 0 waits for a flag the grid's last block sets. A cooperative launch runs every block at
# once, so it finishes; an ordinary one runs the last block on block 0's worker after it, and
# says that only a cooperative launch promises this.
WAIT_FOR_THE_LAST = r'''
extern "C" __global__ void wait_last(volatile int* flag, int* seen) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { while (flag[0] == 0) { } seen[0] = flag[0]; }
    if (blockIdx.x == gridDim.x - 1) { __threadfence(); flag[0] = 7; }
}
'''


@pytest.mark.parametrize("cooperative", [True, False])
def test_blocks_of_a_cooperative_launch_make_progress_side_by_side(cooperative, monkeypatch):
    monkeypatch.setattr(cudacheck.config, "workers", 1)   # an ordinary launch: one block after another
    flag, seen = np.zeros(1, np.int32), np.zeros(1, np.int32)
    k = kernel(WAIT_FOR_THE_LAST, "wait_last", cooperative=cooperative)
    if cooperative:
        k(5, 32, (flag, seen))
        assert (flag[0], seen[0]) == (7, 7)
    else:
        with pytest.raises(ForwardProgressError, match="cooperative launch"):
            k(5, 32, (flag, seen))


# Block 0's thread 0 polls a flag that block 1 sets only after a grid.sync() block 0 cannot reach
# while it polls: each waits for the other, on a GPU too.
POLL_ACROSS_THE_BARRIER = r'''
extern "C" __global__ void cross(volatile int* flag) {
    cg::grid_group g = cg::this_grid();
    if (blockIdx.x == 0 && threadIdx.x == 0) while (flag[0] == 0) { }
    g.sync();
    if (blockIdx.x == 1 && threadIdx.x == 0) flag[0] = 1;
}
'''


def test_a_block_polling_for_what_another_sets_after_a_grid_sync_is_a_deadlock():
    with pytest.raises(ForwardProgressError) as e:
        kernel(POLL_ACROSS_THE_BARRIER, "cross")(3, 32, (np.zeros(1, np.int32),))
    msg = str(e.value)
    assert e.value.block == (0, 0, 0) and "polls flag[0]" in msg
    assert "cooperative launch, whose blocks all run at once" in msg and "A GPU hangs here too" in msg


TEMPLATE_PROGRAM = HEADER + r'''
#include <cstdio>
template <class T, int Scale>
__global__ void twice(T* x, int n) {
    cg::grid_group g = cg::this_grid();
    unsigned long long i = g.thread_rank();
    T mine = i < n ? x[i] : T(0);
    g.sync();   // every read of x before any write
    if (i < n) x[(i + 1) % n] = Scale * mine;
}
int main() {
    const int n = 100;
    float h[n];
    for (int i = 0; i < n; ++i) h[i] = i;
    float* d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    int count = n;
    void* args[] = {&d, &count};
    cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<void*>(&twice<float, 3>), 4, 32, args);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s %g %g %g\n", cudaGetErrorName(e), h[0], h[1], h[99]);
    cudaFree(d);
    return 0;
}
'''


def test_a_template_kernel_launched_cooperatively_with_a_cast_of_its_address():
    r = cudacheck.run_program(TEMPLATE_PROGRAM, backend="cpu", check=True)
    assert (r.exit_code, r.stdout, r.warnings) == (0, "cudaSuccess 297 0 294\n", [])


def test_a_cooperative_launch_through_a_function_pointer_is_refused_with_its_line():
    src = PROGRAM.replace("cudaError_t e = cudaLaunchCooperativeKernel((void*)sum,",
                          "void* f = (void*)sum; cudaError_t e = cudaLaunchCooperativeKernel(f,")
    with pytest.raises(cudacheck.UnsupportedFeatureError) as e:
        cudacheck.run_program(src, backend="cpu", args=(100, 2))
    line = next(i for i, s in enumerate(src.splitlines(), 1) if "void* f = (void*)sum" in s)
    assert f"line {line}" in str(e.value) and "named directly" in str(e.value)


# Threads of a block at grid.sync() on two lines: one barrier on a GPU, as __syncthreads() on two
# lines is; a plain run carries on as for __syncthreads(), checked mode reports the divergence.
TWO_LINES = r'''
extern "C" __global__ void two(float* a, float* b) {
    cg::grid_group g = cg::this_grid();
    unsigned long long i = g.thread_rank();
    a[i] = float(i);
    if (threadIdx.x < 8) g.sync();
    else g.sync();
    b[i] = a[(i + blockDim.x) % g.size()];
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_grid_syncs_on_two_lines_run_plain_and_are_divergent_in_checked_mode(check):
    a, b = np.zeros(3 * 32, np.float32), np.zeros(3 * 32, np.float32)
    k = kernel(TWO_LINES, "two", check)
    if not check:
        k(3, 32, (a, b))
        assert b.tolist() == np.roll(np.arange(96, dtype=np.float32), -32).tolist()
        return
    with pytest.raises(BarrierDivergenceError) as e:
        k(3, 32, (a, b))
    assert "threads with threadIdx.x < 8 wait at grid.sync() on line" in str(e.value)
