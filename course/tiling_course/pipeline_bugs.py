"""Planted Hopper pipeline bugs and what checked mode names them (issue 44, item 2): one-line slips a
student makes in a warp-specialised TMA + wgmma GEMM (a producer warpgroup, consumers, a ring of
stages with full and empty mbarriers), each with the exception class that names its cause. The bugs
sit in chapter 9's kernels (kernels/hopper.cu, edited here by text) and in RING, a small kernel of
the same style written for this scorecard. Every bug of a source is switched on at run time by the
__device__ variable `planted_bug`, so one build serves all of a source's bugs, on the CPU runtime
and on a GPU (scripts/hopper_bug_scorecard.py runs them there under compute-sanitizer).

The kinds: (i) a tile read before its full barrier completes, (ii) a stage refilled before its
consumers release it, (iii) a wgmma operand touched before wgmma.wait_group, (iv) a TMA store of
threads' writes with no fence.proxy.async, (v) a wrong expect_tx count, (vi) a wrong arrival count,
(vii) a wgmma's accumulators read before the wgmma.wait_group that retires it.
"""
import ctypes
from dataclasses import dataclass

import numpy as np

from . import hopper, precision, sources

KINDS = {
    "i": "tile read before its full barrier completes",
    "ii": "stage refilled before its consumers release it",
    "iii": "wgmma operand touched before wait_group",
    "iv": "TMA store of threads' writes without fence.proxy.async",
    "v": "wrong expect_tx byte count",
    "vi": "wrong arrival count",
    "vii": "wgmma accumulator read before wait_group",
}

# The variable every planted bug reads, and the test each bug's site makes of it.
SWITCH = "__device__ int planted_bug;   // which planted bug this launch makes (0: none)\n"


@dataclass(frozen=True)
class Bug:
    number: int      # planted_bug's value that switches it on
    kind: str        # a key of KINDS
    source: str      # "hopper.cu" (chapter 9) or "ring" (RING)
    kernel: str
    what: str        # the student's slip, in a few words
    expected: str    # the name of the cudacheck exception that names its cause
    says: str        # words of the message that name the cause


# ---- chapter 9: kernels/hopper.cu, each site's text and its text with the bug's switch --------------
# (original, replacement): the replacement keeps the original's behaviour while planted_bug is not
# the bug's number. Each original occurs once in hopper.cu (planted_source checks it).
HOPPER_SITES = {
    1: ("        mbar_wait<(CLUSTER_SIZE > 1)>(full0 + 8 * s, (it / STAGES) & 1);   // step 3a's wait\n",
        "        if (planted_bug != 1)\n"
        "            mbar_wait<(CLUSTER_SIZE > 1)>(full0 + 8 * s, ((it / STAGES) & 1) ^ (planted_bug == 2));\n"),
    3: ("        consume_tile<WS_STAGES, 1>(d, it, slices, base, full0, empty0, c, lane);\n",
        "        if (planted_bug == 3)\n"
        "            it = 0;\n"
        "        consume_tile<WS_STAGES, 1>(d, it, slices, base, full0, empty0, c, lane);\n"),
    4: ("                mbar_wait(empty0 + 8 * s, ((it / WS_STAGES) & 1) ^ 1);   // the slot is free\n",
        "                if (planted_bug != 4)\n"
        "                    mbar_wait(empty0 + 8 * s, ((it / WS_STAGES) & 1) ^ 1);\n"),
    5: ("            if (PERSISTENT)\n                grouped_tile(tile, tiles_m, tiles_n, tm, tn);\n"
        "            for (int t = 0; t < slices; ++t, ++it) {\n                int s = it % WS_STAGES;",
        "            if (PERSISTENT)\n                grouped_tile(tile, tiles_m, tiles_n, tm, tn);\n"
        "            if (planted_bug == 5)\n                it = 0;\n"
        "            for (int t = 0; t < slices; ++t, ++it) {\n                int s = it % WS_STAGES;"),
    6: ("        wgmma_wait<1>();                        // slice t-1's products are done: its slot is free\n",
        "        if (planted_bug == 6)\n            wgmma_wait<2>();\n        else\n            wgmma_wait<1>();\n"),
    7: ("        wgmma_commit();\n        wgmma_wait<0>();\n        fence_acc(d);\n        __syncthreads();",
        "        wgmma_commit();\n        if (planted_bug != 7 && (planted_bug != 36 || t + 1 < slices))\n"
        "            wgmma_wait<0>();\n        fence_acc(d);\n        __syncthreads();"),
    35: ("    wgmma_wait<0>();\n    fence_acc(d);\n    if (slices > 0)\n        release(it - 1);\n",
         "    if (planted_bug == 35)\n        wgmma_wait<1>();\n    else\n        wgmma_wait<0>();\n    fence_acc(d);\n"
         "    if (slices > 0)\n        release(it - 1);\n"),
    8: ("    fence_proxy_async();                                   // 1\n",
        "    if (planted_bug != 8)\n        fence_proxy_async();\n"),
    9: ("    int r = warp * 16 + lane / 4;\n    unsigned swz = lane / 4, half = 8 * (lane % 2);\n",
        "    int r = warp * 16 + lane / 4;\n    unsigned swz = lane / 4, half = 8 * (lane % 2);\n"
        "    if (planted_bug == 9)\n        asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"),
    10: ("    mbar_arrive_expect_tx(bar, ROWS * ROW_BYTES + chunks * CHUNK_BYTES);\n",
         "    mbar_arrive_expect_tx(bar, ROWS * ROW_BYTES + (planted_bug == 10 ? 0 : chunks * CHUNK_BYTES)\n"
         "                                   + (planted_bug == 11 ? 1024 : 0));\n"),
    12: ("            mbar_init(empty0 + 8 * s, WS_CONSUMERS * 4);      // one per consumer warp\n",
         "            mbar_init(empty0 + 8 * s, WS_CONSUMERS * 4 + (planted_bug == 12) - 4 * (planted_bug == 13));\n"),
    14: ("            mbar_init(full0 + 8 * s, 1);                      // the producer's arrival\n",
         "            mbar_init(full0 + 8 * s, planted_bug == 14 ? 2 : 1);\n"),
}
# The proxy-fence bugs' second half: with bug 9, store_box's own fence (after the writes) is gone.
HOPPER_SITES[8] = (HOPPER_SITES[8][0], "    if (planted_bug != 8 && planted_bug != 9)\n        fence_proxy_async();\n")

