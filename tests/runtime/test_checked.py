"""Checked mode: every wrong kernel of the corpus raises the right exception naming the
right thread and element, under every schedule; correct kernels raise nothing on many
random shapes; the counters match the textbook's formulas; traces record the phases."""
import numpy as np
import pytest

import cudacheck
from tests.support.numerics import assert_product, random_matrix
from tiling_course import corpus, matmul, traces


@pytest.mark.parametrize("name", sorted(corpus.WRONG))
def test_corpus_kernel_raises_the_right_finding(name, rng):
    bug = corpus.WRONG[name]
    with pytest.raises(getattr(cudacheck, bug.expect)) as e:
        bug.run(rng=rng)
    for key, want in bug.details.items():
        assert getattr(e.value, key) == want, f"{key}: {getattr(e.value, key)} != {want}\n{e.value}"
    assert e.value.kernel == matmul.KERNELS[bug.kernel].function
    msg = str(e.value)
    assert "line " in msg and str(e.value.block) in msg


@pytest.mark.parametrize("schedule,seed", [("forward", None), ("reverse", None), ("random", 1), ("random", 2)])
@pytest.mark.parametrize("name", sorted(corpus.WRONG))
def test_every_finding_holds_under_every_schedule(name, schedule, seed, rng):
    bug = corpus.WRONG[name]
    with pytest.raises(getattr(cudacheck, bug.expect)) as e:
        bug.run(rng=rng, schedule=schedule, seed=seed)
    if isinstance(e.value, cudacheck.RaceError):   # the hazard is named by program order, not by the schedule
        assert e.value.hazard == bug.details["hazard"]


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("schedule,seed", [("forward", None), ("reverse", None), ("random", 3)])
def test_a_forgotten_block_idx_is_one_thread_of_two_blocks_writing_one_element(schedule, seed, workers, monkeypatch):
    """Which thread and which pair of blocks checked mode names depends on the schedule and
    on how many workers ran the blocks; that it is one thread of two blocks, storing on the
    same line, does not."""
    monkeypatch.setattr(cudacheck.config, "workers", workers)
    bug = corpus.WRONG["no_block_idx"]
    with pytest.raises(cudacheck.GlobalMemoryRaceError) as e:
        bug.run(schedule=schedule, seed=seed)
    err = e.value
    assert err.thread == err.other_thread and err.block != err.other_block
    assert err.line == err.other_line == bug.line_of("    P[row * Width + col] = sum;")
    assert "does the index use blockIdx?" in str(err)


def test_a_forgotten_block_idx_leaves_all_but_one_tile_of_p_unwritten(rng):
    M, N, P = corpus.WRONG["no_block_idx"].run(check=False, rng=rng)
    tile = corpus.WRONG["no_block_idx"].shape[3]
    assert_product(P[:tile, :tile], M[:tile], N[:, :tile])
    assert not P[tile:].any() and not P[:, tile:].any()


def test_divergent_barrier_messages_say_who_is_where():
    with pytest.raises(cudacheck.BarrierDivergenceError) as e:
        corpus.WRONG["barrier_in_branch"].run()
    bug = corpus.WRONG["barrier_in_branch"]
    first = bug.line_of("            __syncthreads();")
    assert (f"threads with threadIdx.y < 4 wait at __syncthreads() on line {first}; "
            f"the others wait at __syncthreads() on line") in str(e.value)
    with pytest.raises(cudacheck.BarrierDivergenceError) as e:
        corpus.WRONG["early_return"].run()
    ret = corpus.WRONG["early_return"].line_of("        return;")
    assert f"the others returned at line {ret}" in str(e.value)
    assert "threads with threadIdx.x < 4 wait at __syncthreads()" in str(e.value)


def test_wrong_kernels_without_checks_run_and_give_wrong_numbers(rng):
    # The same bugs, unchecked, pass silently with wrong results: why checked mode exists.
    M, N, P = corpus.WRONG["no_zero_fill"].run(check=False, rng=rng)
    assert not np.allclose(P, M.astype(np.float64) @ N, atol=1e-3)


