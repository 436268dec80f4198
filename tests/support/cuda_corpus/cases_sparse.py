"""Sparse matrix kernels (src/sparse_*.cu): SpMV in CSR (a thread per row, a warp per row with
shuffles, a cooperative-groups tile per row in double, TPR threads per row as a template,
double with __ldg), ELL, COO with atomics, JDS, a CSR x dense SpMM and a sparse-dense dot."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _rows(rng, m, n, maxlen):
    """Random row lengths and sorted distinct columns; row 0 is never the longest (so an ELL
    matrix pads it), the last row is, and some rows are empty."""
    maxlen = min(maxlen, n)
    lengths = rng.integers(0, maxlen + 1, m)
    lengths[0] = rng.integers(0, maxlen)
    lengths[-1] = maxlen
    cols = [np.sort(rng.choice(n, int(L), replace=False)).astype(np.int32) for L in lengths]
    return lengths, cols


def _csr(rng, m, n, maxlen=12, dtype=np.float32):
    lengths, cols = _rows(rng, m, n, maxlen)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    col_idx = np.concatenate(cols).astype(np.int32)
    val = rng.standard_normal(len(col_idx)).astype(dtype)
    return row_ptr, col_idx, val


def _dense(m, n, row_ptr, col_idx, val):
    a = np.zeros((m, n))
    rows = np.repeat(np.arange(m), np.diff(row_ptr))
    a[rows, col_idx] = val
    return a


# ---------------------------------------------------------------- CSR
def _csr_setup(block, rows_per_block=None, maxlen=12, dtype=np.float32):
    def setup(rng, s):
        m, n = s
        row_ptr, col_idx, val = _csr(rng, m, n, maxlen, dtype)
        x = rng.standard_normal(n).astype(dtype)
        grid = _cdiv(m, rows_per_block or block)
        return Launch((grid,), (block,), (np.int32(m), row_ptr, col_idx, val, x, np.zeros(m, dtype)))
    return setup


def _csr_ref(args, s):
    m, n = s
    return {5: _dense(m, n, args[1], args[2], args[3].astype(np.float64)) @ args[4].astype(np.float64)}


# ---------------------------------------------------------------- ELL
def _ell_setup(rng, s):
    m, n = s
    lengths, cols = _rows(rng, m, n, 10)
    K = int(lengths.max())
    col = np.full((K, m), -1, np.int32)
    val = np.zeros((K, m), np.float32)
    for r, c in enumerate(cols):
        col[:len(c), r] = c
        val[:len(c), r] = rng.standard_normal(len(c))
    return Launch((_cdiv(m, 64),), (64,), (np.int32(m), np.int32(K), col, val,
                                           rng.standard_normal(n).astype(np.float32), np.zeros(m, np.float32)))


def _ell_ref(args, s):
    m, n = s
    col, val, x = args[2], args[3].astype(np.float64), args[4].astype(np.float64)
    a = np.zeros((m, n))
    k, r = np.nonzero(col >= 0)
    a[r, col[k, r]] = val[k, r]
    return {5: a @ x}


# ---------------------------------------------------------------- COO
def _coo_setup(rng, s):
    m, n, nnz = s
    return Launch((4,), (64,), (np.int32(nnz), rng.integers(0, m, nnz).astype(np.int32),
                                rng.integers(0, n, nnz).astype(np.int32), rng.standard_normal(nnz).astype(np.float32),
                                rng.standard_normal(n).astype(np.float32), rng.standard_normal(m).astype(np.float32)))


def _coo_ref(args, s):
    m = s[0]
    rows, cols, val, x = args[1], args[2], args[3].astype(np.float64), args[4].astype(np.float64)
    return {5: args[5] + np.bincount(rows, weights=val * x[cols], minlength=m)}


# ---------------------------------------------------------------- JDS
def _jds_setup(rng, s):
    m, n = s
    lengths, cols = _rows(rng, m, n, 9)
    vals = [rng.standard_normal(len(c)).astype(np.float32) for c in cols]
    perm = np.argsort(-lengths, kind="stable").astype(np.int32)
    K = int(lengths.max())
    counts = [(lengths > k).sum() for k in range(K)]
    jd_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    col = np.concatenate([[cols[r][k] for r in perm[:counts[k]]] for k in range(K)]).astype(np.int32)
    val = np.concatenate([[vals[r][k] for r in perm[:counts[k]]] for k in range(K)]).astype(np.float32)
    return Launch((_cdiv(m, 64),), (64,), (np.int32(m), np.int32(K), perm, jd_ptr, col, val,
                                           rng.standard_normal(n).astype(np.float32), np.zeros(m, np.float32)))


def _jds_ref(args, s):
    m, n = s
    K, perm, jd_ptr, col, val, x = int(args[1]), args[2], args[3], args[4], args[5].astype(np.float64), args[6]
    a = np.zeros((m, n))
    for k in range(K):                      # undo the storage: diagonal k, sorted row r
        r = np.arange(jd_ptr[k + 1] - jd_ptr[k])
        a[perm[r], col[jd_ptr[k] + r]] = val[jd_ptr[k] + r]
    return {7: a @ x.astype(np.float64)}


# ---------------------------------------------------------------- sparse . dense
def _spdot_setup(rng, s):
    n, nnz = s
    idx = np.sort(rng.choice(n, nnz, replace=False)).astype(np.int32)
    return Launch((min(_cdiv(nnz, 128), 8),), (128,), (idx, rng.standard_normal(nnz).astype(np.float32), np.int32(nnz),
                                                       rng.standard_normal(n).astype(np.float32),
                                                       np.zeros(1, np.float32)))


def _spdot_ref(args, s):
    return {4: np.array([args[1].astype(np.float64) @ args[3][args[0]].astype(np.float64)])}


# ---------------------------------------------------------------- SpMM
def _spmm_setup(rng, s):
    m, n, k = s
    row_ptr, col_idx, val = _csr(rng, m, n, 8)
    return Launch((m,), (32,), (np.int32(m), np.int32(k), row_ptr, col_idx, val,
                                rng.standard_normal((n, k)).astype(np.float32), np.zeros((m, k), np.float32)))


def _spmm_ref(args, s):
    m, n, k = s
    return {6: _dense(m, n, args[2], args[3], args[4].astype(np.float64)) @ args[5].astype(np.float64)}


SHAPES = ((1, 1), (7, 5), (64, 64), (100, 37), (333, 200))

CASES = [
    Case("sp_csr_scalar", "sparse_csr_scalar", "spmv_csr_scalar", _csr_setup(64), _csr_ref, SHAPES,
         rtol=1e-5, atol=1e-5,
         style="Bell & Garland CSR scalar SpMV (PMPP 14.3), a thread per row",
         bugs=(Bug("row_end_two_ahead", (("int row_end = row_ptr[row + 1];", "int row_end = row_ptr[row + 2];"),),
                   "OutOfBoundsError", (100, 37), thread=(35, 0, 0), block=(1, 0, 0), array="row_ptr", index=(101,),
                   what="The row's end is read from row_ptr[row + 2]: the last row reads past row_ptr."),)),
    Case("sp_csr_vector_shfl", "sparse_csr_vector", "spmv_csr_vector", _csr_setup(128, 4, 70), _csr_ref, SHAPES,
         rtol=1e-5, atol=1e-5, style="Bell & Garland CSR vector SpMV, a warp per row, __shfl_down_sync tree",
         bugs=(Bug("half_warp_mask",
                   (("__shfl_down_sync(0xffffffffu, sum, offset)", "__shfl_down_sync(0x0000ffffu, sum, offset)"),),
                   "BarrierDivergenceError", (64, 64), block=(0, 0, 0),
                   what="The shuffle's mask names lanes 0-15 while all 32 lanes call it."),)),
    Case("sp_csr_cg_tile_double", "sparse_csr_cg", "spmv_csr_tile", _csr_setup(64, 2, 50, np.float64), _csr_ref, SHAPES,
         rtol=1e-12, atol=1e-12, style="cooperative groups: thread_block_tile<32> per row, tile.shfl_down, double"),
    Case("sp_csr_ldg_double", "sparse_csr_double", "spmv_csr_ldg", _csr_setup(64, dtype=np.float64), _csr_ref, SHAPES,
         rtol=1e-12, atol=1e-12, style="CSR scalar in double with __restrict__ and __ldg",
         bugs=(Bug("row_guard_missing", (("    if (row >= m) return;\n", ""),),
                   "OutOfBoundsError", (100, 37), thread=(36, 0, 0), block=(1, 0, 0), array="row_ptr", index=(101,),
                   what="No guard on the row: the first thread past the last row reads row_ptr[m + 1]."),)),
    Case("sp_csr_subwarp4", "sparse_subwarp", "spmv_csr_subwarp<4>", _csr_setup(128, 32, 20), _csr_ref, SHAPES,
         name_expressions=("spmv_csr_subwarp<4>",), rtol=1e-5, atol=1e-5,
         style="CUSP spmv_csr_vector: THREADS_PER_VECTOR template parameter, shuffles with a width"),
    Case("sp_csr_subwarp16", "sparse_subwarp", "spmv_csr_subwarp<16>", _csr_setup(128, 8, 40), _csr_ref, SHAPES,
         name_expressions=("spmv_csr_subwarp<16>",), rtol=1e-5, atol=1e-5,
         style="CUSP spmv_csr_vector: THREADS_PER_VECTOR = 16"),
    Case("sp_ell_colmajor", "sparse_ell", "spmv_ell", _ell_setup, _ell_ref, SHAPES, rtol=1e-5, atol=1e-5,
         style="PMPP 14.4 ELL SpMV, column-major storage, -1 padding",
         bugs=(Bug("padding_not_skipped", (("            if (c >= 0) dot +=", "            dot +="),),
                   "OutOfBoundsError", (100, 37), thread=(0, 0, 0), block=(0, 0, 0), array="x", index=(-1,),
                   what="Padding entries are not skipped: row 0's padding column -1 reads x[-1]."),)),
    Case("sp_coo_atomic", "sparse_coo", "spmv_coo_atomic", _coo_setup, _coo_ref,
         ((1, 1, 1), (5, 3, 17), (50, 40, 300), (200, 150, 1500)), rtol=1e-5, atol=1e-5, deterministic=False,
         style="COO SpMV with atomicAdd into y, grid-stride loop over the nonzeros, duplicates allowed",
         bugs=(Bug("grid_stride_bound_inclusive",
                   (("i < nnz; i += blockDim.x * gridDim.x)", "i <= nnz; i += blockDim.x * gridDim.x)"),),
                   "OutOfBoundsError", (50, 40, 300), thread=(44, 0, 0), block=(0, 0, 0), array="row_idx", index=(300,),
                   what="`<=` in the grid-stride loop: the thread that reaches i == nnz reads past the lists."),)),
    Case("sp_jds", "sparse_jds", "spmv_jds", _jds_setup, _jds_ref, SHAPES, rtol=1e-5, atol=1e-5,
         style="PMPP 14.5 JDS SpMV: sorted rows, jagged diagonals, permutation back"),
    Case("sp_sparse_dense_dot", "sparse_spdot", "sparse_dense_dot", _spdot_setup, _spdot_ref,
         ((1, 1), (10, 3), (1000, 300), (5000, 2500)), rtol=1e-4, atol=1e-4, deterministic=False,
         style="sparse-dense dot: __shfl_xor_sync butterflies, warp totals in shared, one atomicAdd per block",
         bugs=(Bug("warp_sums_unguarded",
                   (("s = (lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f;", "s = warp_sums[lane];"),),
                   "UninitializedReadError", (1000, 300), thread=(4, 0, 0), block=(0, 0, 0), array="warp_sums",
                   index=(4,),
                   what="The first warp reads all 32 warp totals, but a block of 128 threads stored only 4."),)),
    Case("sp_spmm_csr_dense", "sparse_spmm", "spmm_csr_rowblock", _spmm_setup, _spmm_ref,
         ((1, 1, 1), (6, 9, 5), (40, 30, 33), (64, 50, 70)), rtol=1e-5, atol=1e-5,
         style="CSR x dense SpMM, a block per sparse row, threads striding over dense columns"),
]
