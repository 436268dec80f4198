"""Sorting networks and ranking (src/sort.cu): bitonic sort in shared memory (one element
per thread, and the CUDA samples' key-value bitonicSortShared in both directions), odd-even
transposition sort, rank sort by counting, and a radix split by __syncthreads_count + scan
and by ballots."""
import numpy as np

from .case import Bug, Case, Launch

SRC = "sort"


def _nb(n, per_block):
    return max(1, -(-n // per_block))


def _segments(x, per_block, fn):
    return np.concatenate([fn(x[k:k + per_block]) for k in range(0, len(x), per_block)])


def _bitonic_setup(rng, n):
    return Launch((_nb(n, 128),), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32), n),
                  128 * 4)


def _kv_setup(direction):
    def setup(rng, shape):
        batch, length = shape
        n = batch * length
        keys = rng.choice(1 << 30, size=n, replace=False).astype(np.uint32)
        vals = np.arange(n, dtype=np.uint32)
        return Launch((n // 256,), (128,), (np.zeros(n, np.uint32), np.zeros(n, np.uint32), keys, vals, length,
                                            direction))
    return setup


def _kv_reference(args, shape):
    batch, length = shape
    keys, vals, direction = args[2], args[3], args[5]
    order = np.argsort(keys.reshape(batch, length), axis=1, kind="stable")
    if not direction:
        order = order[:, ::-1]
    order = order + (np.arange(batch) * length)[:, None]
    return {0: keys[order.reshape(-1)], 1: vals[order.reshape(-1)]}


def _oet_setup(rng, n):
    return Launch((_nb(n, 128),), (64,), (rng.integers(-500, 500, n).astype(np.int32), np.zeros(n, np.int32), n))


def _rank_setup(rng, n):
    return Launch((_nb(n, 128),), (128,), (rng.integers(-50, 50, n).astype(np.int32), np.zeros(n, np.int32), n))


def _split_setup(block):
    def setup(rng, n):
        bit = int(rng.integers(0, 16))
        return Launch((_nb(n, block),), (block,), (rng.integers(0, 1 << 16, n).astype(np.uint32),
                                                   np.zeros(n, np.uint32), n, bit))
    return setup


def _split_reference(block):
    def reference(args, n):
        keys, bit = args[0], args[3]

        def split(seg):
            b = (seg >> bit) & 1
            return np.concatenate([seg[b == 0], seg[b == 1]])
        return {1: _segments(keys, block, split)}
    return reference


SHAPES = (1, 37, 128, 1000, 4099)

CASES = [
    Case("sort_bitonic_shared", SRC, "bitonic_shared", _bitonic_setup, lambda a, n: {1: _segments(a[0], 128, np.sort)},
         SHAPES, style="bitonic sort in shared memory, one element per thread, tid ^ j partners, `auto a = s[tid];`",
         bugs=(Bug("barrier_inside_partner_test",
                   (("                    s[ixj] = a;\n                }\n            }\n"
                     "            __syncthreads();",
                     "                    s[ixj] = a;\n                }\n"
                     "                __syncthreads();\n            }"),),
                   "BarrierDivergenceError", 128, block=(0, 0, 0),
                   what="The barrier moved inside `if (ixj > tid)`: only the lower partner of each pair "
                        "reaches it."),)),
    Case("sort_bitonic_kv_ascending", SRC, "bitonicSortShared", _kv_setup(1), _kv_reference,
         ((1, 256), (3, 256), (4, 64), (16, 32), (2, 128)),
         style="CUDA samples sortingNetworks bitonicSortShared: key-value Comparator(&,&,&,&,dir), pointer bumps",
         bugs=(Bug("no_barrier_before_store",
                   (("        Comparator(s_key[pos + 0], s_val[pos + 0], "
                     "s_key[pos + stride], s_val[pos + stride], dir);\n"
                     "    }\n    __syncthreads();",
                     "        Comparator(s_key[pos + 0], s_val[pos + 0], "
                     "s_key[pos + stride], s_val[pos + stride], dir);\n"
                     "    }"),),
                   "SharedMemoryRaceError", (1, 256), block=(0, 0, 0), array="s_key",
                   what="The barrier between the last comparator step and the store-out is gone: threads store "
                        "keys their neighbours are still swapping."),)),
    Case("sort_bitonic_kv_descending", SRC, "bitonicSortShared", _kv_setup(0), _kv_reference,
         ((1, 256), (2, 256), (8, 64), (4, 128)),
         style="CUDA samples bitonicSortShared with dir = 0 (descending)"),
    Case("sort_odd_even_transposition", SRC, "odd_even_sort", _oet_setup,
         lambda a, n: {1: _segments(a[0], 128, np.sort)}, SHAPES,
         style="odd-even transposition sort, one pair per thread, `int& lo = s[i]` references",
         bugs=(Bug("odd_phase_unguarded",
                   (("        if (i + 1 < 2 * OET_BLOCK) {\n"
                     "            int& lo = s[i];\n            int& hi = s[i + 1];\n"
                     "            if (lo > hi) { int tmp = lo; lo = hi; hi = tmp; }\n        }",
                     "        int& lo = s[i];\n        int& hi = s[i + 1];\n"
                     "        if (lo > hi) { int tmp = lo; lo = hi; hi = tmp; }"),),
                   "OutOfBoundsError", 128, block=(0, 0, 0), thread=(63, 0, 0), array="s", index=(128,),
                   what="Without the guard, the last thread's odd-phase partner is s[128], one past the "
                        "segment."),)),
    Case("sort_rank_counting", SRC, "rank_sort", _rank_setup, lambda a, n: {1: np.sort(a[0], kind="stable")},
         (1, 37, 128, 500, 1031), style="rank (enumeration) sort: count smaller elements over shared tiles, "
                                        "stable on ties, scatter out[rank]",
         bugs=(Bug("last_tile_unguarded",
                   (("        if (start + threadIdx.x < n) tile[threadIdx.x] = x[start + threadIdx.x];",
                     "        tile[threadIdx.x] = x[start + threadIdx.x];"),),
                   "OutOfBoundsError", 500, block=(0, 0, 0), thread=(116, 0, 0), array="x", index=(500,),
                   what="The last tile's load is unguarded: thread 116 reads x[500] of 500."),)),
    Case("sort_radix_split_count", SRC, "radix_split_count", _split_setup(256), _split_reference(256), SHAPES,
         style="one LSD radix split: __syncthreads_count for the zeros, a Hillis-Steele scan of the ones",
         bugs=(Bug("scan_reads_and_writes_in_one_interval",
                   (("        unsigned int add = t >= d ? ones_before[t - d] : 0u;\n        __syncthreads();",
                     "        unsigned int add = t >= d ? ones_before[t - d] : 0u;"),),
                   "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="ones_before", index=(0,),
                   what="The in-place scan lost its middle barrier: thread 1 reads ones_before[0] after thread 0 "
                        "has already updated it."),)),
    Case("sort_radix_split_ballot", SRC, "radix_split_ballot", _split_setup(128), _split_reference(128), SHAPES,
         style="radix split by __ballot_sync and __popc(ballot & below), per-warp bases laid out by one thread"),
]