# ---- RING: a warp-specialised GEMM written for the scorecard ------------------------------------------
# P (64 x 64 tiles) = A (64 x k) B (k x 64 tiles): warpgroup 0's thread 0 loads each slice of k (A's
# 64 x 64 box and B's 64 x 64 box, bf16, 128-byte swizzle) into the next of STAGES slots, after
# waiting on the slot's empty barrier; warpgroup 1 waits on its full barrier, multiplies it
# (4 wgmma m64n64k16), waits for the products and hands the slot back (one arrival per warp). One
# count of slices runs on across tiles. Each tile's result goes out by a TMA store from shared
# memory (threads' writes, fence.proxy.async, a named barrier, thread 128 stores and waits).
RING = SWITCH + r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
#define STAGES 2
#define SLOT 16384                 // A's box, then B's: 8 KiB each
#define RESULT (STAGES * SLOT)     // the consumer's 64 x 64 floats, 16 KiB, for the TMA store

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
    unsigned done = 0;
    unsigned long long tries = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#ifdef RING_WATCHDOG
        if (!done && ++tries > (1ull << 20))
            __trap();   // a deadlock, on a GPU: an error rather than a hang
#endif
    }
    (void)tries;
}

__device__ __forceinline__ void arrive(unsigned bar) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" :: "r"(bar) : "memory");
}

__device__ __forceinline__ void load(unsigned dst, const TensorMap* map, int x, int y, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

// A K-major (SBO 1,024) or B MN-major (LBO 8,192, SBO 1,024), 128-byte swizzle.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(8192 >> 4) << 16
         | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

#define R8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void mma(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; "
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "
                 "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "
                 "%29, %30, %31}, %32, %33, p, 1, 1, 0, 1; }"
                 : R8(0), R8(8), R8(16), R8(24) : "l"(da), "l"(db), "r"(1));
}

