"""Scans and compaction (src/team_scans.cu)."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 33, 256, 1000)


def _nb(n, per):
    return max(1, -(-n // per))


def _hs_setup(rng, n):
    return Launch((_nb(n, 128),), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32), n),
                  2 * 128 * 4)


def _segment_scan(x, per):
    out = np.zeros(len(x))
    for s in range(0, len(x), per):
        out[s:s + per] = np.cumsum(x[s:s + per].astype(np.float64))
    return out


def _blelloch_setup(rng, n):
    nb = _nb(n, 128)
    return Launch((nb,), (64,), (rng.integers(-50, 50, n).astype(np.int32), np.zeros(n, np.int32),
                                 np.zeros(nb, np.int32), n), 4 * (128 + 128 // 32))


def _blelloch_reference(args, n):
    x = args[0].astype(np.int64)
    out = np.zeros(n, np.int64)
    sums = []
    for s in range(0, n, 128):
        seg = x[s:s + 128]
        out[s:s + 128] = np.cumsum(seg) - seg
        sums.append(seg.sum())
    return {1: out, 2: np.array(sums)}


def _warp_setup(rng, n):
    return Launch((_nb(n, 256),), (256,), (rng.integers(-9, 10, n).astype(np.int32), np.zeros(n, np.int32), n))


def _offsets_setup(rng, n):
    per = 100
    nb = _nb(n, per)
    return Launch((nb,), (64,), (rng.integers(-9, 10, n).astype(np.int32), rng.integers(0, 50, nb).astype(np.int32),
                                 n, per))


def _offsets_reference(args, n):
    data, sums, _, per = args
    offs = np.concatenate([[0], np.cumsum(sums.astype(np.int64))[:-1]])
    return {0: data.astype(np.int64) + np.repeat(offs, per)[:n]}


def _segmented_setup(rng, n):
    return Launch((_nb(n, 256),), (256,), (rng.standard_normal(n).astype(np.float32),
                                           (rng.random(n) < 0.1).astype(np.int32), np.zeros(n, np.float32), n))


def _segmented_reference(args, n):
    x, flags = args[0].astype(np.float64), args[1].copy()
    flags[::256] = 1
    out, acc = np.zeros(n), 0.0
    for i in range(n):
        acc = x[i] if flags[i] else acc + x[i]
        out[i] = acc
    return {2: out}


def _compact_setup(rng, n):
    return Launch((_nb(n, 64),), (64,), (rng.standard_normal(n).astype(np.float32),
                                        np.zeros(_nb(n, 64) * 64, np.float32), np.zeros(_nb(n, 64) * 2, np.int32), n))


def _compact_reference(args, n):
    x = args[0]
    nw = _nb(n, 64) * 2
    out = np.zeros(nw * 32, np.float64)
    counts = []
    for w in range(nw):
        kept = [v for v in x[32 * w:32 * w + 32] if v > 0]
        out[32 * w:32 * w + len(kept)] = kept
        counts.append(len(kept))
    return {1: out, 2: np.array(counts)}


CASES = [
    Case("scan_hillis_steele", "team_scans", "scan_hillis_steele", _hs_setup,
         lambda a, n: {1: _segment_scan(a[0], 128)}, SHAPES, rtol=1e-4, atol=1e-4,
         style="Hillis-Steele double-buffered scan (GPU Gems 3, ch. 39, listing 39-1)",
         bugs=(Bug("no_barrier_between_steps",
                   (("        else temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid];\n"
                     "        __syncthreads();",
                     "        else temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid];"),),
                   "SharedMemoryRaceError", 256, block=(0, 0, 0), array="temp",
                   what="No barrier after each step: the next step reads the other buffer before it is written."),)),
    Case("scan_blelloch", "team_scans", "scan_blelloch", _blelloch_setup, _blelloch_reference, SHAPES,
         style="Blelloch work-efficient scan with bank-conflict padding (GPU Gems 3, ch. 39, listing 39-2)",
         bugs=(Bug("last_down_sweep_barrier_missing", (("    __syncthreads();\n    if (base + ai < n) out[base + ai]",
                                                     "    if (base + ai < n) out[base + ai]"),),
                "SharedMemoryRaceError", 256, block=(0, 0, 0), array="itemp",
                what="The barrier after the down-sweep is missing: threads read results others have not written."),)),
    Case("scan_warp_shuffle", "team_scans", "scan_warp_shuffle", _warp_setup,
         lambda a, n: {1: np.concatenate([np.cumsum(a[0][s:s + 256].astype(np.int64)) for s in range(0, n, 256)])},
         SHAPES, style="warp scan with __shfl_up_sync, then a scan of the warp totals",
         bugs=(Bug("totals_read_before_written", (("    if (lane == 31) warp_totals[warp] = v;\n    __syncthreads();",
                                                   "    if (lane == 31) warp_totals[warp] = v;"),),
                   "SharedMemoryRaceError", 256, block=(0, 0, 0), array="warp_totals",
                   what="No barrier between storing the warp totals and scanning them."),)),
    Case("scan_add_block_offsets", "team_scans", "scan_add_block_offsets", _offsets_setup, _offsets_reference, SHAPES,
         style="second pass of a multi-block scan (PMPP ch. 11, hierarchical scan)",
         bugs=(Bug("offset_read_before_computed", (("        offset = s;\n    }\n    __syncthreads();",
                                                    "        offset = s;\n    }"),),
                   "SharedMemoryRaceError", 300, block=(0, 0, 0), array="offset",
                   what="The threads read the block's offset before thread 0 has stored it."),)),
    Case("scan_segmented", "team_scans", "scan_segmented", _segmented_setup, _segmented_reference, SHAPES,
         rtol=1e-4, atol=1e-4, style="segmented scan with head flags (Sengupta et al.)",
         bugs=(Bug("read_write_same_step",
                   (("        if (tid >= d && !f) { v += val[tid - d]; f |= flg[tid - d]; }\n        __syncthreads();",
                     "        if (tid >= d && !f) { v += val[tid - d]; f |= flg[tid - d]; }"),),
                   "SharedMemoryRaceError", 256, block=(0, 0, 0),
                   what="The barrier between reading the neighbours and writing back is gone."),)),
    Case("compact_positive", "team_scans", "compact_positive", _compact_setup, _compact_reference, SHAPES,
         style="stream compaction with __ballot_sync and __popc (CUDA blog on warp-aggregated atomics)"),
]
