"""The CPU runtime runs CUDA C as CUDA does: the language features a kernel of the
book (or a student's) may use, each checked by what it computes."""
import multiprocessing
import textwrap

import numpy as np
import pytest

import cudacheck


def cpu_kernel(code, name, **kw):
    return cudacheck.RawKernel(textwrap.dedent(code), name, backend="cpu", **kw)


def test_thread_and_block_indices_in_3d(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void ids(int* out) {
            int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
            int bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
            int n = blockDim.x * blockDim.y * blockDim.z;
            out[4 * (bid * n + tid) + 0] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z;
            out[4 * (bid * n + tid) + 1] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z;
            out[4 * (bid * n + tid) + 2] = blockDim.x * 10000 + blockDim.y * 100 + blockDim.z;
            out[4 * (bid * n + tid) + 3] = gridDim.x * 10000 + gridDim.y * 100 + gridDim.z + warpSize * 0;
        }''', "ids")
    grid, block = (3, 2, 2), (4, 3, 2)
    out = np.full(3 * 2 * 2 * 4 * 3 * 2 * 4, -1, dtype=np.int32)
    k(grid, block, (out,))
    out = out.reshape(2, 2, 3, 2, 3, 4, 4)  # bz, by, bx, tz, ty, tx, field
    bz, by, bx, tz, ty, tx = np.indices(out.shape[:6])
    assert (out[..., 0] == tx + 10 * ty + 100 * tz).all()
    assert (out[..., 1] == bx + 10 * by + 100 * bz).all()
    assert (out[..., 2] == 40302).all() and (out[..., 3] == 30202).all()


def test_grid_and_block_accept_ints_and_short_tuples(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i] + y[i];
        }''', "axpy")
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expect = 2.5 * x.astype(np.float64) + y
    k(8, 128, (2.5, x, y, n))            # Python scalars converted to float and int
    np.testing.assert_allclose(y, expect, rtol=1e-6, atol=1e-6)
    k((8,), (128, 1), (np.float64(-2.5), x, y, np.int64(n)))  # NumPy scalars converted too
    np.testing.assert_allclose(y, expect - 2.5 * x, rtol=1e-5, atol=1e-6)


def test_scalar_types_double_unsigned_size_t(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void scale(double* v, double s, unsigned int n, size_t offset) {
            size_t i = offset + blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) v[i] *= s;
        }''', "scale")
    v = rng.standard_normal(300)
    expect = v.copy()
    expect[5:] *= 1.5
    k(3, 128, (v, 1.5, 300, 5))
    np.testing.assert_allclose(v, expect)


def test_device_functions_forceinline_restrict_launch_bounds_pragma_unroll(rng):
    k = cpu_kernel(r'''
        #define SQUARE(x) ((x) * (x))
        __device__ __forceinline__ float sq(float x) { return SQUARE(x); }
        __device__ float norm2(const float* __restrict__ v, int n) {
            float s = 0.0f;
            #pragma unroll 4
            for (int i = 0; i < n; ++i) s += sq(v[i]);
            return s;
        }
        extern "C" __global__ void __launch_bounds__(64) rows(const float* __restrict__ A, float* __restrict__ out,
                                                              int n) {
            int r = blockIdx.x * blockDim.x + threadIdx.x;
            out[r] = sqrtf(norm2(A + r * n, n));
        }''', "rows")
    A = rng.standard_normal((128, 9)).astype(np.float32)
    out = np.empty(128, np.float32)
    k(2, 64, (A, out, 9))
    np.testing.assert_allclose(out, np.linalg.norm(A.astype(np.float64), axis=1), rtol=1e-5)


def test_shared_arrays_of_one_two_and_three_dimensions(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void shuffle(const float* in, float* out) {
            __shared__ float a[64];
            __shared__ float b[4][16];
            __shared__ float c[2][4][8];
            int t = threadIdx.x;
            a[t] = in[blockIdx.x * 64 + t];
            __syncthreads();
            b[t / 16][t % 16] = a[63 - t];
            __syncthreads();
            c[t / 32][(t / 8) % 4][t % 8] = b[3 - t / 16][t % 16] * 2.0f;
            __syncthreads();
            out[blockIdx.x * 64 + t] = c[1 - t / 32][(t / 8) % 4][t % 8];
        }''', "shuffle")
    x = rng.standard_normal(5 * 64).astype(np.float32)
    out = np.empty_like(x)
    k(5, 64, (x, out))
    # a reversed, b reversed again by rows of 16 (undoing it per row), c swaps halves.
    xb = x.reshape(5, 64)
    a = xb[:, ::-1]
    b = a.reshape(5, 4, 16)[:, ::-1].reshape(5, 64) * 2
    expect = np.concatenate([b[:, 32:], b[:, :32]], axis=1)
    np.testing.assert_array_equal(out.reshape(5, 64), expect)


