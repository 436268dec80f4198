"""Scans (src/scan.cu): Hillis-Steele inclusive and exclusive, Blelloch with padding,
warp scans by shuffles and by cooperative groups, the block-offset pass, a one-block scan
with a carry, a segmented scan and stream compaction with ballots."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 37, 128, 1000, 4099)
SRC = "scan"


def _nb(n, per_block):
    return max(1, -(-n // per_block))


def _per_block(x, per_block, fn):
    """fn applied to each consecutive chunk of per_block elements, concatenated."""
    return np.concatenate([fn(x[k:k + per_block]) for k in range(0, len(x), per_block)])


def _inclusive(c):
    return np.cumsum(c, dtype=np.float64 if c.dtype.kind == "f" else np.int64)


def _exclusive(c):
    s = _inclusive(c)
    return np.concatenate([[0], s[:-1]])


def _block_totals(x, per_block):
    nb = _nb(len(x), per_block)
    acc = np.float64 if x.dtype.kind == "f" else np.int64
    return np.array([x[per_block * b:per_block * b + per_block].sum(dtype=acc) for b in range(nb)])


def _hs_setup(rng, n):
    return Launch((_nb(n, 128),), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32), n),
                  2 * 128 * 4)


def _blelloch_setup(rng, n):
    nb = _nb(n, 256)
    return Launch((nb,), (128,), (rng.integers(-100, 100, n).astype(np.int32), np.zeros(n, np.int32),
                                  np.zeros(nb, np.int32), n), (256 + 256 // 32) * 4)


def _warp_setup(rng, n):
    nb = _nb(n, 256)
    return Launch((nb,), (256,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                  np.zeros(nb, np.float32), n))


def _offsets_setup(rng, n):
    nb = _nb(n, 128)
    return Launch((nb,), (128,), (rng.standard_normal(n).astype(np.float32),
                                  (rng.standard_normal(nb) * 100).astype(np.float32), n))


def _offsets_reference(args, n):
    data, offsets = args[0].astype(np.float64), args[1].astype(np.float64)
    return {0: data + np.repeat(offsets, 128)[:n]}


def _carry_setup(rng, n):
    return Launch((1,), (128,), (rng.integers(-1000, 1000, n).astype(np.int32), np.zeros(n, np.int32), n), 128 * 4)


def _segmented_setup(rng, n):
    return Launch((_nb(n, 256),), (256,), (rng.standard_normal(n).astype(np.float32),
                                           (rng.random(n) < 0.1).astype(np.int32), np.zeros(n, np.float32), n))


def _segmented_reference(args, n):
    x, flags = args[0].astype(np.float64), args[1].astype(bool)
    head = flags | (np.arange(n) % 256 == 0)
    seg = np.cumsum(head) - 1
    total = np.cumsum(x)
    start_before = (total - x)[head]          # the running total before each segment's head
    return {2: total - start_before[seg]}


def _compact_setup(rng, n):
    nb = _nb(n, 128)
    return Launch((nb,), (128,), (rng.standard_normal(n).astype(np.float32), np.full(nb * 128, -1.0, np.float32),
                                  np.zeros(nb, np.int32), n))


def _compact_reference(args, n):
    x = args[0]
    nb = _nb(n, 128)
    out = np.full(nb * 128, -1.0)
    counts = []
    for b in range(nb):
        kept = x[128 * b:128 * b + 128]
        kept = kept[kept > 0]
        out[128 * b:128 * b + len(kept)] = kept
        counts.append(len(kept))
    return {1: out, 2: np.array(counts)}


def _cg_setup(rng, n):
    nb = _nb(n, 256)
    return Launch((nb,), (256,), (rng.integers(0, 1 << 20, n).astype(np.uint32), np.zeros(n, np.uint32),
                                  np.zeros(nb, np.uint32), n))


CASES = [
    Case("scan_hs_inclusive", SRC, "scan_hillis_steele<false>", _hs_setup,
         lambda a, n: {1: _per_block(a[0], 128, _inclusive)}, SHAPES, name_expressions=("scan_hillis_steele<false>",),
         rtol=1e-4, atol=1e-4,
         style="GPU Gems 3 ch. 39, Example 39-1: naive double-buffered scan (pout/pin), template on inclusive",
         bugs=(Bug("no_barrier_between_steps",
                   (("            hs_temp[pout * len + thid] = hs_temp[pin * len + thid];\n        __syncthreads();",
                     "            hs_temp[pout * len + thid] = hs_temp[pin * len + thid];"),),
                   "SharedMemoryRaceError", 128, block=(0, 0, 0), array="hs_temp", index=(0,),
                   what="Double buffering is not enough without the barrier: thread 0 runs on to later steps and "
                        "rewrites hs_temp[0] before thread 1 has read it."),)),
    Case("scan_hs_exclusive", SRC, "scan_hillis_steele<true>", _hs_setup,
         lambda a, n: {1: _per_block(a[0], 128, _exclusive)}, SHAPES, name_expressions=("scan_hillis_steele<true>",),
         rtol=1e-4, atol=1e-4, style="GPU Gems 3 Example 39-1 as printed: exclusive, the input shifted right"),
    Case("scan_blelloch_padded", SRC, "prescan_blelloch", _blelloch_setup,
         lambda a, n: {1: _per_block(a[0], 256, _exclusive), 2: _block_totals(a[0], 256)}, SHAPES,
         style="GPU Gems 3 Example 39-2/39-3: work-efficient scan with CONFLICT_FREE_OFFSET padding",
         bugs=(Bug("padding_macro_too_generous",
                   (("#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)",
                     "#define CONFLICT_FREE_OFFSET(n) ((n) >> (LOG_NUM_BANKS - 1))"),),
                   "OutOfBoundsError", 300, block=(0, 0, 0), thread=(121, 0, 0), array="temp", index=(264,),
                   what="The padding macro pads every 16 elements while the buffer was sized for one pad per 32: "
                        "thread 121 stores element 249 at temp[264], past the 264 ints."),)),
    Case("scan_warp_shfl_up", SRC, "scan_warp_shfl", _warp_setup,
         lambda a, n: {1: _per_block(a[0], 256, _inclusive), 2: _block_totals(a[0], 256)}, SHAPES,
         rtol=1e-4, atol=1e-4, style="inclusive warp scan with __shfl_up_sync, warp totals scanned by warp 0"),
    Case("scan_add_block_offsets_pass", SRC, "add_block_offsets", _offsets_setup, _offsets_reference, SHAPES,
         style="second pass of a large scan: a per-block offset read once into a __shared__ scalar",
         bugs=(Bug("offset_read_before_barrier",
                   (("    if (threadIdx.x == 0) off = offsets[blockIdx.x];\n    __syncthreads();",
                     "    if (threadIdx.x == 0) off = offsets[blockIdx.x];"),),
                   "SharedMemoryRaceError", 300, block=(0, 0, 0), array="off",
                   what="Thread 0 stores the offset and the others read it with no barrier between."),)),
    Case("scan_one_block_carry", SRC, "scan_one_block_carry", _carry_setup,
         lambda a, n: {1: _exclusive(a[0])}, (1, 100, 128, 1000, 5003),
         style="one block scanning any length in chunks with a __shared__ carry (the block-sums pass)"),
    Case("scan_segmented_flags", SRC, "segmented_scan", _segmented_setup, _segmented_reference, SHAPES,
         rtol=1e-4, atol=1e-4, style="segmented inclusive scan over (value, head flag) pairs, `f |= ...`",
         bugs=(Bug("left_neighbour_unguarded",
                   (("        if (t >= d) {\n            if (!f) v += s_val[t - d];\n            f |= s_flag[t - d];\n"
                     "        }",
                     "        if (!f) v += s_val[t - d];\n        f |= s_flag[t - d];"),),
                   "OutOfBoundsError", 300, block=(0, 0, 0), thread=(0, 0, 0), array="s_flag", index=(-1,),
                   what="Without `t >= d` thread 0 (a segment head, so it skips the value) still ORs in "
                        "s_flag[-1]."),)),
    Case("scan_compact_ballot", SRC, "compact_ballot", _compact_setup, _compact_reference, SHAPES,
         style="stream compaction: __ballot_sync + __popc of the lanes below, per-warp bases",
         bugs=(Bug("early_return_before_ballot",
                   (("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
                     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n"
                     "    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;"),),
                   "BarrierDivergenceError", 1000, block=(7, 0, 0),
                   what="Threads past n return before the full-mask ballot (and the barriers): in the last block "
                        "the ballot names lanes that have exited."),)),
    Case("scan_cg_exclusive", SRC, "scan_cg_exclusive", _cg_setup,
         lambda a, n: {1: _per_block(a[0], 256, _exclusive), 2: _block_totals(a[0], 256)}, SHAPES,
         style="exclusive scan as inclusive minus the element, cooperative groups tile.shfl_up, typedef u32"),
]
