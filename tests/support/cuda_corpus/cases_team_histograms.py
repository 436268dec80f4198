"""Histograms (src/team_histograms.cu)."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 100, 1000, 5003)


def _bytes(rng, n, grid=4, block=128):
    data = rng.integers(0, 256, n).astype(np.uint8)
    return Launch((grid,), (block,), (data, np.zeros(64, np.uint32), n))


def _mod64(args, n):
    return {1: np.bincount(args[0].astype(np.int64) % 64, minlength=64)}


def _runs(rng, n):
    data = np.repeat(rng.integers(0, 256, n // 5 + 1), 5)[:n].astype(np.uint8)
    return Launch((2,), (64,), (data, np.zeros(64, np.uint32), n))


def _warps(rng, n):
    return Launch((3,), (128,), (rng.integers(-1000, 1000, n).astype(np.int32), np.zeros(64, np.uint32), n), 4 * 4 * 64)


def _tickets(rng, n):
    return Launch((-(-n // 64),), (64,), (np.zeros(1, np.uint32), np.zeros(8, np.uint32), 7, n))


def _weighted(rng, n):
    return Launch((-(-n // 128),), (128,), (rng.random(n).astype(np.float32), rng.random(n).astype(np.float32),
                                           np.zeros(16, np.float32), 16, n))


def _weighted_ref(args, n):
    b = np.clip((args[0] * np.float32(16)).astype(np.int64), 0, 15)
    return {2: np.bincount(b, weights=args[1].astype(np.float64), minlength=16)}


CASES = [
    Case("histo_global", "team_histograms", "histo_global", _bytes, _mod64, SHAPES,
         style="PMPP ch. 9: global atomics, interleaved partitioning",
         bugs=(Bug("bin_index_unmasked",
                   (("atomicAdd(&histo[data[i] % NUM_BINS], 1u);\n}\n\n"
                     "extern \"C\" __global__ void histo_privatized",
                     "atomicAdd(&histo[data[i]], 1u);\n}\n\n"
                     "extern \"C\" __global__ void histo_privatized"),),
                   "OutOfBoundsError", 1000, array="histo",
                   what="The bin is the byte itself: values above 63 land past the 64 bins."),)),
    Case("histo_privatized", "team_histograms", "histo_privatized", _bytes, _mod64, SHAPES,
         style="PMPP ch. 9: privatized shared-memory histogram with shared atomics",
         bugs=(Bug("not_zeroed",
                   (("    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) histo_s[b] = 0u;\n"
                     "    __syncthreads();\n"
                     "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
                     "        atomicAdd(&histo_s[data[i] % NUM_BINS], 1u);",
                     "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
                     "        atomicAdd(&histo_s[data[i] % NUM_BINS], 1u);"),),
                   "UninitializedReadError", 1000, block=(0, 0, 0), array="histo_s",
                   what="The shared bins are never cleared: __shared__ memory does not start at zero."),
               Bug("merge_before_all_counted",
                   (("        atomicAdd(&histo_s[data[i] % NUM_BINS], 1u);\n    __syncthreads();",
                     "        atomicAdd(&histo_s[data[i] % NUM_BINS], 1u);"),),
                   "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="histo_s",
                   what="No barrier before the merge: a thread reads a bin others are still adding to."))),
    Case("histo_per_warp", "team_histograms", "histo_per_warp", _warps,
         lambda a, n: {1: np.bincount(a[0].astype(np.int64) & 63, minlength=64)}, SHAPES,
         style="per-warp sub-histograms in dynamic shared memory",
         bugs=(Bug(
             "warp_index_by_lane", (("int warps = blockDim.x / 32, warp = threadIdx.x / 32;",
                                     "int warps = blockDim.x / 32, warp = threadIdx.x % 32;"),),
             "OutOfBoundsError", 1000, block=(0, 0, 0), thread=(4, 0, 0), array="warp_hist",
             what="The warp index is computed with % instead of /: lanes 4 and up index past the sub-histograms."),)),
    Case("histo_aggregated", "team_histograms", "histo_aggregated", _runs,
         lambda a, n: {1: np.bincount(a[0].astype(np.int64) // 4, minlength=64)}, SHAPES,
         style="PMPP 9.6: aggregation of runs before the atomic"),
    Case("ticket_wrap", "team_histograms", "ticket_wrap", _tickets,
         lambda a, n: {0: np.array([n % 8]), 1: np.bincount(np.arange(n) % 8, minlength=8)}, (1, 50, 300),
         style="atomicInc with wrap-around: tickets 0..7, each taken n/8 times"),
    Case("weighted_histogram", "team_histograms", "weighted_histogram", _weighted, _weighted_ref, SHAPES,
         rtol=1e-4, atol=1e-4, deterministic=False, style="float atomicAdd into bins"),
]
