"""Histograms (src/histogram.cu): global atomics, privatized shared copies (cleared by a
loop or by memset), per-warp sub-histograms, byte text read as uchar4, run aggregation,
atomicInc ring counters and a 2-D histogram of float2 points."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 37, 128, 1000, 4099)
SRC = "histogram"
BINS = 64


def _nb(n, per_block):
    return max(1, -(-n // per_block))


def _int_setup(max_grid=8, dtype=np.uint32, per_block_grid=True):
    def setup(rng, n):
        data = rng.integers(0, BINS, n).astype(np.int32)
        grid = min(max_grid, _nb(n, 128)) if per_block_grid else _nb(n, 128)
        return Launch((grid,), (128,), (data, rng.integers(0, 1000, BINS).astype(dtype), n))
    return setup


def _counts_reference(args, n):
    return {1: args[1].astype(np.int64) + np.bincount(args[0], minlength=BINS)}


def _text_setup(rng, n):
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz    ,.ABCZ09", np.uint8)
    text = alphabet[rng.integers(0, len(alphabet), n)]
    return Launch((min(8, _nb(n // 4, 128)),), (128,), (text, np.zeros(7, np.uint32), n))


def _text_reference(args, n):
    pos = args[0].astype(np.int64) - ord("a")
    pos = pos[(pos >= 0) & (pos < 26)]
    return {1: np.bincount(pos // 4, minlength=7)}


def _runs_setup(rng, n):
    values = rng.integers(0, BINS, n)
    lengths = rng.integers(1, 12, n)
    data = np.repeat(values, lengths)[:n].astype(np.int32)
    per_thread = 16
    return Launch((_nb(n, 128 * per_thread),), (128,), (data, np.zeros(BINS, np.uint32), n, per_thread))


def _ring_setup(rng, n):
    limit = 6
    return Launch((_nb(n, 128),), (128,), (rng.integers(0, 8, n).astype(np.int32),
                                           rng.integers(0, limit + 1, 8).astype(np.uint32), limit, n))


def _ring_reference(args, n):
    data, start, limit = args[0], args[1].astype(np.int64), int(args[2])
    return {1: (start + np.bincount(data, minlength=8)) % (limit + 1)}


def _points_setup(rng, n):
    pts = rng.random((n, 2)).astype(np.float32)
    if n > 5:
        pts[5] = (1.0, 0.3)        # on the right edge: the clamp keeps it in the last column
    if n > 9:
        pts[9] = (0.5, 1.0)        # on the top edge
    return Launch((_nb(n, 128),), (128,), (pts, np.zeros(16 * 8, np.uint32), n))


def _points_reference(args, n):
    pts = args[0].astype(np.float32)
    bx = np.minimum((pts[:, 0] * np.float32(16)).astype(np.int64), 15)
    by = np.minimum((pts[:, 1] * np.float32(8)).astype(np.int64), 7)
    return {1: np.bincount(by * 16 + bx, minlength=128)}


CASES = [
    Case("hist_global_atomic", SRC, "histo_global", _int_setup(), _counts_reference, SHAPES,
         style="PMPP ch. 9: atomicAdd on global bins in a grid-stride loop"),
    Case("hist_shared_privatized", SRC, "histo_privatized", _int_setup(), _counts_reference, SHAPES,
         style="PMPP ch. 9 privatization / CUDA samples histogram256: __shared__ copy, atomics, merge",
         bugs=(Bug("clear_not_synced",
                   (("    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) s_hist[b] = 0;\n"
                     "    __syncthreads();",
                     "    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) s_hist[b] = 0;"),),
                   "SharedMemoryRaceError", 4099, block=(0, 0, 0), array="s_hist",
                   what="No barrier after clearing the private histogram: early threads count into bins that "
                        "later threads then zero."),)),
    Case("hist_shared_memset", SRC, "histo_memset", _int_setup(dtype=np.uint64, per_block_grid=False),
         _counts_reference, SHAPES,
         style="privatized histogram cleared with memset(s, 0, sizeof(s)) by one thread, sizeof(s[0]), u64 bins",
         bugs=(Bug("memset_counts_elements_not_bytes",
                   (("memset(s_hist, 0, sizeof(s_hist));", "memset(s_hist, 0, NUM_BINS);"),),
                   "UninitializedReadError", 37, block=(0, 0, 0), array="s_hist",
                   what="memset takes bytes: NUM_BINS bytes clear only the first 8 of 64 unsigned long long "
                        "bins."),)),
    Case("hist_per_warp", SRC, "histo_per_warp", _int_setup(), _counts_reference, SHAPES,
         style="per-warp sub-histograms s[WARPS][BINS] (CUDA samples histogram64's idea)",
         bugs=(Bug("warp_index_by_16",
                   (("    int warp = threadIdx.x / 32;", "    int warp = threadIdx.x / 16;"),),
                   "OutOfBoundsError", 1000, block=(0, 0, 0), thread=(64, 0, 0), array="s_warp", index=(4, 0),
                   what="Dividing by 16 gives 8 'warps' for 4 sub-histograms: thread 64 clears s_warp[4][0]."),)),
    Case("hist_text_uchar4", SRC, "histo_text", _text_setup, _text_reference, (1, 3, 37, 1001, 10007),
         style="PMPP's letter histogram on unsigned char text, (const uchar4*) vector loads and a byte tail",
         bugs=(Bug("tail_guard_inclusive",
                   (("    if (tail < n) count_letter(text[tail], h);",
                     "    if (tail <= n) count_letter(text[tail], h);"),),
                   "OutOfBoundsError", 1001, block=(0, 0, 0), thread=(1, 0, 0), array="text", index=(1001,),
                   what="`<=` in the tail's guard: thread 1 reads text[n], one byte past the text."),)),
    Case("hist_run_aggregation", SRC, "histo_aggregate", _runs_setup, _counts_reference, (1, 37, 1000, 4099, 20011),
         style="PMPP 9.7 aggregation: a contiguous range per thread, one atomic per run of equal bins"),
    Case("hist_atomicinc_ring", SRC, "histo_ring_counters", _ring_setup, _ring_reference, SHAPES,
         style="atomicInc(&c, limit) wrap-around counters (ring-buffer slots)"),
    Case("hist_2d_float2", SRC, "histo_2d", _points_setup, _points_reference, SHAPES,
         # Not seeded: dropping the clamp makes atomicAdd(&s_hist[r][16], 1) write s_hist[r + 1][0]. The
         # address of one past a row is legal C++, and the write lands inside the array, so checked
         # mode (like compute-sanitizer) cannot see it (runtime/README.md, Limitations).
         style="2-D histogram of float2 points (pts[i].x), clamped bins, [BY][BX] shared, `col %= BX`"),
]
