"""Reductions (src/team_reductions.cu): each block's partial sum, max, count; the seeded bugs are
the classic ones of reduction code."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 31, 128, 1000, 4099)


def _blocks(n, block, per_thread=1):
    return max(1, -(-n // (block * per_thread)))


def _partial(block, per_thread=1, shared=True):
    def setup(rng, n):
        x = rng.standard_normal(n).astype(np.float32)
        nb = _blocks(n, block, per_thread)
        return Launch((nb,), (block,), (x, np.zeros(nb, np.float32), n), 4 * block if shared else 0)
    return setup


def _partial_sums(block, per_thread=1):
    def reference(args, n):
        x = args[0].astype(np.float64)
        nb = _blocks(n, block, per_thread)
        padded = np.zeros(nb * block * per_thread)
        padded[:n] = x
        if per_thread == 1:
            return {1: padded.reshape(nb, block).sum(1)}
        return {1: padded.reshape(nb, per_thread * block).sum(1)}
    return reference


def _sum_case(name, kernel, block=128, per_thread=1, shared=True, bugs=(), style="", **kw):
    return Case(name, "team_reductions", kernel, _partial(block, per_thread, shared), _partial_sums(block, per_thread),
                SHAPES, rtol=1e-4, atol=1e-4, bugs=bugs, style=style, **kw)


def _grid_stride_setup(rng, n):
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    return Launch((4,), (256,), (x, np.zeros(1, np.uint64), n))


def _dot_setup(rng, n):
    return Launch((4,), (256,), (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
                                 np.zeros(4, np.float32), n))


def _dot_reference(args, n):
    a, b = args[0].astype(np.float64), args[1].astype(np.float64)
    # thread t of block k sums elements t + k*256 + j*1024: the four partials
    idx = np.arange(n)
    return {2: np.array([(a * b)[(idx // 256) % 4 == k].sum() for k in range(4)])}


def _argmax_setup(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    nb = _blocks(n, 32)
    return Launch((nb,), (32,), (x, np.zeros(nb, np.float32), np.zeros(nb, np.int32), n))


def _argmax_reference(args, n):
    x = args[0]
    nb = _blocks(n, 32)
    best = [x[32 * b:32 * b + 32].max() for b in range(nb)]
    where = [32 * b + int(np.argmax(x[32 * b:32 * b + 32])) for b in range(nb)]
    return {1: np.array(best), 2: np.array(where)}


def _votes_setup(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    nb = _blocks(n, 96)
    return Launch((nb,), (96,), (x, np.zeros(3 * nb, np.int32), n))


def _votes_reference(args, n):
    x = args[0]
    out = []
    for b in range(_blocks(n, 96)):
        seg = x[96 * b:96 * b + 96] > 0
        out += [seg.sum(), int(seg.all()), int(seg.any())]
    return {1: np.array(out)}


def _last_block_setup(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    nb = _blocks(n, 128)
    return Launch((nb,), (128,), (x, np.zeros(nb, np.float32), np.zeros(1, np.float32), n))


def _last_block_reference(args, n):
    return {2: np.array([args[0].astype(np.float64).sum()]), "retirement_count": np.array([0])}


CASES = [
    _sum_case("reduce_interleaved", "reduce_interleaved", style="NVIDIA reduction sample, kernel 1 (divergent branch)",
              bugs=(Bug("missing_barrier_in_loop", (("        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];\n"
                                                      "        __syncthreads();\n    }\n"
                                                      "    if (tid == 0) out[blockIdx.x] = sdata[0];\n}\n\n"
                                                      "extern \"C\" __global__ void reduce_strided_index",
                                                      "        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];\n"
                                                      "    }\n    if (tid == 0) out[blockIdx.x] = sdata[0];\n}\n\n"
                                                      "extern \"C\" __global__ void reduce_strided_index"),),
                        "SharedMemoryRaceError", 256, block=(0, 0, 0), array="sdata",
                        what="The barrier at the end of each step is gone: a thread adds a neighbour's sum "
                             "before the neighbour has finished it."),)),
    _sum_case("reduce_strided_index", "reduce_strided_index", style="NVIDIA reduction sample, kernel 2",
              bugs=(Bug("shared_overrun", (("        if (index < blockDim.x) sdata[index] += sdata[index + s];",
                                            "        if (index <= blockDim.x) sdata[index] += sdata[index + s];"),),
                        "OutOfBoundsError", 128, block=(0, 0, 0), array="sdata", index=(128,),
                        what="`<=` in the guard: the thread whose index equals blockDim.x reads past sdata."),)),
    _sum_case("reduce_sequential", "reduce_sequential",
              style="NVIDIA reduction sample, kernel 3 (sequential addressing)",
              bugs=(Bug("barrier_inside_guard",
                        (("        if (tid < s) sdata[tid] += sdata[tid + s];\n"
                          "        __syncthreads();\n    }\n"
                          "    if (tid == 0) out[blockIdx.x] = sdata[0];\n}\n\n// Two",
                          "        if (tid < s) { sdata[tid] += sdata[tid + s]; __syncthreads(); }\n"
                          "    }\n"
                          "    if (tid == 0) out[blockIdx.x] = sdata[0];\n}\n\n// Two"),),
                        "BarrierDivergenceError", 256, block=(0, 0, 0),
                        what="The barrier moved inside `if (tid < s)`: half the block never reaches it."),)),
    _sum_case("reduce_first_add", "reduce_first_add", per_thread=2, style="NVIDIA reduction sample, kernel 4",
              bugs=(Bug("second_load_unguarded", (("    if (i + blockDim.x < n) sum += in[i + blockDim.x];",
                                                   "    sum += in[i + blockDim.x];"),),
                        "OutOfBoundsError", 100, block=(0, 0, 0), thread=(0, 0, 0), array="in", index=(128,),
                        what="The second element's guard is gone: the last block reads past the input."),)),
    _sum_case("reduce_unrolled_warp", "reduce_unrolled_warp", shared=False,
              style="NVIDIA reduction sample, kernel 5, with __syncwarp as CUDA 9+ requires",
              bugs=(Bug("no_syncwarp_in_tail", (("        v += s[tid + offset];\n        __syncwarp();\n"
                                                 "        s[tid] = v;\n        __syncwarp();",
                                                 "        v += s[tid + offset];\n        s[tid] = v;"),),
                        "SharedMemoryRaceError", 128, block=(0, 0, 0), array="sdata",
                        what="The volatile warp tail without __syncwarp: correct only if the warp runs in lock "
                             "step, which GPUs since Volta do not promise."),)),
    _sum_case("reduce_complete_unroll_128", "reduce_complete_unroll<128>", per_thread=2, shared=False,
              name_expressions=("reduce_complete_unroll<128>",), style="NVIDIA reduction sample, kernel 6 (template)",
              bugs=(Bug("shuffle_in_half_warp",
                        (("    if (tid < 32) {\n        if (blockSize >= 64) sum += sdata[tid + 32];",
                          "    if (tid < 16) {\n        if (blockSize >= 64) sum += sdata[tid + 32];"),),
                        "WarpDivergenceError", 256, block=(0, 0, 0),
                        what="Only 16 lanes enter the shuffle loop, but its mask names all 32."),)),
    _sum_case("reduce_complete_unroll_64", "reduce_complete_unroll<64>", block=64, per_thread=2, shared=False,
              name_expressions=("reduce_complete_unroll<64>",), style="NVIDIA reduction sample, kernel 6, 64 threads"),
    _sum_case("reduce_shuffle", "reduce_shuffle", shared=False, style="warp-shuffle reduction (CUDA blog 'Faster "
              "Parallel Reductions on Kepler')",
              bugs=(Bug("warp_sums_read_early", (("    if (lane == 0) warp_sums[warp] = v;\n    __syncthreads();",
                                                  "    if (lane == 0) warp_sums[warp] = v;"),),
                        "SharedMemoryRaceError", 200, block=(0, 0, 0), array="warp_sums",
                        what="No barrier between writing the warp sums and the first warp reading them."),)),
    _sum_case("reduce_cooperative", "reduce_cooperative", shared=False, style="cooperative groups tiled_partition "
              "and cg::reduce (CUDA samples reductionMultiBlockCG)"),
    Case("reduce_grid_stride_atomic", "team_reductions", "reduce_grid_stride_atomic", _grid_stride_setup,
         lambda args, n: {1: np.array([args[0].astype(np.int64).sum()]).astype(np.uint64)}, SHAPES,
         style="grid-stride loop with an integer atomicAdd per block (CUDA blog 'CUDA Pro Tip: grid-stride loops')"),
    Case("dot_product", "team_reductions", "dot_product", _dot_setup, _dot_reference, SHAPES, rtol=1e-4, atol=1e-4,
         style="CUDA by Example, ch. 5 dot product",
         bugs=(Bug("cache_not_synced", (("    cache[threadIdx.x] = temp;\n    __syncthreads();",
                                         "    cache[threadIdx.x] = temp;"),), "SharedMemoryRaceError", 1000,
                   block=(0, 0, 0), array="cache",
                   what="The first barrier is missing: threads add cache entries not yet stored."),)),
    Case("argmax_shuffle", "team_reductions", "argmax_shuffle", _argmax_setup, _argmax_reference, SHAPES,
         style="argmax by shuffles carrying value and index"),
    Case("vote_counts", "team_reductions", "vote_counts", _votes_setup, _votes_reference, SHAPES,
         style="__syncthreads_count/_and/_or"),
    Case("reduce_last_block", "team_reductions", "reduce_last_block", _last_block_setup, _last_block_reference, SHAPES,
         rtol=1e-4, atol=1e-4, style="CUDA samples threadFenceReduction: a __device__ counter and the last block"),
]
