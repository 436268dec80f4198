"""Is a launch through cudacheck as cheap as one through CuPy? Measured side by side in one
run, on a GPU, with the same source and arguments, for:

  * `scale`, 1M floats (a launch the host's cost dominates);
  * the book's tiled kernel (kernels/tiled.cu, 16 x 16 tiles) at Width 256 and 1024.

For each: the host's time to submit one launch (`launches` back to back, no waiting, per
launch: what a loop of launches costs the host) and the wall time per launch (the same
launches and one synchronisation at the end). cudacheck's figures are divided by CuPy's;
the target for the host's time is at most 1.5. Each figure is the median of `repeats` runs.

    python benchmarks/gpu_launch.py [--launches 200] [--repeats 7]
"""
import argparse
import statistics
import time

import numpy as np

import cudacheck
from tiling_course import sources

SCALE = r'''
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
'''


def per_launch(launch, launches, repeats, wait):
    """Median seconds per launch of `launches` calls of launch(), then wait() (timed or not)."""
    import cupy
    out = []
    for _ in range(repeats + 1):
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(launches):
            launch()
        host = time.perf_counter() - start
        wait()
        out.append((host, time.perf_counter() - start))
    out = out[1:]   # the first run warms up
    return statistics.median(h for h, _ in out) / launches, statistics.median(w for _, w in out) / launches


def cases():
    import cupy
    x = cupy.random.random(1 << 20, dtype=cupy.float32)
    yield "scale, 1M floats", SCALE, "scale", ((1 << 20) // 256,), (256,), (x, np.float32(1.0), np.int32(1 << 20))
    for width in (256, 1024):
        M, N = (cupy.random.random((width, width), dtype=cupy.float32) for _ in range(2))
        P = cupy.zeros((width, width), cupy.float32)
        yield (f"tiled 16x16, Width {width}", sources.read("tiled.cu"), "matmul_tiled", (width // 16, width // 16),
               (16, 16), (M, N, P, np.int32(width)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    if not cudacheck.gpu_available():
        raise SystemExit("this benchmark needs CuPy and a CUDA GPU")
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"{props['name'].decode()}, CuPy {cupy.__version__}, {args.launches} launches, median of {args.repeats}")
    print(f"{'kernel':28s} {'host µs/launch':>24s} {'wall µs/launch':>24s}")
    print(f"{'':28s} {'CuPy':>7s} {'cudacheck':>9s} {'ratio':>6s} {'CuPy':>7s} {'cudacheck':>9s} {'ratio':>6s}")
    sync = cupy.cuda.Device().synchronize
    for label, code, name, grid, block, kargs in cases():
        theirs = cupy.RawKernel(code, name)
        ours = cudacheck.RawKernel(code, name, backend="gpu")
        ours(grid, block, kargs)   # compiled, checked once: later launches take the cached checks
        figures = {}
        for who, k in (("cupy", theirs), ("cudacheck", ours)):
            launch = (lambda k, g, b, a: lambda: k(g, b, a))(k, grid, block, kargs)
            figures[who] = per_launch(launch, args.launches, args.repeats, sync)
        (ch, cw), (oh, ow) = figures["cupy"], figures["cudacheck"]
        print(f"{label:28s} {ch * 1e6:7.1f} {oh * 1e6:9.1f} {oh / ch:6.2f} "
              f"{cw * 1e6:7.1f} {ow * 1e6:9.1f} {ow / cw:6.2f}")


if __name__ == "__main__":
    main()
