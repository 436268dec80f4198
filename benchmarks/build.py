"""How long a kernel takes to build, on the CPU runtime (front end + g++ + link) beside NVRTC
(through CuPy) where CuPy sees a GPU, measured in one run:

  * first: the CPU runtime on an empty cache (its own objects and precompiled header built too,
    as on a fresh machine or Colab session);
  * cold: a source not built before (an edited kernel), the runtime's objects cached;
  * warm: the same source again in a new module (a re-run cell), served from the caches.

A source counts as new because a comment with a fresh number is appended to it. Each time
is the median of several builds; the ratios are CPU runtime / NVRTC and cold / warm.

    python benchmarks/build.py [--kernels tiled naive] [--repeats 5]
"""
import argparse
import itertools
import platform
import tempfile
import time

from timing import median_time

import cudacheck
from cudacheck import compiler_version
from tiling_course import matmul

_fresh = itertools.count()


def new_source(src):
    """`src` as no cache has seen it."""
    return f"{src}\n// build {time.time_ns()}-{next(_fresh)}\n"


def cpu_build(src, opts):
    cudacheck.RawModule(src, options=opts, backend="cpu").compile()


def nvrtc_build(src, opts, name):
    import cupy
    cupy.RawModule(code=src, options=opts).get_function(name)


def first_build(src, opts, repeats):
    """A build on an empty cache: the median of `repeats`, each in a new cache folder."""
    saved = cudacheck.config.cache_dir

    def build():
        with tempfile.TemporaryDirectory() as d:
            cudacheck.config.cache_dir = d
            cpu_build(new_source(src), opts)
    try:
        return median_time(build, repeats, warmup=0)
    finally:
        cudacheck.config.cache_dir = saved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", nargs="+", default=["tiled", "naive", "ladder5_warptiled"])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    gpu = cudacheck.gpu_available()
    print(f"build benchmark: {platform.machine()}, {cudacheck.cpu_cores()} cores, "
          f"{compiler_version(cudacheck.config.cxx)}, {time.strftime('%Y-%m-%d')}")
    if gpu:
        import cupy
        print(f"NVRTC: CuPy {cupy.__version__}, CUDA {cupy.cuda.runtime.runtimeGetVersion()}, "
              f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    else:
        print("NVRTC: skipped (CuPy sees no GPU here); the CPU runtime's times only")
    for name in a.kernels:
        spec = matmul.KERNELS[name]
        src, opts = matmul.source(name), spec.options(16)
        first = first_build(src, opts, max(1, a.repeats // 2))
        cold = median_time(lambda src=src, opts=opts: cpu_build(new_source(src), opts), a.repeats)
        warm = median_time(lambda src=src, opts=opts: cpu_build(src, opts), a.repeats)
        line = (f"{name:>18}  CPU runtime: first {first:6.2f} s, cold {cold:6.2f} s, warm {warm * 1e3:7.1f} ms "
                f"(cold / warm {cold / warm:6.0f})")
        if gpu:
            n_cold = median_time(lambda src=src, opts=opts, k=spec.function: nvrtc_build(new_source(src), opts, k),
                                 a.repeats)
            n_warm = median_time(lambda src=src, opts=opts, k=spec.function: nvrtc_build(src, opts, k), a.repeats)
            line += (f"; NVRTC: cold {n_cold:6.2f} s, warm {n_warm * 1e3:7.1f} ms; CPU runtime / NVRTC: "
                     f"cold {cold / n_cold:5.2f}, warm {warm / n_warm:5.2f}")
        print(line)


if __name__ == "__main__":
    main()
