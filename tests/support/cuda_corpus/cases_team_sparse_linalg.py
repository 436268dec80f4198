"""Sparse matrix-vector products and small dense linear algebra (src/team_sparse_linalg.cu)."""
import numpy as np

from .case import Bug, Case, Launch

ROWS = (1, 7, 64, 200)


def _csr(rng, rows, cols=None):
    cols = cols or max(rows, 5)
    counts = rng.integers(0, 40, rows)
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    return (row_ptr, rng.integers(0, cols, nnz).astype(np.int32), rng.standard_normal(nnz).astype(np.float32),
            rng.standard_normal(cols).astype(np.float32))


def _dense(row_ptr, ci, vals, ncols):
    rows = len(row_ptr) - 1
    a = np.zeros((rows, ncols))
    for r in range(rows):
        np.add.at(a[r], ci[row_ptr[r]:row_ptr[r + 1]], vals[row_ptr[r]:row_ptr[r + 1]].astype(np.float64))
    return a


def _csr_setup(per_warp):
    def setup(rng, rows):
        rp, ci, v, x = _csr(rng, rows)
        threads = rows * (32 if per_warp else 1)
        return Launch((max(1, -(-threads // 128)),), (128,), (rows, rp, ci, v, x, np.zeros(rows, np.float32)))
    return setup


def _csr_ref(args, rows):
    rows_, rp, ci, v, x, _ = args
    return {5: _dense(rp, ci, v, len(x)) @ x.astype(np.float64)}


def _ell(rng, rows):
    rp, ci, v, x = _csr(rng, rows)
    width = int(np.diff(rp).max()) if rows else 0
    cols = -np.ones((max(width, 1), rows), np.int32)
    vals = np.zeros((max(width, 1), rows), np.float32)
    for r in range(rows):
        k = rp[r + 1] - rp[r]
        cols[:k, r], vals[:k, r] = ci[rp[r]:rp[r + 1]], v[rp[r]:rp[r + 1]]
    return Launch((max(1, -(-rows // 64)),), (64,), (rows, max(width, 1), cols, vals, x, np.zeros(rows, np.float32)))


def _ell_ref(args, rows):
    _, width, cols, vals, x, _ = args
    y = np.zeros(rows)
    for k in range(width):
        ok = cols[k] >= 0
        y[ok] += vals[k][ok].astype(np.float64) * x[cols[k][ok]]
    return {5: y}


def _coo(rng, rows):
    rp, ci, v, x = _csr(rng, rows)
    r = np.repeat(np.arange(rows), np.diff(rp)).astype(np.int32)
    return Launch((max(1, -(-len(v) // 128)),), (128,), (len(v), r, ci, v, x, np.zeros(rows, np.float32)))


def _coo_ref(args, rows):
    nnz, r, c, v, x, _ = args
    y = np.zeros(rows)
    np.add.at(y, r, v.astype(np.float64) * x[c])
    return {5: y}


def _gemv(warp):
    def setup(rng, s):
        m, n = s
        blocks = -(-m // 4) if warp else -(-m // 128)
        return Launch((max(1, blocks),), (128,), (rng.standard_normal(s).astype(np.float32),
                                                 rng.standard_normal(n).astype(np.float32), np.zeros(m, np.float32),
                                                 m, n))
    return setup


MN = ((1, 1), (7, 100), (130, 33), (64, 64))


MAT4 = np.dtype([("m", "<f4", (4, 4))])


def _mat4(rng, count):
    a, b = (rng.standard_normal((count, 4, 4)).astype(np.float32).reshape(count, 16).view(MAT4)[:, 0] for _ in range(2))
    return Launch((count,), (16,), (a, b, np.zeros(count, MAT4), count))


def _tri(rng, count):
    n = 6
    L = np.tril(rng.standard_normal((count, n, n))).astype(np.float32)
    L[:, np.arange(n), np.arange(n)] = rng.uniform(1, 2, (count, n))
    return Launch((count,), (32,), (L, rng.standard_normal((count, n)).astype(np.float32),
                                    np.zeros((count, n), np.float32), n))


def _tri_ref(args, count):
    L, b = args[0].astype(np.float64), args[1].astype(np.float64)
    return {2: np.stack([np.linalg.solve(L[i], b[i]) for i in range(count)])}


CASES = [
    Case("spmv_csr_scalar", "team_sparse_linalg", "spmv_csr_scalar", _csr_setup(False), _csr_ref, ROWS,
         rtol=1e-4, atol=1e-4,
         style="PMPP 14.3: CSR SpMV, a thread per row",
         bugs=(Bug("row_end_off_by_one",
                   (("for (int j = row_ptr[row]; j < row_ptr[row + 1]; ++j)",
                     "for (int j = row_ptr[row]; j <= row_ptr[row + 1]; ++j)"),),
                   "OutOfBoundsError", 7, array="vals",
                   what="`<=` runs one past the row's end; the last row reads past vals."),)),
    Case("spmv_csr_vector", "team_sparse_linalg", "spmv_csr_vector", _csr_setup(True), _csr_ref, ROWS,
         rtol=1e-4, atol=1e-4,
         style="CSR vector kernel: a warp per row with __shfl_down_sync (Bell and Garland)",
         bugs=(Bug("half_warp_mask",
                   (("        for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);\n"
                     "        if (lane == 0) y[warp] = sum;",
                     "        for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0x0000ffffu, sum, o);\n"
                     "        if (lane == 0) y[warp] = sum;"),),
                   "WarpDivergenceError", 7, block=(0, 0, 0),
                   what="The shuffle's mask names 16 lanes while all 32 call it."),)),
    Case("spmv_ell", "team_sparse_linalg", "spmv_ell", _ell, _ell_ref, ROWS, rtol=1e-4, atol=1e-4,
         style="PMPP 14.4: ELL format, column-major padding"),
    Case("spmv_coo", "team_sparse_linalg", "spmv_coo", _coo, _coo_ref, ROWS, rtol=1e-4, atol=1e-4, deterministic=False,
         style="PMPP 14.5: COO with float atomicAdd"),
    Case("gemv_shared", "team_sparse_linalg", "gemv_shared", _gemv(False),
         lambda a, s: {2: a[0].astype(np.float64) @ a[1]}, MN, rtol=1e-4, atol=1e-4,
         style="matrix-vector with the vector staged in shared memory",
         bugs=(Bug("early_exit_before_barriers",
                   (("    float sum = 0.0f;\n    for (int t = 0; t < n; t += 64) {\n        if (threadIdx.x < 64)",
                     "    if (row >= m) return;\n"
                     "    float sum = 0.0f;\n    for (int t = 0; t < n; t += 64) {\n        if (threadIdx.x < 64)"),),
                   "BarrierDivergenceError", (7, 100), block=(0, 0, 0),
                   what="Rows past the matrix return before the barriers the rest of the block waits at."),)),
    Case("gemv_warp", "team_sparse_linalg", "gemv_warp", _gemv(True),
         lambda a, s: {2: a[0].astype(np.float64) @ a[1]}, MN, rtol=1e-4, atol=1e-4,
         style="matrix-vector, a warp per row with __shfl_xor_sync"),
    Case("outer_product", "team_sparse_linalg", "outer_product",
         lambda rng, s: Launch((-(-s[1] // 16), -(-s[0] // 16)), (16, 16),
                               (rng.standard_normal(s[0]).astype(np.float32),
                                rng.standard_normal(s[1]).astype(np.float32), np.zeros(s, np.float32), s[0], s[1])),
         lambda a, s: {2: np.outer(a[0], a[1])}, MN, rtol=1e-6, style="outer product on a 2-D grid"),
    Case("batched_mat4", "team_sparse_linalg", "batched_mat4", _mat4,
         lambda a, c: {2: np.einsum("bij,bjk->bik", a[0]["m"].astype(np.float64), a[1]["m"])
                       .astype(np.float32).reshape(c, 16).view(MAT4)[:, 0]},
         (1, 5, 33), rtol=1e-5, atol=1e-5,
         style="batched 4 x 4 products, a struct per matrix, structs in shared memory",
         bugs=(Bug("struct_not_synced",
                   (("    bm.m[r][c] = B[b].m[r][c];\n    __syncthreads();", "    bm.m[r][c] = B[b].m[r][c];"),),
                   "SharedMemoryRaceError", 3, block=(0, 0, 0),
                   what="No barrier after loading the shared matrices."),)),
    Case("gram_tiled", "team_sparse_linalg", "gram_tiled",
         lambda rng, s: Launch((-(-s[1] // 16), -(-s[1] // 16)), (16, 16),
                               (rng.standard_normal(s).astype(np.float32), np.zeros((s[1], s[1]), np.float32),
                                s[0], s[1])),
         lambda a, s: {1: a[0].astype(np.float64).T @ a[0]}, MN, rtol=1e-4, atol=1e-4,
         style="Gram matrix A^T A with padded 16 x 17 shared tiles"),
    Case("column_norms", "team_sparse_linalg", "column_norms",
         lambda rng, s: Launch((s[1],), (128,), (rng.standard_normal(s), np.zeros(s[1]), s[0], s[1])),
         lambda a, s: {1: np.linalg.norm(a[0], axis=0)}, MN, rtol=1e-12, style="double precision, a block per column"),
    Case("trisolve_lower", "team_sparse_linalg", "trisolve_lower", _tri, _tri_ref, (1, 4, 9), rtol=1e-4, atol=1e-4,
         style="forward substitution, one block per small system",
         bugs=(Bug("solution_read_unsynced",
                   (("        __syncthreads();\n    }\n    if (t < n) x[sys * n + t] = xs[t];",
                     "    }\n    if (t < n) x[sys * n + t] = xs[t];"),),
                   "SharedMemoryRaceError", 2, block=(0, 0, 0), array="xs",
                   what="The barrier after each unknown is gone: "
                        "other threads read xs before thread 0 wrote it."),)),
]
