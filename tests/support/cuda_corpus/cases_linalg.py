"""Small linear algebra other than tiled matrix multiplication (src/linalg_*.cu): gemv a
thread per row and a warp per row, A^T x with a shared x tile, a shared-staged rank-1
update, batched 4 x 4 products (a struct per matrix; a thread per product and sixteen),
batched triangular solves a block per system, the Gram matrix A^T A with shared panels,
column norms (a thread and a block per column) and row normalization with cooperative
groups."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


SHAPES = ((1, 1), (5, 7), (40, 33), (64, 64), (130, 97))
MAT4 = np.dtype([("m", "<f4", (4, 4))])     # struct Mat4 { float m[4][4]; }


def _gemv_setup(rng, s):
    m, n = s
    return Launch((_cdiv(m, 64),), (64,), (_f32(rng, s), _f32(rng, n), _f32(rng, m), np.int32(m), np.int32(n),
                                           np.float32(rng.uniform(-2, 2)), np.float32(rng.uniform(-2, 2))))


def _gemv_ref(args, s):
    return {2: float(args[5]) * (args[0].astype(np.float64) @ args[1]) + float(args[6]) * args[2]}


def _warp_setup(rng, s):
    m, n = s
    return Launch((_cdiv(m, 4),), (128,), (_f32(rng, s), _f32(rng, n), np.zeros(m, np.float32), np.int32(m),
                                           np.int32(n)))


def _gemvt_setup(rng, s):
    m, n = s
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, s), _f32(rng, m), np.zeros(n, np.float32), np.int32(m),
                                           np.int32(n)))


def _ger_setup(rng, s):
    m, n = s
    return Launch((_cdiv(n, 16), _cdiv(m, 16)), (16, 16), (_f32(rng, m), _f32(rng, n), _f32(rng, s), np.int32(m),
                                                          np.int32(n), np.float32(rng.uniform(-2, 2))))


def _ger_ref(args, s):
    return {2: args[2] + np.outer(float(args[5]) * args[0].astype(np.float64), args[1].astype(np.float64))}


def _mats(rng, batch):
    a = np.zeros(batch, MAT4)
    a["m"] = rng.standard_normal((batch, 4, 4))
    return a


def _mat4_thread_setup(rng, batch):
    return Launch((_cdiv(batch, 64),), (64,), (_mats(rng, batch), _mats(rng, batch), np.zeros(batch, MAT4),
                                               np.int32(batch)))


def _mat4_thread_ref(args, batch):
    out = np.zeros(batch, MAT4)
    out["m"] = args[0]["m"].astype(np.float64) @ args[1]["m"].astype(np.float64)
    return {2: out}


def _mat4_shared_setup(rng, batch):
    return Launch((_cdiv(batch, 8),), (16, 8), (_f32(rng, (batch, 4, 4)), _f32(rng, (batch, 4, 4)),
                                                np.zeros((batch, 4, 4), np.float32), np.int32(batch)))


def _mat4_ref(args, batch):
    return {2: args[0].astype(np.float64) @ args[1].astype(np.float64)}


def _trsv_setup(rng, s):
    batch, n = s
    L = np.tril(rng.uniform(-1, 1, (batch, n, n))) / np.sqrt(n)
    L[:, np.arange(n), np.arange(n)] = rng.uniform(1, 2, (batch, n)) * rng.choice([-1, 1], (batch, n))
    return Launch((batch,), (64,), (L.astype(np.float32), _f32(rng, (batch, n)), np.zeros((batch, n), np.float32),
                                    np.int32(n)))


def _trsv_ref(args, s):
    return {2: np.linalg.solve(args[0].astype(np.float64), args[1].astype(np.float64)[..., None])[..., 0]}


def _gram_setup(rng, s):
    m, n = s
    return Launch((_cdiv(n, 16), _cdiv(n, 16)), (16, 16), (_f32(rng, s), np.zeros((n, n), np.float32), np.int32(m),
                                                          np.int32(n)))


def _gram_ref(args, s):
    a = args[0].astype(np.float64)
    return {1: a.T @ a}


def _cn_thread_setup(rng, s):
    m, n = s
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, s), np.zeros(n, np.float32), np.int32(m), np.int32(n)))


def _cn_block_setup(rng, s):
    m, n = s
    return Launch((n,), (128,), (_f32(rng, s), np.zeros(n, np.float32), np.int32(m), np.int32(n)))


def _cn_ref(args, s):
    return {1: np.linalg.norm(args[0].astype(np.float64), axis=0)}


def _rows_setup(rng, s):
    m, n = s
    a = _f32(rng, s)
    if m > 2:
        a[2] = 0                     # a zero row stays zero
    return Launch((_cdiv(m, 2),), (64,), (a, np.zeros(m, np.float32), np.int32(m), np.int32(n)))


def _rows_ref(args, s):
    a = args[0].astype(np.float64)
    nrm = np.linalg.norm(a, axis=1)
    return {0: a / np.where(nrm > 0, nrm, 1)[:, None], 1: nrm}


CASES = [
    Case("la_gemv_row_per_thread", "linalg_gemv_row", "gemv_row_per_thread", _gemv_setup, _gemv_ref, SHAPES,
         rtol=1e-5, atol=1e-5, style="student gemv: a thread per row, alpha/beta as in BLAS",
         bugs=(Bug("column_loop_inclusive", (("for (int j = 0; j < n; ++j)", "for (int j = 0; j <= n; ++j)"),),
                   "OutOfBoundsError", (40, 33), thread=(0, 0, 0), block=(0, 0, 0), array="x", index=(33,),
                   what="`<=` on the column loop: row 0 reads x[n] (and the next row's first element of A)."),)),
    Case("la_gemv_warp_per_row", "linalg_gemv_warp", "gemv_warp_per_row", _warp_setup,
         lambda a, s: {2: a[0].astype(np.float64) @ a[1]}, SHAPES, rtol=1e-5, atol=1e-5,
         style="gemv with a warp per row, __shfl_xor_sync butterfly",
         bugs=(Bug("shuffle_inside_lane_guard",
                   (("    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync",
                     "    if (lane < n) for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync"),),
                   "BarrierDivergenceError", (5, 7), block=(0, 0, 0),
                   what="The butterfly runs only in lanes that hold a column: "
                        "the full mask names lanes that never arrive."),)),
    Case("la_gemv_transposed_shared_x", "linalg_gemv_t", "gemv_t_shared", _gemvt_setup,
         lambda a, s: {2: a[0].astype(np.float64).T @ a[1]}, SHAPES, rtol=1e-5, atol=1e-5,
         style="y = A^T x, a thread per column, x tiles staged in shared memory",
         bugs=(Bug("stage_guard_inclusive",
                   (("(i0 + threadIdx.x < m) ? x[i0 + threadIdx.x]", "(i0 + threadIdx.x <= m) ? x[i0 + threadIdx.x]"),),
                   "OutOfBoundsError", (40, 70), thread=(40, 0, 0), block=(0, 0, 0), array="x", index=(40,),
                   what="`<=` when staging x: the thread at i == m reads past x."),)),
    Case("la_ger_outer_product", "linalg_ger", "ger_shared", _ger_setup, _ger_ref, SHAPES, rtol=1e-5, atol=1e-5,
         style="BLAS ger A += alpha x y^T, slices of x and y staged by the first row/column of threads",
         bugs=(Bug("barrier_missing", (("    __syncthreads();\n", ""),),
                   "SharedMemoryRaceError", (20, 30), block=(0, 0, 0), array="xs", index=(0,),
                   what="No barrier after staging: thread (1, 0) reads the x slot thread (0, 0) just wrote."),)),
    Case("la_batched_mat4_struct", "linalg_mat4_thread", "batched_mat4_thread", _mat4_thread_setup, _mat4_thread_ref,
         (1, 5, 64, 200), rtol=1e-5, atol=1e-5,
         style="struct Mat4 { float m[4][4]; } per matrix, a thread per product"),
    Case("la_batched_mat4_shared", "linalg_mat4_shared", "batched_mat4_shared", _mat4_shared_setup, _mat4_ref,
         (1, 5, 8, 13, 100), rtol=1e-5, atol=1e-5, style="16 threads per 4x4 product, struct tiles in shared memory",
         bugs=(Bug("batch_guard_missing",
                   (("sa[k].m[r][c] = (mat < batch) ? A[mat * 16 + e] : 0.0f;", "sa[k].m[r][c] = A[mat * 16 + e];"),),
                   "OutOfBoundsError", 13, thread=(0, 5, 0), block=(1, 0, 0), array="A", index=(208,),
                   what="The load of A forgets the batch guard: the last block's spare matrices read past A."),)),
    Case("la_trsv_block_per_system", "linalg_trsv", "trsv_lower_batched", _trsv_setup, _trsv_ref,
         ((1, 1), (3, 5), (4, 17), (2, 64)), rtol=1e-4, atol=1e-5,
         style="batched lower-triangular solve, one block per system, column-oriented forward substitution",
         bugs=(Bug("pivot_barrier_missing",
                   (("        if (t == i) rhs[i] = rhs[i] / Ls[i * n + i];\n        __syncthreads();\n",
                     "        if (t == i) rhs[i] = rhs[i] / Ls[i * n + i];\n"),),
                   "SharedMemoryRaceError", (3, 10), block=(0, 0, 0), array="rhs", index=(0,),
                   what="No barrier after the pivot step: the other threads read x_i as thread i writes it."),
               Bug("load_barrier_in_guard",
                   (("    if (t < n) rhs[t] = b[blockIdx.x * n + t];\n    __syncthreads();",
                     "    if (t < n) {\n        rhs[t] = b[blockIdx.x * n + t];\n        __syncthreads();\n    }"),),
                   "BarrierDivergenceError", (3, 10), block=(0, 0, 0),
                   what="The load's barrier is inside `if (t < n)`: threads n..63 never reach it."))),
    Case("la_gram_ata_shared", "linalg_gram", "gram_ata", _gram_setup, _gram_ref,
         ((1, 1), (7, 5), (40, 20), (100, 33), (16, 16)), rtol=1e-4, atol=1e-4,
         style="Gram matrix A^T A with two shared column panels, marching down the rows",
         bugs=(Bug("trailing_barrier_missing",
                   (("        for (int k = 0; k < TG; ++k) acc += As_i[k][ty] * As_j[k][tx];\n        __syncthreads();",
                     "        for (int k = 0; k < TG; ++k) acc += As_i[k][ty] * As_j[k][tx];"),),
                   "SharedMemoryRaceError", (40, 20), block=(0, 0, 0), array="As_i", index=(0, 0),
                   what="No barrier before the next panel is loaded: "
                        "thread (0, 0) overwrites what others still read."),)),
    Case("la_column_norms_thread", "linalg_colnorm_thread", "col_norms_thread", _cn_thread_setup, _cn_ref, SHAPES,
         rtol=1e-5, atol=1e-5, style="column norms, a thread per column, coalesced along rows"),
    Case("la_column_norms_block", "linalg_colnorm_block", "col_norms_block", _cn_block_setup, _cn_ref, SHAPES,
         rtol=1e-5, atol=1e-5, style="column norms, a block per column, shared-memory tree",
         bugs=(Bug("barrier_inside_tree_guard",
                   (("        if (t < stride) partial[t] += partial[t + stride];\n        __syncthreads();",
                     "        if (t < stride) {\n            partial[t] += partial[t + stride];\n"
                     "            __syncthreads();\n        }"),),
                   "BarrierDivergenceError", (40, 33), block=(0, 0, 0),
                   what="The tree's barrier sits inside `if (t < stride)`: half the block skips it."),)),
    Case("la_normalize_rows_cg", "linalg_normalize_cg", "normalize_rows_cg", _rows_setup, _rows_ref, SHAPES,
         rtol=1e-5, atol=1e-6, style="cooperative groups thread_block_tile<32>, meta_group_rank, shfl_xor, rsqrtf"),
]