extern "C" __global__ void __launch_bounds__(256) ring(const __grid_constant__ TensorMap mapA,
                                                       const __grid_constant__ TensorMap mapB,
                                                       const __grid_constant__ TensorMap mapP, int k, int tiles) {
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned full0 = (unsigned)__cvta_generic_to_shared(full), empty0 = (unsigned)__cvta_generic_to_shared(empty);
    int slices = k / 64;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
                         :: "r"(full0 + 8 * s), "r"(planted_bug == 30 ? 2 : 1));   // the producer's arrival
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
                         :: "r"(empty0 + 8 * s), "r"(planted_bug == 31 ? 2 : 4));   // an arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    // The producer's warpgroup: 0, or 1 for bugs 40 on (the consumer first: it runs first here).
    unsigned producer = planted_bug >= 40;
    if (threadIdx.x / 128 == producer) {
        if (threadIdx.x % 128 != 0)
            return;
        unsigned it = 0;
        for (int tile = 0; tile < tiles; ++tile)
            for (int t = 0; t < slices; ++t, ++it) {
                int s = it % STAGES;
                unsigned slot = base + s * SLOT, bar = full0 + 8 * s;
                unsigned free_parity = ((it / STAGES) & 1) ^ (planted_bug == 21 ? 0 : 1);
                if (planted_bug != 20 && planted_bug != 32)
                    wait_parity(empty0 + 8 * s, free_parity);   // the slot is free: its last use handed back
                unsigned bytes = planted_bug == 28 ? 8192 : planted_bug == 29 ? 16384 + 128 : 16384;
                asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
                             :: "r"(bar), "r"(bytes) : "memory");
                load(slot, &mapA, t * 64, 0, bar);
                load(slot + 8192, &mapB, tile * 64, t * 64, bar);
                if (planted_bug == 32)
                    wait_parity(empty0 + 8 * s, free_parity);   // the wait after the copies, not before
            }
        return;
    }
    // The consumer: the other warpgroup.
    int c = threadIdx.x % 128, w = c / 32, lane = c % 32;
    float* result = (float*)__cvta_shared_to_generic(base + RESULT);
    unsigned it = 0;
    for (int tile = 0; tile < tiles; ++tile) {
        float d[32];
        for (int i = 0; i < 32; ++i)
            d[i] = 0.0f;
        if (planted_bug == 19)
            it = 0;   // the count of uses started again for each tile
        for (int t = 0; t < slices; ++t, ++it) {
            int s = it % STAGES;
            unsigned slot = base + s * SLOT;
            if (planted_bug != 17 && planted_bug != 40)
                wait_parity(full0 + 8 * s, ((it / STAGES) & 1) ^ (planted_bug == 18 || planted_bug == 41));
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            for (int j = 0; j < 4; ++j)
                mma(d, desc(slot + 32 * j), desc(slot + 8192 + 2048 * j));
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            if (planted_bug == 22 && lane == 0)
                arrive(empty0 + 8 * s);   // handed back before the wait
            if (planted_bug == 23 && c == 5)
                ((unsigned short*)__cvta_shared_to_generic(slot))[64] = 0;   // scratch in the A tile
            if (planted_bug == 24 ? t + 1 < slices : planted_bug == 34 && t + 1 == slices) {
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            } else if (planted_bug != 33 || t + 1 < slices) {
                asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            }
            if (planted_bug != 22 && lane == 0)
                arrive(empty0 + 8 * s);   // RELEASE
        }
        // The tile's result: thread c holds rows 16 w + lane / 4 and + 8, columns 8 j + 2 (lane % 4) and + 1.
        if (planted_bug == 26)
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // before the writes: too early
        for (int j = 0; j < 8; ++j) {
            int r = 16 * w + lane / 4, col = 8 * j + 2 * (lane % 4);
            result[r * 64 + col] = d[4 * j];
            result[r * 64 + col + 1] = d[4 * j + 1];
            result[(r + 8) * 64 + col] = d[4 * j + 2];
            result[(r + 8) * 64 + col + 1] = d[4 * j + 3];
        }
        if (planted_bug == 27)
            asm volatile("fence.proxy.async.global;" ::: "memory");   // orders global memory only
        else if (planted_bug != 25 && planted_bug != 26)
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 1, 128;" ::: "memory");
        if (c == 0) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                         :: "l"(reinterpret_cast<unsigned long long>(&mapP)), "r"(tile * 64), "r"(0),
                            "r"(base + RESULT) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        asm volatile("bar.sync 1, 128;" ::: "memory");
    }
    if (c == 0)
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
"""
RING_SMEM = 2 * 16384 + 16384 + 1024

BUGS = (
    Bug(1, "i", "hopper.cu", "matmul_persistent", "consumer's full-barrier wait left out", "TileNotReadyError",
        "waited on this barrier at all"),
    Bug(2, "i", "hopper.cu", "matmul_persistent", "consumer waits for the flipped parity", "TileNotReadyError",
        "one phase ahead"),
    Bug(3, "i", "hopper.cu", "matmul_persistent", "consumer's use count restarted each tile", "TileNotReadyError",
        "one phase ahead"),
    Bug(17, "i", "ring", "ring", "consumer's full-barrier wait left out", "TileNotReadyError",
        "waited on this barrier at all"),
    Bug(18, "i", "ring", "ring", "consumer waits for the flipped parity", "TileNotReadyError",
        "one phase ahead"),
    Bug(19, "i", "ring", "ring", "consumer's use count restarted each tile", "TileNotReadyError",
        "one phase ahead"),
    Bug(40, "i", "ring", "ring", "consumer's full-barrier wait left out (consumer warpgroup 0, run first)",
        "TileNotReadyError",
        "no TMA copy had written those bytes yet"),
    Bug(41, "i", "ring", "ring", "consumer waits for the flipped parity (consumer warpgroup 0, run first)",
        "TileNotReadyError",
        "wrong parity, wait for parity 0"),
    Bug(4, "ii", "hopper.cu", "matmul_persistent", "producer's empty-barrier wait left out", "StageOverwriteError",
        "no thread has even waited for that fill's phase yet"),
    Bug(5, "ii", "hopper.cu", "matmul_persistent", "producer's use count restarted each tile", "WaitParityError",
        "one phase ahead"),
    Bug(20, "ii", "ring", "ring", "producer's empty-barrier wait left out", "StageOverwriteError",
        "no thread has even waited for that fill's phase yet"),
    Bug(32, "ii", "ring", "ring", "producer waits for the free slot after its copies, not before",
        "StageOverwriteError",
        "refills"),
    Bug(21, "ii", "ring", "ring", "producer's first wait for a free slot asks for parity 0, not 1",
        "WaitParityError",
        "must ask for parity 1"),
    Bug(6, "iii", "hopper.cu", "matmul_persistent", "wgmma.wait_group 2 where 1 frees the slot",
        "WgmmaOperandRaceError",
        "handed the stage back"),
    Bug(7, "iii", "hopper.cu", "matmul_tma_wgmma", "wgmma.wait_group left out before __syncthreads",
        "WgmmaOperandRaceError",
        "handed the stage back"),
    Bug(22, "iii", "ring", "ring", "slot handed back before wgmma.wait_group", "WgmmaOperandRaceError",
        "handed the stage back"),
    Bug(23, "iii", "ring", "ring", "a thread writes the A tile before wgmma.wait_group", "WgmmaOperandRaceError",
        "writes smem[128]"),
    Bug(24, "iii", "ring", "ring", "wgmma.wait_group 1 before the slot is handed back", "WgmmaOperandRaceError",
        "handed the stage back"),
    Bug(8, "iv", "hopper.cu", "matmul_async_store", "fence.proxy.async after the result's writes left out",
        "ProxyFenceError",
        "with no fence.proxy.async of thread"),
    Bug(9, "iv", "hopper.cu", "matmul_async_store", "fence.proxy.async before the writes, not after",
        "ProxyFenceError",
        "with no fence.proxy.async of thread"),
    Bug(25, "iv", "ring", "ring", "fence.proxy.async before the TMA store left out", "ProxyFenceError",
        "with no fence.proxy.async of thread"),
    Bug(26, "iv", "ring", "ring", "fence.proxy.async before the writes, not after", "ProxyFenceError",
        "with no fence.proxy.async of thread"),
    Bug(27, "iv", "ring", "ring", "fence.proxy.async.global where shared memory was written", "ProxyFenceError",
        "orders global memory only"),
    Bug(10, "v", "hopper.cu", "matmul_persistent", "expect_tx counts A's box only", "TransactionCountError",
        "announced fewer bytes than the copies"),
    Bug(11, "v", "hopper.cu", "matmul_persistent", "expect_tx 1,024 bytes too many", "TransactionCountError",
        "expect_tx announced 50176 bytes and the copies delivered 49152"),
    Bug(28, "v", "ring", "ring", "expect_tx of one box where two are copied", "TransactionCountError",
        "announced fewer bytes than the copies"),
    Bug(29, "v", "ring", "ring", "expect_tx 128 bytes too many", "TransactionCountError",
        "expect_tx announced 16512 bytes and the copies delivered 16384"),
    Bug(12, "vi", "hopper.cu", "matmul_persistent", "empty barrier's count one more than its arrivals",
        "ArrivalCountError",
        "the count is larger than the arrivals"),
    Bug(13, "vi", "hopper.cu", "matmul_persistent", "empty barrier's count of one consumer's warps, not both's",
        "ArrivalCountError",
        "is smaller than the arrivals"),
    Bug(14, "vi", "hopper.cu", "matmul_persistent", "full barrier's count 2 with one producer arrival",
        "ArrivalCountError",
        "the count is larger than the arrivals"),
    Bug(30, "vi", "ring", "ring", "full barrier's count 2 with one producer arrival", "ArrivalCountError",
        "the count is larger than the arrivals"),
    Bug(31, "vi", "ring", "ring", "empty barrier's count 2 with four warps arriving", "ArrivalCountError",
        "is smaller than the arrivals"),
    Bug(33, "vii", "ring", "ring", "wgmma.wait_group 0 left out after the last slice", "WgmmaAccumulatorRaceError",
        "wgmma.wait_group has retired only groups below"),
    Bug(34, "vii", "ring", "ring", "wgmma.wait_group 1 after the last slice, where 0 was needed",
        "WgmmaAccumulatorRaceError", "wgmma.wait_group has retired only groups below"),
    Bug(35, "vii", "hopper.cu", "matmul_persistent", "wgmma.wait_group 1 where 0 ends the tile",
        "WgmmaAccumulatorRaceError", "wgmma.wait_group has retired only groups below"),
    Bug(36, "vii", "hopper.cu", "matmul_tma_wgmma", "wgmma.wait_group 0 left out after the last slice",
        "WgmmaAccumulatorRaceError", "wgmma.wait_group has retired only groups below"),
)


# A GPU build's watchdog (-DHOPPER_WATCHDOG): a deadlock traps after 2^20 tries, not 2^26, so that a
# planted deadlock ends in seconds under compute-sanitizer.
WATCHDOG = ("if (++tries > (1ull << 26))", "if (++tries > (1ull << 20))")


def planted_source(code=None):
    """hopper.cu (or `code`) with every site of HOPPER_SITES switched by planted_bug; a site
    whose text is not found once raises ValueError, naming it."""
    code = (code if code is not None else sources.read(hopper.FILE)).replace(*WATCHDOG)
    for number, (original, switched) in HOPPER_SITES.items():
        if code.count(original) != 1:
            raise ValueError(f"planted bug {number}: its site occurs {code.count(original)} times in "
                             f"{hopper.FILE}, not once; update HOPPER_SITES to the kernel's text")
        code = code.replace(original, switched)
    return SWITCH + code


def modules(backend="cpu", check=True):
    """{source: cudacheck module} of the two sources, each built once for all its bugs; on a GPU
    with their watchdogs, so that a planted deadlock traps rather than hangs."""
    import cudacheck
    defines = ("HOPPER_WATCHDOG", "RING_WATCHDOG") if backend == "gpu" else ()
    return {"hopper.cu": cudacheck.RawModule(planted_source(), backend=backend, check=check,
                                             options=hopper.options("bf16", defines)),
            "ring": cudacheck.RawModule(RING, backend=backend, check=check,
                                        options=hopper.ARCH_OPTIONS + tuple(f"-D{d}" for d in defines))}


def run(module, source, kernel, number, rng, xp=np):
    """Launch `kernel` of `module` with planted bug `number` (0: none) on small random inputs;
    returns (P, the exact product in float64) or raises what the launch raises."""
    value = np.array([number], np.int32)
    module.get_global("planted_bug").copy_from_host(value.ctypes.data_as(ctypes.c_void_p), value.nbytes)
    if source == "ring":
        return _run_ring(module, rng, xp)
    # 5 slices of k: a slot's uses per tile are odd, so a count of uses restarted each tile is wrong
    m, n, k = (128, 512, 320) if kernel == "matmul_persistent" else (128, 256, 320)
    M = precision.rounded(rng.standard_normal((m, k), np.float32), "bf16")
    N = precision.rounded(rng.standard_normal((k, n), np.float32), "bf16")
    dM, dN = (xp.asarray(precision.to_device_format(x, "bf16")) for x in (M, N))
    P, _ = hopper.launch(module, kernel, dM, dN, sms=hopper.CLUSTER.get(kernel, 1), sync=True)
    return P, M.astype(np.float64) @ N.astype(np.float64)


def _run_ring(module, rng, xp):
    from cudacheck import tensor_map_2d
    k, tiles = 192, 3   # 3 slices a tile on 2 slots: a slot's uses per tile alternate in parity
    A = precision.rounded(rng.standard_normal((64, k), np.float32), "bf16")
    B = precision.rounded(rng.standard_normal((k, 64 * tiles), np.float32), "bf16")
    dA, dB = (xp.asarray(precision.to_device_format(x, "bf16")) for x in (A, B))
    P = xp.full((64, 64 * tiles), np.nan, np.float32)
    maps = (tensor_map_2d(dA, box_rows=64, box_cols=64, element="bf16"),
            tensor_map_2d(dB, box_rows=64, box_cols=64, element="bf16"),
            tensor_map_2d(P, box_rows=64, box_cols=64, element="fp32", swizzle=0))
    f = module.get_function("ring")
    f.max_dynamic_shared_size_bytes = RING_SMEM
    f((1,), (256,), (*maps, np.int32(k), np.int32(tiles)), shared_mem=RING_SMEM, sync=True)
    return P, A.astype(np.float64) @ B.astype(np.float64)
