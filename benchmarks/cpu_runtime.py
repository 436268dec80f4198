"""How fast is the CPU runtime? Measured side by side in one run:

  * the tiled 16 x 16 kernel at Width 256, divided by a plain `g++ -O2` triple loop on
    the same inputs (the target, issue 46: at most 2 with a worker per core on 2 cores);
  * the same for the naive kernel;
  * the cost of launching a trivial kernel (one thread, nothing to do).

The loop and every kernel configuration are run in turn, once a round, after a warm-up
round that also compiles, so that on a machine shared with other work all of them meet the
same load. Each line gives the fastest and the median round, the ratios of both to the
loop's, and the CPU time a call took (the runtime's: its worker processes'), which other
work on the machine changes least. The CPU runtime is timed with one worker process (the
triple loop uses one core) and with one per core.

    python benchmarks/cpu_runtime.py [--width 256] [--repeats 9]
"""
import argparse
import ctypes
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import alternating, median_time

import cudacheck
from cudacheck import compiler_version
from tiling_course import matmul

TRIPLE_LOOP = r'''
extern "C" void multiply(const float* M, const float* N, float* P, int width) {
    for (int row = 0; row < width; row++)
        for (int col = 0; col < width; col++) {
            float tmp = 0;
            for (int k = 0; k < width; ++k)
                tmp += M[row * width + k] * N[k * width + col];
            P[row * width + col] = tmp;
        }
}
'''


def triple_loop():
    tmp = Path(tempfile.mkdtemp())
    (tmp / "loop.cpp").write_text(TRIPLE_LOOP)
    subprocess.run([cudacheck.config.cxx, "-O2", "-shared", "-fPIC", str(tmp / "loop.cpp"), "-o", str(tmp / "loop.so")],
                   check=True)
    lib = ctypes.CDLL(str(tmp / "loop.so"))
    ptr = ctypes.POINTER(ctypes.c_float)
    lib.multiply.argtypes = [ptr, ptr, ptr, ctypes.c_int]
    return lambda M, N, P: lib.multiply(M.ctypes.data_as(ptr), N.ctypes.data_as(ptr), P.ctypes.data_as(ptr), M.shape[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--tile", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=9)
    a = ap.parse_args()
    w, t = a.width, a.tile
    rng = np.random.default_rng()
    M = rng.uniform(-1, 1, (w, w)).astype(np.float32)
    N = rng.uniform(-1, 1, (w, w)).astype(np.float32)
    loop = triple_loop()
    cores = cudacheck.cpu_cores()
    print(f"CPU runtime benchmark: {platform.processor() or platform.machine()}, {cores} cores, "
          f"{compiler_version(cudacheck.config.cxx)}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; {a.repeats} rounds")
    configs = [(kernel, workers) for kernel in ("tiled", "naive") for workers in sorted({1, cores})]
    outputs = [np.zeros((w, w), np.float32) for _ in range(len(configs) + 1)]

    def launch(kernel, workers, P):
        cudacheck.config.workers = workers
        matmul.multiply(M, N, kernel=kernel, tile=t, backend="cpu", P=P)

    calls = [lambda: loop(M, N, outputs[0])] + [
        (lambda k=k, n=n, P=P: launch(k, n, P)) for (k, n), P in zip(configs, outputs[1:])]
    rounds = alternating(calls, a.repeats)
    cudacheck.config.workers = None
    for P in outputs[1:]:
        assert np.allclose(P, outputs[0], atol=1e-3), "kernel and triple loop disagree"

    def figures(times):
        walls, cpus = [wall for wall, _ in times], [cpu for _, cpu in times]
        return min(walls), statistics.median(walls), statistics.median(cpus)

    l_min, l_med, l_cpu = figures(rounds[0])
    print(f"g++ -O2 triple loop, Width {w}: fastest {l_min * 1e3:7.2f} ms, median {l_med * 1e3:7.2f} ms, "
          f"CPU {l_cpu * 1e3:7.2f} ms")
    for (kernel, workers), times in zip(configs, rounds[1:]):
        k_min, k_med, k_cpu = figures(times)
        label = f"{kernel:>5} {t}x{t} kernel, {workers} worker{'s' if workers > 1 else ' '}"
        print(f"{label}: fastest {k_min * 1e3:7.2f} ms, "
              f"median {k_med * 1e3:7.2f} ms, CPU {k_cpu * 1e3:7.2f} ms   ratio to the triple loop: "
              f"fastest {k_min / l_min:5.2f}, median {k_med / l_med:5.2f}, CPU {k_cpu / l_cpu:5.2f}")
    nop = cudacheck.RawKernel('extern "C" __global__ void nop() {}', "nop", backend="cpu")
    t_nop = median_time(lambda: nop(1, 1, ()), max(a.repeats, 51))
    print(f"launch of a trivial kernel (1 block, 1 thread): {t_nop * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