CORRECT_SHAPES = [(1, 1, 1), (5, 3, 7), (17, 17, 17), (32, 32, 32), (33, 31, 29), (48, 16, 80), (64, 64, 64)]


@pytest.mark.parametrize("tile", (2, 4, 8, 16, 32))
@pytest.mark.parametrize("kernel", ["tiled_bounds", "tiled_dynamic"])
def test_no_false_positives_on_correct_bounds_checked_kernels(kernel, tile, rng):
    for m, k, n in CORRECT_SHAPES + [tuple(rng.integers(1, 70, 3))]:
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        P, _ = matmul.run(M, N, kernel, tile, "cpu", check=True, schedule="random", seed=int(rng.integers(1 << 30)))
        assert_product(P, M, N)


@pytest.mark.parametrize("tile", (2, 4, 8, 16, 32))
@pytest.mark.parametrize("kernel", ["naive", "tiled", "simpleMultiply", "coalescedMultiply", "sharedABMultiply"])
def test_no_false_positives_on_the_other_correct_kernels(kernel, tile, rng):
    for mult in (1, 2, 3):
        spec = matmul.KERNELS[kernel]
        m = n = tile * mult
        k = tile if spec.shapes is matmul.Shapes.TILE_INNER else m
        if spec.shapes is matmul.Shapes.SQUARE:
            m = k = n = tile * mult + int(rng.integers(0, tile))  # the naive kernel takes any Width
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        P = matmul.multiply(M, N, kernel=kernel, tile=tile, backend="cpu", check=True)
        assert_product(P, M, N)


@pytest.mark.parametrize("width", (16, 48, 64))
def test_naive_global_loads_are_2_width_cubed(width, rng):
    fn = matmul.compile("naive", 16, "cpu", check=True)
    M, N = random_matrix(rng, width, width), random_matrix(rng, width, width)
    P = np.zeros((width, width), np.float32)
    grid, block, _ = matmul.geometry("naive", width, width, width, 16)
    fn(grid, block, (M, N, P, width))
    r = fn.last_launch
    assert r.global_counts["M"].loads == r.global_counts["N"].loads == width ** 3   # width per output from each
    assert r.global_loads == 2 * width ** 3 and r.global_stores == width ** 2
    assert r.shared_loads == r.shared_stores == 0