def test_extern_shared_sized_by_the_launch(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void reverse(const int* in, int* out) {
            extern __shared__ __align__(16) int buf[];
            int t = threadIdx.x, n = blockDim.x;
            buf[t] = in[blockIdx.x * n + t];
            __syncthreads();
            out[blockIdx.x * n + t] = buf[n - 1 - t];
        }''', "reverse")
    for n in (1, 7, 96, 1024):
        x = rng.integers(-1000, 1000, 3 * n, dtype=np.int32)
        out = np.empty_like(x)
        k(3, n, (x, out), shared_mem=4 * n)
        np.testing.assert_array_equal(out.reshape(3, n), x.reshape(3, n)[:, ::-1])


def test_templates_through_name_expressions(rng):
    code = r'''
        template <typename T, int TILE>
        __global__ void block_sum(const T* in, T* out) {
            __shared__ T s[TILE];
            s[threadIdx.x] = in[blockIdx.x * TILE + threadIdx.x];
            __syncthreads();
            for (int stride = TILE / 2; stride > 0; stride /= 2) {
                if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
                __syncthreads();
            }
            if (threadIdx.x == 0) out[blockIdx.x] = s[0];
        }'''
    mod = cudacheck.RawModule(code=textwrap.dedent(code),
                              name_expressions=("block_sum<float, 32>", "block_sum<double, 64>"), backend="cpu")
    x = rng.standard_normal(32 * 5).astype(np.float32)
    out = np.empty(5, np.float32)
    mod.get_function("block_sum<float, 32>")(5, 32, (x, out))
    np.testing.assert_allclose(out, x.reshape(5, 32).astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    y = rng.standard_normal(64 * 3)
    out64 = np.empty(3)
    mod.get_function("block_sum<double, 64>")(3, 64, (y, out64))
    np.testing.assert_allclose(out64, y.reshape(3, 64).sum(1))
    with pytest.raises(KeyError, match="name_expressions"):
        mod.get_function("block_sum<int, 8>")


def test_define_options_pick_the_tile():
    code = 'extern "C" __global__ void tile(int* out) { out[0] = TILE_WIDTH * SCALE; }'
    for t in (2, 8, 32):
        out = np.zeros(1, np.int32)
        cudacheck.RawKernel(code, "tile", options=(f"-DTILE_WIDTH={t}", "--define-macro=SCALE=3", "-arch=sm_90",
                                                 "--use_fast_math"), backend="cpu")(1, 1, (out,))
        assert out[0] == 3 * t


def test_vector_types_and_make_functions(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void vec(const float4* in, float2* out, int2* idx, double2* d) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            float4 v = in[i];
            out[i] = make_float2(v.x + v.y, v.z * v.w);
            idx[i] = make_int2(i, -i);
            d[i] = make_double2(v.x, 0.5);
            uint3 u = make_uint3(1, 2, 3); dim3 g(2); int4 q = make_int4(1, 2, 3, 4);
            if (i == 0) idx[0].y = u.x + u.y + u.z + g.x + g.y + g.z + q.w + (int)sizeof(float4) + alignof(float4);
        }''', "vec")
    x = rng.standard_normal(4 * 64).astype(np.float32)
    out = np.empty(2 * 64, np.float32)
    idx = np.empty(2 * 64, np.int32)
    d = np.empty(2 * 64)
    k(2, 32, (x, out, idx, d))
    v = x.reshape(64, 4).astype(np.float64)
    np.testing.assert_allclose(out.reshape(64, 2), np.stack([v[:, 0] + v[:, 1], v[:, 2] * v[:, 3]], 1), rtol=1e-5)
    assert idx[0] == 0 and idx[1] == 6 + 4 + 4 + 16 + 16
    np.testing.assert_array_equal(idx.reshape(64, 2)[1:], np.stack([np.arange(1, 64), -np.arange(1, 64)], 1))
    np.testing.assert_array_equal(d.reshape(64, 2)[:, 1], 0.5)


