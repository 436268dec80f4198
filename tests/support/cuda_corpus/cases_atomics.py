"""Atomics and device variables (src/atomics.cu): atomicCAS loops for float max and double
add, atomicExch swaps and first-touch claims, __device__ counters read back by name, a
__constant__ table filled by the host, shared counters (atomicAdd, and count++ by one
thread), _block-scoped atomics, bit-mask atomics, atomicSub and atomicDec."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 37, 128, 1000, 4099)
SRC = "atomics"


def _nb(n, per_block=128):
    return max(1, -(-n // per_block))


def _max_setup(rng, n):
    nb = _nb(n)
    return Launch((nb,), (128,), (rng.standard_normal(n).astype(np.float32) * 100, np.full(nb, -3.0e38, np.float32),
                                  np.full(1, -3.0e38, np.float32), n))


def _max_reference(args, n):
    x = args[0]
    return {1: np.array([x[128 * b:128 * b + 128].max() for b in range(_nb(n))]), 2: np.array([x.max()])}


def _sum_double_setup(rng, n):
    x = rng.integers(-10**6, 10**6, n).astype(np.float64)      # integers: every order of addition is exact
    return Launch((min(4, _nb(n)),), (128,), (x, np.array([rng.integers(-100, 100)], np.float64), n))


def _swap_setup(rng, n):
    return Launch((_nb(n),), (128,), (rng.standard_normal(n).astype(np.float32),
                                      rng.standard_normal(n).astype(np.float32), n))


def _claim_setup(rng, n):
    keys = rng.integers(0, 500, n).astype(np.int32)
    return Launch((_nb(n),), (128,), (keys, np.zeros(500, np.uint32), n),
                  globals={"distinct_keys": np.zeros(1, np.uint32)})


def _claim_reference(args, n):
    keys = np.unique(args[0])
    claimed = np.zeros(500)
    claimed[keys] = 1
    return {1: claimed, "distinct_keys": np.array([len(keys)])}


SIGN_START = {"n_positive": 7, "n_negative": -3, "sum_of_squares": 123456}   # counters left by a previous run


def _signs_setup(rng, n):
    return Launch((_nb(n),), (128,), (rng.integers(-999, 1000, n).astype(np.int32), n),
                  globals={"n_positive": np.array([SIGN_START["n_positive"]], np.uint32),
                           "n_negative": np.array([SIGN_START["n_negative"]], np.int32),
                           "sum_of_squares": np.array([SIGN_START["sum_of_squares"]], np.uint64)})


def _signs_reference(args, n):
    v = args[0].astype(np.int64)
    return {"n_positive": np.array([SIGN_START["n_positive"] + (v > 0).sum()]),
            "n_negative": np.array([SIGN_START["n_negative"] - (v < 0).sum()]),
            "sum_of_squares": np.array([SIGN_START["sum_of_squares"] + (v * v).sum()])}


GAMMA = (np.linspace(0, 1, 256) ** (1 / 2.2)).astype(np.float32)
GAIN = np.float32(1.75)


def _lut_setup(rng, n):
    img = rng.integers(0, 255, n).astype(np.uint8)       # 255 only where placed on purpose
    if n > 5:
        img[5] = 255
    return Launch((_nb(n),), (128,), (img, np.zeros(n, np.float32), n),
                  globals={"c_lut": GAMMA, "c_gain": np.array([GAIN], np.float32)})


def _lut_reference(args, n):
    return {1: np.float64(GAIN) * GAMMA[args[0]].astype(np.float64)}


def _count_setup(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    x[:4] = np.abs(x[:4]) + 0.25                         # block 0 always has counted elements
    return Launch((_nb(n),), (128,), (x, np.zeros(_nb(n), np.int32), np.float32(0.1), n))


def _count_reference(args, n):
    x, thr = args[0], args[2]
    return {1: np.array([(x[128 * b:128 * b + 128] > thr).sum() for b in range(_nb(n))])}


def _block_setup(rng, n):
    nb = _nb(n)
    return Launch((nb,), (128,), (rng.integers(-1000, 1000, n).astype(np.int32), np.zeros(2 * nb, np.int32),
                                  np.zeros(nb, np.uint32), n))


def _block_reference(args, n):
    v = args[0]
    sums, masks = [], []
    for b in range(_nb(n)):
        seg = v[128 * b:128 * b + 128]
        sums += [seg.sum(), len(seg)]
        masks.append(np.bitwise_or.reduce(np.left_shift(np.uint64(1), (seg & 31).astype(np.uint64))))
    return {1: np.array(sums), 2: np.array(masks)}


def _bits_setup(rng, n):
    w = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    w |= np.uint32(0x00010001)                            # bits every word has: the AND is not zero
    start = np.array([0xFFFFFFFF, 0, rng.integers(0, 2**32)], np.uint32)
    return Launch((min(4, _nb(n)),), (128,), (w, start, n))


def _bits_reference(args, n):
    w, start = args[0], args[1]
    return {1: np.array([start[0] & np.bitwise_and.reduce(w), start[1] | np.bitwise_or.reduce(w),
                         start[2] ^ np.bitwise_xor.reduce(w)])}


def _budget_setup(rng, n):
    req = rng.integers(0, 20, n).astype(np.uint32)
    ring_max = 9
    return Launch((_nb(n),), (128,), (req, np.array([int(req.sum()) + 17], np.int32),
                                      np.array([rng.integers(0, ring_max + 1)], np.uint32), ring_max, n))


def _budget_reference(args, n):
    ring0, ring_max = int(args[2][0]), int(args[3])
    return {1: np.array([17]), 2: np.array([(ring0 - n) % (ring_max + 1)])}


CASES = [
    Case("atom_cas_float_max", SRC, "max_cas", _max_setup, _max_reference, SHAPES,
         style="CUDA Programming Guide: float atomicMax as an atomicCAS loop on __float_as_int bits"),
    Case("atom_cas_double_add", SRC, "sum_cas_double", _sum_double_setup,
         lambda a, n: {1: a[1] + a[0].sum()}, SHAPES,
         style="CUDA Programming Guide: double atomicAdd from unsigned long long atomicCAS (pre-sm_60)"),
    Case("atom_exch_swap", SRC, "swap_exch", _swap_setup, lambda a, n: {0: a[1], 1: a[0]}, SHAPES,
         style="element-wise swap with atomicExch, no waiting"),
    Case("atom_exch_first_touch", SRC, "claim_exch", _claim_setup, _claim_reference, SHAPES,
         style="first-touch claims with atomicExch(..., 1u) == 0u and a __device__ count read by get_global",
         bugs=(Bug("guard_inclusive",
                   (("    if (i < n && atomicExch(&claimed[keys[i]], 1u) == 0u)",
                     "    if (i <= n && atomicExch(&claimed[keys[i]], 1u) == 0u)"),),
                   "OutOfBoundsError", 1000, block=(7, 0, 0), thread=(104, 0, 0), array="keys", index=(1000,),
                   what="`<=` in the guard: thread 104 of the last block reads keys[n]."),)),
    Case("atom_device_counters", SRC, "count_signs", _signs_setup, _signs_reference, SHAPES,
         style="__device__ counters (unsigned, int by atomicSub, unsigned long long) set and read with get_global"),
    Case("atom_constant_lut", SRC, "apply_lut", _lut_setup, _lut_reference, SHAPES,
         style="__constant__ gamma table and gain filled by the host, 8-bit pixels",
         bugs=(Bug("lut_index_plus_one",
                   (("c_gain * c_lut[img[i]];", "c_gain * c_lut[img[i] + 1];"),),
                   "OutOfBoundsError", 300, block=(0, 0, 0), thread=(5, 0, 0), array="c_lut", index=(256,),
                   what="An off-by-one in the table index: pixel 5 (value 255) reads c_lut[256] of 256."),)),
    Case("atom_shared_count_atomic", SRC, "count_shared_atomic", _count_setup, _count_reference, SHAPES,
         style="`__shared__ int count;` zeroed by thread 0, atomicAdd(&count, 1), read after a barrier",
         bugs=(Bug("plain_increment",
                   (("in[i] > threshold) atomicAdd(&count, 1);", "in[i] > threshold) count++;"),),
                   "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="count",
                   what="count++ from every thread is a read-modify-write race; it needs atomicAdd."),
               Bug("count_read_before_barrier",
                   (("    if (i < n && in[i] > threshold) atomicAdd(&count, 1);\n    __syncthreads();",
                     "    if (i < n && in[i] > threshold) atomicAdd(&count, 1);"),),
                   "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="count",
                   what="Thread 0 reads the count before the other threads' atomics are done."))),
    Case("atom_shared_count_guarded", SRC, "count_shared_guarded", _count_setup, _count_reference, SHAPES,
         style="count++ under a single-thread guard over __shared__ unsigned char flags",
         bugs=(Bug("guard_dropped",
                   (("    if (threadIdx.x == 0) {\n        count = 0;", "    {\n        count = 0;"),),
                   "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="count",
                   what="Without `if (threadIdx.x == 0)` every thread resets and increments the one shared "
                        "count."),)),
    Case("atom_block_scope", SRC, "block_scope_stats", _block_setup, _block_reference, SHAPES,
         style="atomicAdd_block / atomicOr_block on each block's own global slot, `bit <<= (v & 31)`"),
    Case("atom_and_or_xor", SRC, "bit_reduce", _bits_setup, _bits_reference, SHAPES,
         style="atomicAnd/atomicOr/atomicXor of per-thread folds (`&=`, `|=`, `^=`)"),
    Case("atom_sub_dec", SRC, "spend_budget", _budget_setup, _budget_reference, SHAPES,
         style="atomicSub on a budget, atomicDec(&ring, max) wrapping"),
]
