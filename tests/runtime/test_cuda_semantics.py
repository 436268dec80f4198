"""Where CUDA defines what happens, the CPU runtime does the same: device memory and
`__device__` variables shared by all blocks and kept between launches, overlapping views
as one memory, warp operations with their masks, and no worker outliving its caller."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cudacheck

LAST_BLOCK = r'''
__device__ unsigned int blocks_done = 0;
__device__ float grand_total;
extern "C" __global__ void sum(const float* x, float* partial, float* out, int n) {
    __shared__ bool last;
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int o = 64; o > 0; o /= 2) { if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o]; __syncthreads(); }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) t += partial[b];
        out[0] = t;
        grand_total += t;
        blocks_done = 0;
    }
}'''


@pytest.mark.parametrize("check", [False, True])
def test_device_variables_are_shared_by_all_blocks_and_kept_between_launches(check, rng):
    cudacheck.config.workers = None
    mod = cudacheck.RawModule(LAST_BLOCK, backend="cpu", check=check)
    x = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros(1, np.float32)
    for launch in range(1, 3):
        mod.get_function("sum")(8, 128, (x, np.zeros(8, np.float32), out, 1000))
        assert out[0] == pytest.approx(x.astype(np.float64).sum(), abs=1e-3)   # the last block saw all 8
        total = np.zeros(1, np.float32)
        mod.get_global("grand_total").copy_to_host(total.ctypes.data, 4)
        assert total[0] == pytest.approx(launch * x.astype(np.float64).sum(), abs=1e-3)
    # Another module of the same source has its own variables.
    other = cudacheck.RawModule(LAST_BLOCK, backend="cpu", check=check)
    assert other.get_global("grand_total").array[0] == 0


def test_constant_memory_is_filled_through_get_global(rng):
    src = r'''
    __constant__ float coeffs[4];
    extern "C" __global__ void poly(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = ((coeffs[3] * x[i] + coeffs[2]) * x[i] + coeffs[1]) * x[i] + coeffs[0];
    }'''
    mod = cudacheck.RawModule(src, backend="cpu", check=True)
    c = rng.standard_normal(4).astype(np.float32)
    mod.get_global("coeffs").copy_from_host(c.ctypes.data, c.nbytes)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.zeros(100, np.float32)
    mod.get_function("poly")(4, 32, (x, y, 100))
    np.testing.assert_allclose(y, np.polyval(c[::-1].astype(np.float64), x), rtol=1e-5, atol=1e-5)
    with pytest.raises(KeyError, match="coeffs"):
        mod.get_global("coefs")


@pytest.mark.parametrize("check", [False, True])
def test_overlapping_views_are_one_memory(check):
    # b is a's memory shifted by one element: thread i's write to b[i] is a[i + 1].
    src = r'''extern "C" __global__ void k(const int* a, int* b, int n) {
        int i = threadIdx.x;
        if (i < n) b[i] = a[i] * 10;
        __syncthreads();
        if (i == 0) b[n - 1] = a[1];
    }'''
    x = np.arange(9, dtype=np.int32)
    k = cudacheck.RawKernel(src, "k", backend="cpu", check=check)
    if check:   # thread i writes x[i + 1] through b while thread i + 1 reads it through a: a race
        with pytest.raises(cudacheck.GlobalMemoryRaceError, match=r"race on (a\[\d\]|b\[\d\])"):
            k(1, 8, (x[:-1], x[1:], 8))
        return
    k(1, 8, (x[:-1], x[1:], 8))
    # The writes through b land in a's memory; the final read of a[1] sees b[0]'s write.
    assert x[0] == 0 and x[8] == x[1] and x[1] in (0, 10)


@pytest.mark.parametrize("check", [False, True])
def test_a_write_through_const_cast_reaches_the_caller(check):
    src = 'extern "C" __global__ void k(const float* a) { const_cast<float*>(a)[threadIdx.x] = 5.0f; }'
    a = np.zeros(4, np.float32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=check)(1, 4, (a,))
    assert (a == 5).all()


WARP = r'''
extern "C" __global__ void votes(const int* x, unsigned* ballots, int* anys, int* alls, float* sums, int* idx) {
    int t = threadIdx.x, lane = t % 32;
    int p = x[t] > 0;
    unsigned b = __ballot_sync(0xffffffffu, p);
    int any = __any_sync(0xffffffffu, p), all = __all_sync(0xffffffffu, p);
    float v = (float)x[t];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    int up = __shfl_up_sync(0xffffffffu, x[t], 1, 8);
    int down = __shfl_down_sync(0xffffffffu, x[t], 3);
    int from = __shfl_sync(0xffffffffu, x[t], 31 - lane);
    if (lane == 0) { ballots[t / 32] = b; anys[t / 32] = any; alls[t / 32] = all; sums[t / 32] = v; }
    idx[3 * t] = up; idx[3 * t + 1] = down; idx[3 * t + 2] = from;
}'''


@pytest.mark.parametrize("check", [False, True])
def test_warp_shuffles_and_votes_compute_what_a_gpu_does(check, rng):
    x = rng.integers(-5, 6, 64).astype(np.int32)
    out = (np.zeros(2, np.uint32), np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(2, np.float32),
           np.zeros(192, np.int32))
    cudacheck.RawKernel(WARP, "votes", backend="cpu", check=check)(1, 64, (x,) + out)
    ballots, anys, alls, sums, idx = out
    w = x.reshape(2, 32)
    assert ballots.tolist() == [int(sum(1 << lane for lane in range(32) if r[lane] > 0)) for r in w]
    assert anys.tolist() == [int((r > 0).any()) for r in w] and alls.tolist() == [int((r > 0).all()) for r in w]
    np.testing.assert_array_equal(sums, w.sum(1))
    lane = np.arange(64) % 32
    up = np.where(lane % 8 >= 1, x[np.arange(64) - 1], x)
    down = np.where(lane + 3 < 32, x[np.minimum(np.arange(64) + 3, 63)], x)
    frm = x[np.arange(64) - lane + 31 - lane]
    np.testing.assert_array_equal(idx.reshape(64, 3), np.stack([up, down, frm], 1))


def test_a_mask_naming_a_lane_that_does_not_arrive_is_reported():
    src = r'''extern "C" __global__ void k(float* x) {
        float v = x[threadIdx.x];
        if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffffu, v, 1);
        x[threadIdx.x] = v;
    }'''
    with pytest.raises(cudacheck.WarpDivergenceError, match=r"mask 0xffffffff names lane 16") as e:
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 32, (np.ones(32, np.float32),))
    assert e.value.block == (0, 0, 0)


def test_a_shuffle_from_a_lane_outside_the_mask_is_reported():
    src = r'''extern "C" __global__ void k(float* x) {
        float v = x[threadIdx.x];
        if (threadIdx.x < 16) v += __shfl_down_sync(0x0000ffffu, v, 1);
        x[threadIdx.x] = v;
    }'''
    with pytest.raises(cudacheck.WarpDivergenceError, match=r"reads lane 16, which is not in the mask"):
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 32, (np.ones(32, np.float32),))


def test_syncthreads_count_and_or(rng):
    src = r'''extern "C" __global__ void k(const int* x, int* out) {
        int p = x[threadIdx.x] > 0;
        int c = __syncthreads_count(p), a = __syncthreads_and(p), o = __syncthreads_or(p);
        if (threadIdx.x == 0) { out[0] = c; out[1] = a; out[2] = o; }
    }'''
    x = rng.integers(-3, 3, 96).astype(np.int32)
    out = np.zeros(3, np.int32)
    cudacheck.RawKernel(src, "k", backend="cpu", check=True)(1, 96, (x, out))
    assert out.tolist() == [int((x > 0).sum()), int((x > 0).all()), int((x > 0).any())]


def test_no_worker_outlives_a_killed_caller(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent('''
        import numpy as np, cudacheck
        cudacheck.config.time_limit = 120
        k = cudacheck.RawKernel('extern "C" __global__ void spin(int* f) { for (;;) { } }', "spin", backend="cpu")
        print("launching", flush=True)
        k(4, 32, (np.zeros(1, np.int32),))
    '''))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    caller = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env)
    assert caller.stdout.readline().strip() == b"launching"

    def workers():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm == "kc-worker" and fields[0] != "Z":
                found.append((int(pid), int(fields[1])))
        return found

    deadline = time.monotonic() + 30
    while not [p for p, parent in workers() if parent == caller.pid] and time.monotonic() < deadline:
        time.sleep(0.05)
    mine = [p for p, parent in workers() if parent == caller.pid]
    assert mine, "the launch started no workers"
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    time.sleep(1.0)
    alive = [p for p, _ in workers() if p in mine]
    assert not alive, f"workers {alive} outlived their caller"
