"""How fast is the CPU runtime? Measured side by side in one run:

  * the tiled 16 x 16 kernel at Width 256, divided by a plain `g++ -O2` triple loop on
    the same inputs (the target, issue 46: at most 2 with a worker per core on 2 cores);
  * the same for the naive kernel;
  * the cost of launching a trivial kernel (one thread, nothing to do).

Each time is the median of several runs, after a warm-up that also compiles. The CPU
runtime is timed with one worker process (the triple loop uses one core) and with one
per core.

    python benchmarks/cpu_runtime.py [--width 256] [--repeats 7]
"""
import argparse
import ctypes
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import median_time

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
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    w, t = a.width, a.tile
    rng = np.random.default_rng()
    M = rng.uniform(-1, 1, (w, w)).astype(np.float32)
    N = rng.uniform(-1, 1, (w, w)).astype(np.float32)
    P = np.zeros((w, w), np.float32)
    loop = triple_loop()
    cores = cudacheck.cpu_cores()
    print(f"CPU runtime benchmark: {platform.processor() or platform.machine()}, {cores} cores, "
          f"{compiler_version(cudacheck.config.cxx)}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")
    t_loop = median_time(lambda: loop(M, N, P), a.repeats)
    ref = P.copy()
    print(f"g++ -O2 triple loop, Width {w}: {t_loop * 1e3:8.2f} ms")
    for kernel in ("tiled", "naive"):
        for workers in (1, cores):
            cudacheck.config.workers = workers
            def fn(kernel=kernel):
                return matmul.multiply(M, N, kernel=kernel, tile=t, backend="cpu", P=P)
            t_k = median_time(fn, a.repeats)
            assert np.allclose(P, ref, atol=1e-3), "kernel and triple loop disagree"
            print(f"{kernel:>5} {t}x{t} kernel, {workers} worker{'s' if workers > 1 else ' '}: "
                  f"{t_k * 1e3:8.2f} ms   ratio to the triple loop: {t_k / t_loop:5.2f}")
    cudacheck.config.workers = None
    nop = cudacheck.RawKernel('extern "C" __global__ void nop() {}', "nop", backend="cpu")
    t_nop = median_time(lambda: nop(1, 1, ()), max(a.repeats, 51))
    print(f"launch of a trivial kernel (1 block, 1 thread): {t_nop * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
