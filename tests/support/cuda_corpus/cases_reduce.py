"""Reductions (src/reduce.cu): Harris's seven steps, Kepler shuffles, cooperative groups,
grid-stride loops, two passes, atomics of block sums, the last-block-done pattern, dot
products, min/max/argmax and the __syncthreads_count/_and/_or votes."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = (1, 37, 128, 1000, 4099)
SRC = "reduce"


def _nb(n, per_block):
    return max(1, -(-n // per_block))


def _block_sums(x, per_block):
    """Sum of each consecutive chunk of per_block elements (the last one short), in float64."""
    x = np.asarray(x, np.float64)
    nb = _nb(len(x), per_block)
    padded = np.zeros(nb * per_block)
    padded[:len(x)] = x
    return padded.reshape(nb, per_block).sum(1)


def _owner_sums(x, owner, nb):
    """Sum of the elements each block owns, owner[i] being the block of element i."""
    return np.bincount(owner, weights=np.asarray(x, np.float64), minlength=nb)[:nb]


def _partials(kernel, block, per_thread=1, dynamic=False, **kw):
    """A case whose kernel writes one partial sum per block of block*per_thread elements."""
    per_block = block * per_thread

    def setup(rng, n):
        x = rng.standard_normal(n).astype(np.float32)
        nb = _nb(n, per_block)
        return Launch((nb,), (block,), (x, np.full(nb, np.nan, np.float32), n), 4 * block if dynamic else 0)

    def reference(args, n):
        return {1: _block_sums(args[0], per_block)}
    return dict(kernel=kernel, setup=setup, reference=reference, rtol=1e-4, atol=1e-4, **kw)


def _grid_stride(kernel, block, max_grid, per_thread=1, dtype=np.float32, **kw):
    """A grid-stride kernel on a fixed small grid: block b owns element i when
    (i mod stride) // (block*per_thread) == b, stride = grid*block*per_thread."""
    def grid(n):
        return min(max_grid, _nb(n, block * per_thread))

    def setup(rng, n):
        g = grid(n)
        return Launch((g,), (block,), (rng.standard_normal(n).astype(np.float32), np.zeros(g, dtype), n))

    def reference(args, n):
        g = grid(n)
        owner = (np.arange(n) % (g * block * per_thread)) // (block * per_thread)
        return {1: _owner_sums(args[0], owner, g)}
    return dict(kernel=kernel, setup=setup, reference=reference, rtol=1e-4, atol=1e-4, **kw)


def _case(name, shapes=SHAPES, source=SRC, **kw):
    return Case(name=name, source=source, shapes=shapes, **kw)


# ---- the cases with more than a partial per block -------------------------------------

def _pass2_setup(rng, m):
    return Launch((1,), (128,), (rng.standard_normal(m).astype(np.float32) * 10, np.zeros(1, np.float32), m))


def _atomic_int_setup(rng, n):
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    start = np.array([rng.integers(-50, 50)], np.int32)
    return Launch((_nb(n, 128),), (128,), (x, start, n))


def _atomic_float_setup(rng, n):
    return Launch((_nb(n, 128),), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(1, np.float32), n))


def _warp_atomic_setup(rng, n):
    return Launch((min(4, _nb(n, 128)),), (128,), (rng.integers(-1000, 1000, n).astype(np.int32),
                                                   np.zeros(1, np.int32), n))


def _last_block_setup(rng, n):
    nb = _nb(n, 128)
    return Launch((nb,), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(nb, np.float32),
                                  np.zeros(1, np.float32), n),
                  globals={"blocks_done": np.zeros(1, np.uint32)})


def _last_block_reference(args, n):
    return {1: _block_sums(args[0], 128), 2: np.array([np.sum(args[0], dtype=np.float64)]),
            "blocks_done": np.zeros(1)}


