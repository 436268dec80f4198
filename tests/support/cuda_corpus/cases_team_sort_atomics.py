"""Sorting networks, ranking and atomics with device variables (src/team_sort_atomics.cu)."""
import numpy as np

from .case import Bug, Case, Launch

N = (1, 9, 128, 300)


def _blocks_sorted(x, per):
    return np.concatenate([np.sort(x[s:s + per]) for s in range(0, len(x), per)])


def _count_keys(rng, n):
    return Launch((max(1, -(-n // 64)),), (64,), (rng.integers(0, 1000, n).astype(np.int32), n),
                  globals={"launches_seen": np.zeros(1, np.uint64), "key_totals": np.zeros(16, np.int32)})


def _count_keys_ref(args, n):
    k = args[0].astype(np.int64)
    return {"launches_seen": np.array([1]), "key_totals": np.bincount(k & 15, weights=k, minlength=16)}


def _sbox_case():
    held = {}

    def setup(rng, n):
        box = rng.permutation(256).astype(np.uint8)
        held["box"] = box
        return Launch((max(1, -(-n // 128)),), (128,), (rng.integers(0, 256, n).astype(np.uint8), np.zeros(n, np.uint8),
                                                        n),
                      globals={"sbox": box})
    return Case("substitute", "team_sort_atomics", "substitute", setup, lambda a, n: {1: held["box"][a[0]]}, N,
                style="a byte lookup table in __constant__ memory (S-box)")


def _filter_ref(args, n):
    x = args[0]
    keep = x[x % 3 == 0]
    return {2: np.array([len(keep)])}


CASES = [
    Case("bitonic_sort_block", "team_sort_atomics", "bitonic_sort_block",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.standard_normal(n).astype(np.float32), n), 64 * 4),
         lambda a, n: {0: _blocks_sorted(a[0], 64)}, N,
         style="bitonic sorting network in shared memory (CUDA samples sortingNetworks)",
         bugs=(Bug("barrier_only_for_partners",
                   (("                }\n            }\n            __syncthreads();\n        }",
                     "                }\n                __syncthreads();\n            }\n        }"),),
                   "BarrierDivergenceError", 64, block=(0, 0, 0),
                   what="The barrier moved inside `if (ixj > t)`: only half the threads reach it."),)),
    Case("odd_even_sort_block", "team_sort_atomics", "odd_even_sort_block",
         lambda rng, n: Launch((max(1, -(-n // 128)),), (128,), (rng.integers(-999, 999, n).astype(np.int32), n)),
         lambda a, n: {0: _blocks_sorted(a[0], 128)}, N, style="odd-even transposition sort",
         bugs=(Bug("compare_past_the_block",
                   (("        if (a + 1 < blockDim.x && s[a] > s[a + 1]) {", "        if (s[a] > s[a + 1]) {"),),
                   "UninitializedReadError", 128, block=(0, 0, 0), array="s", index=(128,),
                   what="Without the bound test the last pair of the odd phase compares with s[128], which the "
                        "256-element array has but no thread of a 128-thread block wrote."),)),
    Case("rank_sort", "team_sort_atomics", "rank_sort",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.integers(0, 20, n).astype(np.float32),
                                                              np.zeros(n, np.float32), n)),
         lambda a, n: {1: np.sort(a[0])}, N, style="rank (counting) sort with ties broken by index"),
    Case("radix_split", "team_sort_atomics", "radix_split",
         lambda rng, n: Launch((1,), (256,), (rng.integers(0, 1 << 16, n).astype(np.uint32), np.zeros(n, np.uint32),
                                              3, n)),
         lambda a, n: {1: np.concatenate([a[0][((a[0] >> 3) & 1) == 0], a[0][((a[0] >> 3) & 1) == 1]])},
         (1, 9, 200, 256),
         style="one radix-sort split step: scan of the ones and __syncthreads_count",
         bugs=(Bug("scan_read_write_overlap",
                   (("        int v = (t >= d) ? ones_before[t - d] : 0;\n        __syncthreads();",
                     "        int v = (t >= d) ? ones_before[t - d] : 0;"),),
                   "SharedMemoryRaceError", 200, block=(0, 0, 0), array="ones_before",
                   what="The scan reads a neighbour's partial sum while the neighbour overwrites it."),)),
    Case("max_by_cas", "team_sort_atomics", "max_by_cas",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.standard_normal(n).astype(np.float32),
                                                              np.full(1, -np.inf, np.float32), n)),
         lambda a, n: {1: np.array([a[0].max()])}, N,
         style="float atomicMax from an atomicCAS loop (CUDA Programming Guide)"),
    Case("count_keys", "team_sort_atomics", "count_keys", _count_keys, _count_keys_ref, N,
         style="__device__ counters and arrays, read back with get_global"),
    _sbox_case(),
    Case("shared_counter", "team_sort_atomics", "shared_counter",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.standard_normal(n).astype(np.float32),
                                                              np.zeros(max(1, -(-n // 64)), np.int32), 0.5, n)),
         lambda a, n: {1: np.array([(a[0][s:s + 64] > np.float32(0.5)).sum() for s in range(0, max(n, 1), 64)])}, N,
         style="__shared__ int count with atomicAdd_block and count++",
         bugs=(Bug("counter_not_zeroed", (("    if (threadIdx.x == 0) count = 0;\n", ""),),
                   "UninitializedReadError", 300, block=(0, 0, 0), array="count",
                   what="The shared counter is never zeroed."),)),
    Case("filter_warp_aggregated", "team_sort_atomics", "filter_warp_aggregated",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.integers(0, 100, n).astype(np.int32),
                                                              np.zeros(n, np.int32), np.zeros(1, np.int32), n)),
         _filter_ref, N, style="warp-aggregated atomics with __ballot_sync, __ffs and __shfl_sync"),
    Case("tile8_sums", "team_sort_atomics", "tile8_sums",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.integers(-50, 50, n).astype(np.int32),
                                                              np.zeros(4, np.int32), n)),
         lambda a, n: {1: np.bincount((np.arange(n) // 8) % 4, weights=a[0].astype(np.int64), minlength=4)}, N,
         style="cooperative groups thread_block_tile<8> shuffles"),
]