@pytest.mark.parametrize("tile", (2, 4, 8, 16, 32))
def test_tiled_global_loads_are_2_width_cubed_over_tile(tile, rng):
    width = 2 * tile if tile > 8 else 4 * tile
    fn = matmul.compile("tiled", tile, "cpu", check=True)
    M, N = random_matrix(rng, width, width), random_matrix(rng, width, width)
    P = np.zeros((width, width), np.float32)
    fn((width // tile,) * 2, (tile, tile), (M, N, P, width))
    r = fn.last_launch
    assert r.global_loads == 2 * width ** 3 // tile           # 2 Width / TILE per thread
    assert r.global_loads // width ** 2 == 2 * width // tile
    assert r.shared_stores == 2 * width ** 3 // tile and r.shared_loads == 2 * width ** 3
    # Chapter 2's claim: per thread and phase, two shared stores and 2 * TILE shared loads.
    per_thread_phase = width ** 2 * (width // tile)
    assert r.shared_stores == 2 * per_thread_phase and r.shared_loads == 2 * tile * per_thread_phase
    assert_product(P, M, N)


def test_a_full_trace_buffer_keeps_each_workers_first_accesses_only(rng, workers, monkeypatch):
    """Each worker traces into a buffer of its own; one that fills keeps its first accesses and
    the trace says it was cut short (none of a neighbour's buffer is read as its own)."""
    from cudacheck.cpu import checked
    w, t = 8, 2
    fn = matmul.compile("tiled", t, "cpu", check=True)
    M, N = random_matrix(rng, w, w), random_matrix(rng, w, w)
    blocks = [(x, y) for y in range(w // t) for x in range(w // t)]
    fn((w // t,) * 2, (t, t), (M, N, np.zeros((w, w), np.float32), w), trace=blocks)
    whole = fn.last_launch.trace
    assert not fn.last_launch.trace_truncated
    capacity = 50
    defaults = checked.CheckSetup.__init__.__defaults__
    monkeypatch.setattr(checked.CheckSetup.__init__, "__defaults__", (*defaults[:-1], capacity))
    fn((w // t,) * 2, (t, t), (M, N, np.zeros((w, w), np.float32), w), trace=blocks)
    cut = fn.last_launch.trace
    assert fn.last_launch.trace_truncated
    assert len(cut) == workers * capacity and len(set(cut)) == len(cut) and set(cut) <= set(whole)


def test_trace_gives_the_phase_table(rng):
    """The textbook's phase table for Width 4, TILE 2: in phase ph, thread (tx, ty) of
    block (bx, by) loads M[row][ph*2 + tx] into Mds[ty][tx] and N[ph*2 + ty][col] into Nds[ty][tx]."""
    w, t = 4, 2
    fn = matmul.compile("tiled", t, "cpu", check=True)
    M, N = random_matrix(rng, w, w), random_matrix(rng, w, w)
    P = np.zeros((w, w), np.float32)
    fn((2, 2), (t, t), (M, N, P, w), trace=[(0, 0), (1, 0)])
    trace = fn.last_launch.trace
    assert not fn.last_launch.trace_truncated
    loads = [a for a in trace if a.array in ("M", "N")]
    assert len(loads) == 2 * 2 * 4 * 2   # 2 blocks, 2 phases, 4 threads, M and N
    for a in loads:
        (bx, by, _), (tx, ty, _) = a.block, a.thread
        ph = (a.interval - 1) // 2       # each phase spans two barrier intervals
        row, col = by * t + ty, bx * t + tx
        expect = row * w + ph * t + tx if a.array == "M" else (ph * t + ty) * w + col
        assert a.index == expect and a.op == "R"
    stores = [a for a in trace if a.array == "Mds" and a.op == "W"]
    assert {(a.thread[:2], a.index) for a in stores} == {((tx, ty), (ty, tx)) for tx in range(2) for ty in range(2)}
    # Chapter 2's worked example of the two loads: thread (1, 0) of block (0, 0), phase 1.
    example = {a.array: a.index for a in loads if a.block == (0, 0, 0) and a.thread == (1, 0, 0) and a.interval == 3}
    assert example == {"M": 3, "N": 9}
    # The order of the trace is the order of execution: thread (0,0,0) runs first.
    assert trace[0].thread == (0, 0, 0) and trace[0].interval == 1


def test_a_recorded_trace_is_the_callers_not_kept_on_the_cached_kernel():
    """traces.record hands its report over: the kernel compile() caches for later calls keeps
    no trace (a worker process that kept every trace it recorded grew by 300 MB, and forked
    each later launch the slower)."""
    report, _ = traces.record("tiled", 32, 16, blocks=[(0, 0)])
    assert len(report.trace) > 1000
    assert matmul.compile("tiled", 16, "cpu", check=True).last_launch is None


@pytest.mark.parametrize("kernel", list(matmul.KERNELS))
def test_every_traced_access_names_a_line_of_the_kernel_that_indexes_memory(kernel):
    """A trace's line is the kernel's own line of the access (or of the helper it is
    inlined from), never 0: the naive kernel's accesses once all read as line 0."""
    tile = 16
    shapes = matmul.spec(kernel).shapes
    k = {matmul.Shapes.TILE_INNER: tile, matmul.Shapes.ANY: 40}.get(shapes, 48)
    report, _ = traces.record(kernel, 48, tile, k=k, n=48, blocks=[(0, 0)])
    lines = matmul.source(kernel).splitlines()
    assert report.trace
    # an access is a subscript, or a call that accesses memory: a wmma load or store, an asynchronous copy
    calls = ("_matrix_sync(", "__pipeline_memcpy_async(")
    wrong = {a.line for a in report.trace if not (1 <= a.line <= len(lines) and (
        "[" in lines[a.line - 1] or any(c in lines[a.line - 1] for c in calls)))}
    assert not wrong, f"{kernel}: accesses traced at lines {sorted(wrong)}"
    if kernel in ("naive", "tiled"):
        assert all(a.array in lines[a.line - 1] for a in report.trace)


def test_trace_of_chosen_threads_only(rng):
    fn = matmul.compile("tiled", 4, "cpu", check=True)
    M, N = random_matrix(rng, 8, 8), random_matrix(rng, 8, 8)
    fn((2, 2), (4, 4), (M, N, np.zeros((8, 8), np.float32), 8), trace=[(1, 1)], trace_threads=[(3, 2)])
    assert {a.thread for a in fn.last_launch.trace} == {(3, 2, 0)}
    assert {a.block for a in fn.last_launch.trace} == {(1, 1, 0)}


def test_schedules_change_a_racy_result_but_not_a_correct_one(rng):
    code = r'''
    extern "C" __global__ void last_writer(int* out) {
        __shared__ int s;
        s = threadIdx.x;          // every thread writes: the last one wins
        __syncthreads();
        if (threadIdx.x == 0) out[0] = s;
    }'''
    k = cudacheck.RawKernel(code, "last_writer", backend="cpu")
    results = {}
    for schedule in ("forward", "reverse"):
        out = np.zeros(1, np.int32)
        k(1, 8, (out,), schedule=schedule)
        results[schedule] = int(out[0])
    assert results == {"forward": 7, "reverse": 0}
    checked = cudacheck.RawKernel(code, "last_writer", backend="cpu", check=True)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="write after write"):
        checked(1, 8, (np.zeros(1, np.int32),))


def test_uninitialized_read_by_the_only_thread():
    k = cudacheck.RawKernel(r'''
    extern "C" __global__ void uninit(float* out) {
        __shared__ float acc[4];
        acc[threadIdx.x] += 1.0f;   // never zeroed
        out[threadIdx.x] = acc[threadIdx.x];
    }''', "uninit", backend="cpu", check=True)
    with pytest.raises(cudacheck.UninitializedReadError,
                       match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) reads acc\[0\]"):
        k(1, 4, (np.zeros(4, np.float32),))


def test_dynamic_shared_memory_too_small_is_out_of_bounds(rng):
    fn = matmul.compile("tiled_dynamic", 8, "cpu", check=True)
    M, N = random_matrix(rng, 8, 8), random_matrix(rng, 8, 8)
    with pytest.raises(cudacheck.OutOfBoundsError,
                       match=r"writes tiles\[64\], past the end of tiles, a shared array of 64"):
        fn((1, 1), (8, 8), (M, N, np.zeros((8, 8), np.float32), 8, 8, 8), shared_mem=8 * 8 * 4)  # room for one tile


def test_checked_mode_catches_a_negative_index():
    k = cudacheck.RawKernel(r'''
    extern "C" __global__ void shift(const float* in, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = in[i - 1];    // forgets i == 0
    }''', "shift", backend="cpu", check=True)
    with pytest.raises(cudacheck.OutOfBoundsError,
                       match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) reads in\[-1\], before the start"):
        k(2, 32, (np.ones(64, np.float32), np.zeros(64, np.float32), 64))


def test_endless_kernel_in_checked_mode_times_out():
    k = cudacheck.RawKernel(r'''
    extern "C" __global__ void wait_forever(int* flag) { while (flag[0] == 0) { } }''', "wait_forever",
                          backend="cpu", check=True)
    with pytest.raises(cudacheck.KernelTimeoutError):
        k(1, 4, (np.zeros(1, np.int32),), time_limit=1.0)


def test_checked_mode_needs_the_cpu_runtime():
    with pytest.raises(ValueError, match="checked mode runs on the CPU runtime"):
        cudacheck.RawKernel(matmul.source("naive"), "matmul_naive", backend="gpu", check=True)


def test_traces_need_checked_mode():
    fn = matmul.compile("naive", 4, "cpu")
    with pytest.raises(ValueError, match="check=True"):
        fn(1, (4, 4), (np.zeros((4, 4), np.float32),) * 3 + (4,), trace=[(0, 0)])


def test_vector_access_through_a_cast_pointer_is_checked():
    k = cudacheck.RawKernel(r'''
    extern "C" __global__ void v4(const float* a, float* b, int n4) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n4) {
            float4 v = reinterpret_cast<const float4*>(&a[4 * i])[0];
            v.x *= 2.0f;
            reinterpret_cast<float4*>(&b[4 * i])[0] = v;
        }
    }''', "v4", backend="cpu", check=True)
    a = np.arange(16, dtype=np.float32)
    b = np.zeros(16, np.float32)
    k(1, 4, (a, b, 4))
    np.testing.assert_array_equal(b, a * np.tile([2, 1, 1, 1], 4))
    assert k.last_launch.global_counts["a"].loads == 4 and k.last_launch.global_counts["b"].stores == 4
    with pytest.raises(cudacheck.OutOfBoundsError, match=r"thread \(4, 0, 0\).*reads a\[4\].*16-byte elements"):
        k(1, 8, (a, b, 5))


@pytest.mark.parametrize("tile", (8, 16, 24, 32))
def test_coalesced_multiply_needs_only_a_warp_barrier_when_the_tile_divides_32(tile, rng):
    """best_practices.cu's claim: a row of aTile lies within one warp, so __syncwarp()
    suffices, when TILE_DIM divides 32. A row of 24 threads straddles two warps, and
    checked mode then finds the race a warp barrier cannot prevent."""
    M, N = random_matrix(rng, 2 * tile, tile), random_matrix(rng, tile, 2 * tile)
    if 32 % tile:
        with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
            matmul.run(M, N, "coalescedMultiply", tile, "cpu", check=True)
        assert e.value.array == "aTile"
    else:
        P, _ = matmul.run(M, N, "coalescedMultiply", tile, "cpu", check=True)
        assert_product(P, M, N)


RACE_IN_A_HELPER = r"""
__device__ void put(float* s, int i, float v) {
    s[i] = v;   // the store
}
__device__ __forceinline__ void fill(float* s, int i) {
    put(s, i % 16, float(i));
}
extern "C" __global__ void racy(float* out) {
    __shared__ float s[32];
    fill(s, threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % 16];
}
"""


def test_a_race_in_a_helper_names_the_calls_that_reach_it():
    """Threads t and t + 16 store into one element, inside put, which fill calls: the finding's
    line is put's store, error.calls the chain from the kernel's call of fill."""
    src = RACE_IN_A_HELPER
    line = {text: i + 1 for i, text in enumerate(src.splitlines())}
    at = lambda piece: next(n for text, n in line.items() if piece in text)   # noqa: E731
    f = cudacheck.RawModule(src, backend="cpu", check=True).get_function("racy")
    with pytest.raises(cudacheck.SharedMemoryRaceError) as e:
        f(1, 32, (np.zeros(32, np.float32),))
    assert e.value.line == at("s[i] = v;")
    assert e.value.calls == ((at("fill(s, threadIdx.x);"), "racy"), (at("put(s, i % 16"), "fill"),
                             (at("s[i] = v;"), "put"))
    assert f"in put, called from line {at('put(s, i % 16')} in fill, {at('fill(s, threadIdx.x);')} in racy" \
        in str(e.value)
