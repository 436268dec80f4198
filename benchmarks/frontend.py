"""What the C++ front end costs: for each of the book's kernels, the time clang takes to
read the source (runtime/cudacheck/frontend/), beside a whole cold compile on the CPU runtime
(front end, g++, link), and what a cached compile spends on the front end (reading its
cached result). Target: at most 0.5 s added to a cold compile, nothing to a cached one.

    python benchmarks/frontend.py [--repeats 5]
"""
import argparse
import os
import platform
import tempfile
import time
from importlib.metadata import version

from timing import median_time

import cudacheck
from cudacheck import compiler_version
from tiling_course import matmul


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    print(f"front-end benchmark: {platform.machine()}, {cudacheck.cpu_cores()} cores, "
          f"{compiler_version(cudacheck.config.cxx)}, libclang {version('libclang')}, {time.strftime('%Y-%m-%d')}")
    print(f"{'kernel':>18} {'front end':>10} {'cold compile':>13} {'share':>6} {'cached: front end':>18} "
          f"{'cached: module':>15}")
    for name in ["naive", "tiled", "tiled_bounds", "tiled_dynamic", "sharedABMultiply", "ladder5_warptiled"]:
        spec = matmul.KERNELS[name]
        src, opts = matmul.source(name), spec.options(16)
        parse = median_time(lambda src=src, opts=opts: cudacheck.analyze(src, opts, cached=False), a.repeats)

        def cold(src=src, opts=opts):
            with tempfile.TemporaryDirectory() as d:
                cudacheck.config.cache_dir = d
                cudacheck.RawModule(src, options=opts, backend="cpu").compile()
        saved = cudacheck.config.cache_dir
        try:
            t_cold = median_time(cold, max(1, a.repeats // 2), warmup=0)
        finally:
            cudacheck.config.cache_dir = saved
        cudacheck.RawModule(src, options=opts, backend="cpu").compile()            # fill the cache
        cached_fe = median_time(lambda src=src, opts=opts: cudacheck.analyze(src, opts), a.repeats)
        cached = median_time(lambda src=src, opts=opts: cudacheck.RawModule(src, options=opts, backend="cpu").compile(),
                             a.repeats)
        print(f"{name:>18} {parse:9.3f}s {t_cold:12.3f}s {parse / t_cold:6.0%} {cached_fe * 1000:16.2f}ms "
              f"{cached * 1000:13.1f}ms")


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    main()
