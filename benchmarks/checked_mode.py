"""How fast is checked mode? The tiled 16 x 16 kernel with every access checked, at
Width 64 (target: at most 1 s; Numba's CUDA simulator takes about 7.5 s for the same
product unchecked) and Width 256 (target: at most 15 s), each beside the same kernel
checked without the global-memory race checks (which may at most double the checked time)
and unchecked on the CPU runtime, all in one run. Compilation is done first and not timed.

    python benchmarks/checked_mode.py [--widths 64 256 1024] [--repeats 3]
"""
import argparse
import platform
import time

import numpy as np
from timing import median_time

import cudacheck
from cudacheck import compiler_version
from tiling_course import matmul


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--widths", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--tile", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    cudacheck.config.time_limit = 120
    print(f"checked-mode benchmark: {platform.machine()}, {cudacheck.cpu_cores()} cores, "
          f"{compiler_version(cudacheck.config.cxx)}, {time.strftime('%Y-%m-%d')}")
    rng = np.random.default_rng()
    checked = matmul.compile("tiled", a.tile, "cpu", check=True)
    plain = matmul.compile("tiled", a.tile, "cpu")
    for w in a.widths:
        M = rng.uniform(-1, 1, (w, w)).astype(np.float32)
        N = rng.uniform(-1, 1, (w, w)).astype(np.float32)
        P = np.zeros((w, w), np.float32)
        args, grid, block = (M, N, P, w), (w // a.tile,) * 2, (a.tile, a.tile)
        times = {}
        for races in (True, False):
            cudacheck.config.global_races = races
            times[races] = median_time(lambda grid=grid, block=block, args=args: checked(grid, block, args),
                                       a.repeats)
            assert np.allclose(P, M.astype(np.float64) @ N, atol=1e-3)
        cudacheck.config.global_races = True
        t_plain = median_time(lambda grid=grid, block=block, args=args: plain(grid, block, args), a.repeats)
        r = checked.last_launch
        accesses = r.global_loads + r.global_stores + r.shared_loads + r.shared_stores
        print(f"Width {w:4}: checked {times[True]:8.3f} s, without the global race checks {times[False]:8.3f} s "
              f"(ratio {times[True] / times[False]:4.2f}), unchecked {t_plain:7.3f} s (checked / unchecked "
              f"{times[True] / t_plain:6.1f}); {accesses:,} accesses checked")


if __name__ == "__main__":
    main()