def test_math_min_max_and_atomics(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void stats(const float* x, int n, float* sum, int* count, unsigned* hi, float* mathv) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            atomicAdd(sum, x[i]);
            if (x[i] > 0.0f) atomicAdd(count, 1);
            atomicMax(hi, (unsigned)(min(max(x[i], -4.0f), 4.0f) * 1000.0f + 5000.0f));
            mathv[i] = fmaxf(fabsf(x[i]), 0.1f) + expf(-fabsf(x[i])) + sinf(x[i]) + rsqrtf(4.0f)
                       + __fdividef(1.0f, 2.0f) + fminf(min(i, 3), 2u) + powf(2.0f, 3.0f);
        }''', "stats")
    n = 1500
    x = rng.standard_normal(n).astype(np.float32)
    s, c, hi = np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(1, np.uint32)
    mathv = np.empty(n, np.float32)
    k(6, 256, (x, n, s, c, hi, mathv))  # blocks spread over worker processes share the atomics
    assert c[0] == (x > 0).sum()
    assert abs(s[0] - x.astype(np.float64).sum()) < 1e-3
    top = np.clip(x, -4, 4).max() * 1000 + 5000
    assert hi[0] == int(top) or abs(int(hi[0]) - top) < 1
    xa = np.abs(x.astype(np.float64))
    expect = np.maximum(xa, 0.1) + np.exp(-xa) + np.sin(x) + 0.5 + 0.5 + np.minimum(np.minimum(np.arange(n), 3), 2) + 8
    np.testing.assert_allclose(mathv, expect, rtol=1e-5)


def test_syncwarp_orders_the_threads_of_a_warp(rng):
    # Each warp reverses its 32 values through shared memory, ordered only by __syncwarp.
    k = cpu_kernel(r'''
        extern "C" __global__ void warp_reverse(const float* in, float* out) {
            __shared__ float s[128];
            int t = threadIdx.x, lane = t % 32, base = t - lane;
            s[t] = in[t];
            __syncwarp();
            out[t] = s[base + 31 - lane];
        }''', "warp_reverse")
    x = rng.standard_normal(128).astype(np.float32)
    out = np.empty_like(x)
    k(1, 128, (x, out))
    np.testing.assert_array_equal(out.reshape(4, 32), x.reshape(4, 32)[:, ::-1])


def test_missing_syncwarp_shows_that_threads_do_not_run_in_lock_step(rng):
    # Without the barrier, thread 0 reads before thread 31 has written: what a GPU
    # since Volta may do too. The runtime runs each thread to its next barrier.
    k = cpu_kernel(r'''
        extern "C" __global__ void racy(const float* in, float* out) {
            __shared__ float s[32];
            s[threadIdx.x] = in[threadIdx.x];
            out[threadIdx.x] = s[31 - threadIdx.x];
        }''', "racy")
    x = rng.uniform(1, 2, 32).astype(np.float32)
    out = np.empty_like(x)
    k(1, 32, (x, out))
    assert not np.array_equal(out, x[::-1])
    np.testing.assert_array_equal(out[16:], x[::-1][16:])  # the second half reads values already written


def test_assert_failure_names_thread_block_and_line():
    k = cpu_kernel(r'''
        // assert() is built in (NVRTC has no <cassert>)
        extern "C" __global__ void check(const int* v) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            assert(v[i] >= 0);
        }''', "check")
    v = np.zeros(64, np.int32)
    k(2, 32, (v,))
    v[45] = -1
    with pytest.raises(cudacheck.KernelAssertionError,
                       match=r"assert\(v\[i\] >= 0\).*line 5.*block \(1, 0, 0\), thread \(13, 0, 0\)"):
        k(2, 32, (v,))


def test_printf_reaches_python_stdout(capsys):
    k = cpu_kernel(r'''
        // printf is built in (NVRTC has no <cstdio>)
        extern "C" __global__ void hello(int n) { if (threadIdx.x == 0) printf("block %d of %d\n", blockIdx.x, n); }''',
                   "hello")
    k(3, 32, (3,))
    lines = sorted(capsys.readouterr().out.splitlines())
    assert lines == ["block 0 of 3", "block 1 of 3", "block 2 of 3"]


def test_an_array_passed_twice_is_one_array(rng):
    k = cpu_kernel(r'''
        extern "C" __global__ void add_into(const float* a, float* b, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) b[i] += a[i];
        }''', "add_into")
    x = rng.standard_normal(100).astype(np.float32)
    expect = 2 * x
    k(1, 128, (x, x, 100))
    np.testing.assert_allclose(x, expect)


def test_runs_are_reproducible(rng):
    # A racy kernel still gives the same answer every run: the schedule is fixed.
    k = cpu_kernel(r'''
        extern "C" __global__ void racy_sum(const float* x, float* out) {
            __shared__ float acc;
            if (threadIdx.x == 0) acc = 0.0f;
            __syncthreads();
            float mine = acc + x[threadIdx.x];
            acc = mine;
            __syncthreads();
            if (threadIdx.x == 0) out[blockIdx.x] = acc;
        }''', "racy_sum")
    x = rng.standard_normal(256).astype(np.float32)
    results = []
    for _ in range(3):
        out = np.empty(4, np.float32)
        k(4, 64, (x, out))
        results.append(out)
    assert all(np.array_equal(results[0], r) for r in results)


def test_compiled_libraries_are_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(cudacheck.config, "cache_dir", tmp_path)
    code = 'extern "C" __global__ void one(int* o) { o[0] = 1; }'
    cudacheck.RawKernel(code, "one", backend="cpu").compile()
    cudacheck.RawKernel(code, "one", backend="cpu").compile()
    assert len(list(tmp_path.glob("*.so"))) == 1
    cudacheck.RawKernel(code, "one", options=("-DX=1",), backend="cpu").compile()
    assert len(list(tmp_path.glob("*.so"))) == 2


def test_a_library_is_keyed_by_the_runtimes_files_not_their_folder(monkeypatch):
    """A wheel installed elsewhere (Colab's site-packages) shares a checkout's libraries: the
    unit and the link name the runtime's folder, which the key leaves out; its contents are
    in the key, and so is every byte of the unit and every flag."""
    from cudacheck.cpu import compiler
    unit = lambda src: f'#include "{src / "kc_stubs.h"}"\nint kc_x = 1;\n'  # noqa: E731
    key = compiler.library_key(unit(compiler.SRC_DIR), ["-O2"], cudacheck.config.cxx)
    elsewhere = compiler.SRC_DIR.parents[3] / "elsewhere" / "site-packages" / "cudacheck" / "cpu" / "src"
    link = tuple(f.replace(str(compiler.SRC_DIR), str(elsewhere)) for f in compiler.LINK_FLAGS)
    with monkeypatch.context() as m:   # the same files installed in another folder
        m.setattr(compiler, "SRC_DIR", elsewhere)
        m.setattr(compiler, "LINK_FLAGS", link)
        assert compiler.library_key(unit(elsewhere), ["-O2"], cudacheck.config.cxx) == key
    unit = unit(compiler.SRC_DIR)
    assert compiler.library_key(unit.replace("= 1", "= 2"), ["-O2"], cudacheck.config.cxx) != key
    assert compiler.library_key(unit, ["-O2", "-DX"], cudacheck.config.cxx) != key


def _compile_in_child(cache_dir, code, queue):
    cudacheck.config.cache_dir = cache_dir
    out = np.zeros(1, np.int32)
    cudacheck.RawKernel(code, "seven", backend="cpu")(1, 1, (out,))
    queue.put(int(out[0]))


def test_two_processes_compiling_the_same_kernel_both_succeed(tmp_path):
    code = 'extern "C" __global__ void seven(int* o) { o[0] = 7; } // %s' % tmp_path.name
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_compile_in_child, args=(tmp_path, code, queue)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 4
    assert sorted(queue.get() for _ in procs) == [7] * 4
    assert len(list(tmp_path.glob("*.so"))) == 1


def test_auto_backend_and_gpu_available_agree():
    k = cudacheck.RawKernel('extern "C" __global__ void nop() {}', "nop")
    assert k.backend == ("gpu" if cudacheck.gpu_available() else "cpu")


@pytest.mark.skipif(cudacheck.gpu_available(), reason="checks the message shown when there is no GPU")
def test_gpu_backend_without_a_gpu_says_so():
    with pytest.raises(cudacheck.KernelError, match="backend='cpu'"):
        cudacheck.RawKernel('extern "C" __global__ void nop() {}', "nop", backend="gpu")


@pytest.mark.gpu
def test_same_source_same_result_on_gpu_and_cpu(rng):
    import cupy
    code = r'''
        extern "C" __global__ void poly(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = 3.0f * x[i] * x[i] - 2.0f * x[i] + 1.0f;
        }'''
    x = rng.standard_normal(1000).astype(np.float32)
    y_cpu = np.empty_like(x)
    cudacheck.RawKernel(code, "poly", backend="cpu")(4, 256, (x, y_cpu, 1000))
    y_gpu = cupy.empty(1000, cupy.float32)
    cudacheck.RawKernel(code, "poly", backend="gpu")(4, 256, (cupy.asarray(x), y_gpu, 1000))
    np.testing.assert_allclose(y_gpu.get(), y_cpu, rtol=1e-6, atol=1e-6)


def test_a_device_function_without_a_body_is_a_compile_error_naming_it():
    src = '''__device__ int bar(short x);
extern "C" __global__ void k(int* o) { o[threadIdx.x] = bar(threadIdx.x); }'''
    for check in (False, True):
        with pytest.raises(cudacheck.CompileError,
                           match=r"`bar` is declared but never defined.*Unresolved extern function"):
            cudacheck.RawKernel(src, "k", backend="cpu", check=check)((1,), (4,), (np.zeros(4, np.int32),))