def _dot_grid(n):
    return min(8, _nb(n // 4, 128))


def _dot_setup(rng, n):
    g = _dot_grid(n)
    return Launch((g,), (128,), (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
                                 np.zeros(g, np.float32), n))


def _dot_reference(args, n):
    g = _dot_grid(n)
    prod = args[0].astype(np.float64) * args[1].astype(np.float64)
    n4 = n // 4
    owner = np.zeros(n, np.int64)                  # the scalar tail goes to block 0
    owner[:4 * n4] = ((np.arange(4 * n4) // 4) % (g * 128)) // 128
    return {2: _owner_sums(prod, owner, g)}


def _minmax_setup(rng, n):
    x = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    return Launch((min(8, _nb(n, 128)),), (128,), (x, np.array([2**31 - 1, -2**31], np.int32), n))


def _argmax_setup(rng, n):
    x = rng.integers(-40, 40, n).astype(np.float32)         # many ties: the lower index must win
    nb = _nb(n, 128)
    return Launch((nb,), (128,), (x, np.zeros(nb, np.float32), np.zeros(nb, np.int32), n))


def _argmax_reference(args, n):
    x = args[0]
    nb = _nb(n, 128)
    chunks = [x[128 * b:128 * b + 128] for b in range(nb)]
    return {1: np.array([c.max() for c in chunks]),
            2: np.array([128 * b + int(np.argmax(c)) for b, c in enumerate(chunks)])}


def _packed_setup(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    x[rng.integers(0, n, max(1, n // 50))] = x.max()         # the maximum several times
    return Launch((_nb(n, 128),), (128,), (x, np.zeros(2, np.uint32), n))


def _packed_reference(args, n):
    x = args[0]
    i = int(np.argmax(x))
    u = int(x.view(np.uint32)[i])
    u = (~u & 0xFFFFFFFF) if u & 0x80000000 else (u | 0x80000000)
    return {1: np.array([~i & 0xFFFFFFFF, u], np.uint32)}     # little-endian: low word first


def _propagate_setup(rng, n):
    nb = _nb(n, 128)
    return Launch((nb,), (128,), (rng.integers(0, 1000, n).astype(np.int32), (rng.random(n) < 0.8).astype(np.uint8),
                                  np.zeros(n, np.int32), np.zeros(2 * nb, np.int32), n))


def _propagate_reference(args, n):
    vals, link = args[0], args[1].astype(bool)
    idx = np.arange(n)
    head = (idx % 128 == 0) | ~np.concatenate([[False], link[:-1]])
    starts = np.flatnonzero(head)
    run_max = np.maximum.reduceat(vals, starts)
    out = run_max[np.cumsum(head) - 1]
    nb = _nb(n, 128)
    heads = np.bincount(idx // 128, weights=head, minlength=nb)
    return {2: out, 3: np.stack([heads, np.ones(nb)], 1).reshape(-1)}


CASES = [
    _case("red_interleaved_divergent", **_partials("reduce0_interleaved", 128),
          style="Harris, 'Optimizing Parallel Reduction', kernel 1: tid % (2*s) with a typedef'd element type",
          bugs=(Bug("barrier_inside_branch",
                    (("            sdata[tid] += sdata[tid + s];\n        }\n        __syncthreads();",
                      "            sdata[tid] += sdata[tid + s];\n            __syncthreads();\n        }"),),
                    "BarrierDivergenceError", 256, block=(0, 0, 0),
                    what="The step's barrier moved into the `tid % (2*s) == 0` branch: the odd threads never "
                         "reach it."),)),
    _case("red_interleaved_strided", **_partials("reduce1_strided", 256, dynamic=True),
          style="Harris kernel 2: index = 2*s*tid, extern __shared__ float[], unsigned n",
          bugs=(Bug("tail_left_unset", (("    s1[tid] = 0.0f;\n    if (i < n) s1[tid] = g_idata[i];",
                                         "    if (i < n) s1[tid] = g_idata[i];"),),
                    "UninitializedReadError", 100, block=(0, 0, 0), thread=(50, 0, 0), array="s1",
                    what="Threads past n never store their slot: thread 50's first step adds s1[100] and s1[101], "
                         "which nothing wrote."),)),
    _case("red_sequential", **_partials("reduce2_sequential", 128, dynamic=True),
          style="Harris kernel 3: sequential addressing, (float*) of an extern __shared__ char buffer",
          bugs=(Bug("first_stride_whole_block",
                    (("    sdata[tid] = i < n ? g_idata[i] : 0.0f;\n    __syncthreads();\n"
                      "    for (unsigned int s = blockDim.x / 2;",
                      "    sdata[tid] = i < n ? g_idata[i] : 0.0f;\n    __syncthreads();\n"
                      "    for (unsigned int s = blockDim.x;"),),
                    "OutOfBoundsError", 300, block=(0, 0, 0), thread=(0, 0, 0), array="smem", index=(128,),
                    what="The stride starts at blockDim.x instead of half of it: thread 0 adds sdata[128], one "
                         "past the 128 floats of dynamic shared memory."),)),
    _case("red_first_add", **_partials("reduce3_first_add", 128, per_thread=2),
          style="Harris kernel 4: first add during load; `float& mine = sdata[tid]` in the tree",
          bugs=(Bug("store_only_in_range",
                    (("    float mySum = 0.0f;\n    if (i < n) mySum = g_idata[i];\n"
                      "    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];\n    sdata[tid] = mySum;",
                      "    if (i < n) {\n        float mySum = g_idata[i];\n"
                      "        if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];\n        sdata[tid] = mySum;\n"
                      "    }"),),
                    "UninitializedReadError", 100, block=(0, 0, 0), thread=(36, 0, 0), array="sdata", index=(100,),
                    what="Only threads with data store their slot; at stride 64 thread 36 reads sdata[100], "
                         "never written."),)),
    _case("red_unroll_warp_volatile", **_partials("reduce4_unroll_warp", 128, per_thread=2),
          style="Harris kernel 5, the modern form: volatile warp tail with __syncwarp() between read and write",
          bugs=(Bug("syncwarp_dropped_in_step_16",
                    (("\n    v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v;",
                      "\n    v += sdata[tid + 16]; sdata[tid] = v;"),),
                    "SharedMemoryRaceError", 256, block=(0, 0, 0), array="sdata", index=(16,),
                    what="Without the __syncwarp() between the read and the write, lane 16 overwrites sdata[16] "
                         "while lane 0 may still be reading it: a race since Volta's independent scheduling."),)),
    _case("red_complete_unroll_256", **_grid_stride("reduce5_complete<256>", 256, 4, per_thread=2),
          name_expressions=("reduce5_complete<256>",),
          style="Harris kernel 6 / CUDA samples reduce6: template <unsigned int blockSize>, complete unrolling",
          bugs=(Bug("warp_tail_for_every_warp",
                    (("    if (tid < 32) warpReduceT<blockSize>(sdata, tid);",
                      "    warpReduceT<blockSize>(sdata, tid);"),),
                    "OutOfBoundsError", 4099, block=(0, 0, 0), array="sdata",
                    what="The `tid < 32` guard is gone: every warp runs the tail, so the last warp reads "
                         "sdata[tid + 32] past the array, and every warp races with the one before it on the "
                         "elements that warp reads. Each thread reads before its first __syncwarp() and "
                         "writes after it, so the read past the array comes first, and checked mode names it "
                         "(it names the template's own sdata since __shared__ in a template kernel is shared "
                         "memory with its own bounds)."),)),
    _case("red_complete_unroll_64", **_grid_stride("reduce5_complete<64>", 64, 6, per_thread=2),
          name_expressions=("reduce5_complete<64>",), style="Harris kernel 6 instantiated for 64 threads"),
    _case("red_shfl_grid_stride", **_grid_stride("deviceReduceKernel", 256, 4), source="reduce_kepler",
          style="Luitjens, 'Faster Parallel Reductions on Kepler': warpReduceSum/blockReduceSum, static __shared__",
          bugs=(Bug("all_lanes_read_warp_sums",
                    (("    val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;",
                      "    val = (threadIdx.x < warpSize) ? shared[lane] : 0;"),),
                    "UninitializedReadError", 1000, block=(0, 0, 0), thread=(8, 0, 0), array="shared", index=(8,),
                    what="Eight warps wrote shared[0..7]; the first warp's lanes 8..31 read the unwritten "
                         "rest of shared[32]."),)),
    _case("red_warp_atomic_int", kernel="deviceReduceWarpAtomicKernel", source="reduce_kepler",
          setup=_warp_atomic_setup,
          reference=lambda a, n: {1: np.array([a[0].astype(np.int64).sum()])},
          style="Luitjens: deviceReduceWarpAtomicKernel, one atomicAdd per warp (integers: exact)"),
    _case("red_cg_tiles", **_partials("reduce_cg_tiles", 96),
          style="cooperative groups: tiled_partition<32>, shfl_down, meta_group_rank/size, block.sync()",
          bugs=(Bug("tile_shuffle_under_guard",
                    (("    float v = 0.0f;\n    if (i < n) v = in[i];\n"
                      "    for (int k = tile32.size() / 2; k > 0; k /= 2)\n"
                      "        v += tile32.shfl_down(v, k);",
                      "    float v = 0.0f;\n    if (i < n) {\n        v = in[i];\n"
                      "        for (int k = tile32.size() / 2; k > 0; k /= 2)\n"
                      "            v += tile32.shfl_down(v, k);\n"
                      "    }"),),
                    "BarrierDivergenceError", 100, block=(1, 0, 0),
                    what="The tile's shuffles moved inside `if (i < n)`: in the last block lanes 4..31 skip them "
                         "while the tile's mask names all 32."),)),
    _case("red_grid_stride_double", **_grid_stride("reduce_grid_stride_double", 128, 6, dtype=np.float64),
          style="grid-stride loop with double accumulators and a double shared tree"),
    _case("red_two_pass_first", **_partials("reduce_pass1", 128),
          style="two-pass reduction, first launch: one partial per block"),
    _case("red_two_pass_second", kernel="reduce_pass2", setup=_pass2_setup, shapes=(1, 5, 128, 300, 1031),
          reference=lambda a, m: {1: np.array([a[0].astype(np.float64).sum()])}, rtol=1e-4, atol=1e-3,
          style="two-pass reduction, second launch: one block reduces the partials of the first"),
    _case("red_atomic_int", kernel="reduce_atomic_int", setup=_atomic_int_setup,
          reference=lambda a, n: {1: a[1].astype(np.int64) + a[0].astype(np.int64).sum()},
          style="block sums added with atomicAdd to a running integer total"),
    _case("red_atomic_float", kernel="reduce_atomic_float", setup=_atomic_float_setup,
          reference=lambda a, n: {1: np.array([a[0].astype(np.float64).sum()])}, rtol=1e-4, atol=1e-3,
          deterministic=False, style="block sums added with a float atomicAdd (order-dependent rounding)"),
    _case("red_last_block", kernel="reduce_last_block", setup=_last_block_setup, reference=_last_block_reference,
          rtol=1e-4, atol=1e-4,
          style="CUDA samples threadFenceReduction: __device__ counter, __threadfence, the last block finishes",
          bugs=(Bug("flag_read_before_barrier",
                    (("        amLast = (ticket == gridDim.x - 1);\n    }\n    __syncthreads();",
                      "        amLast = (ticket == gridDim.x - 1);\n    }"),),
                    "SharedMemoryRaceError", 1000, block=(0, 0, 0), array="amLast",
                    what="No barrier after thread 0 sets amLast: the other threads read it in the same "
                         "interval."),)),
    _case("red_dot_float4", kernel="dot_float4", setup=_dot_setup, reference=_dot_reference, rtol=1e-4, atol=1e-4,
          shapes=(1, 3, 37, 1000, 4099),
          style="dot product with (const float4*) casts, `const float *a = x, *b = y;`, __shfl_xor_sync butterfly"),
    _case("red_minmax_atomic", kernel="minmax_atomic", setup=_minmax_setup,
          reference=lambda a, n: {1: np.array([a[0].min(), a[0].max()])},
          style="min and max by atomicMin/atomicMax on __shared__ ints, then on global"),
    _case("red_argmax_shfl", kernel="argmax_shfl", setup=_argmax_setup, reference=_argmax_reference,
          style="argmax with paired __shfl_down_sync of value and index, ties to the lower index"),
    _case("red_argmax_packed", kernel="argmax_packed_atomic", setup=_packed_setup, reference=_packed_reference,
          style="argmax as one 64-bit atomicMax of (order-preserving float bits, ~index), through "
                "(unsigned long long*) of a uint pair"),
    _case("red_run_propagate", kernel="run_max_propagate", setup=_propagate_setup, reference=_propagate_reference,
          style="iterate-until-stable with __syncthreads_or; __syncthreads_count and __syncthreads_and",
          bugs=(Bug("write_back_without_barrier",
                    (("        if (t > 0 && valid && link[i - 1]) best = max(best, s[t - 1]);\n"
                      "        __syncthreads();",
                      "        if (t > 0 && valid && link[i - 1]) best = max(best, s[t - 1]);"),),
                    "SharedMemoryRaceError", 256, block=(0, 0, 0), array="s",
                    what="Neighbours are read and the new value written in one interval: thread t+1 "
                         "overwrites s[t+1] while thread t still needs it."),)),
]
