"""Transposes (src/transpose.cu): naive, shared tile, padded tile, diagonal reordering,
TILE_DIM x BLOCK_ROWS blocks, batched along z, in place, complex conjugate; rectangular
matrices of awkward sizes throughout."""
import numpy as np

from .case import Bug, Case, Launch

SRC = "transpose"
T = 16
RECT = ((1, 1), (17, 5), (16, 16), (45, 70), (100, 33), (64, 48))


def _cdiv(a, b):
    return -(-a // b)


def _rect_setup(tile, block):
    def setup(rng, shape):
        rows, cols = shape
        a = rng.standard_normal((rows, cols)).astype(np.float32)
        grid = (_cdiv(cols, tile), _cdiv(rows, tile), 1)[:len(block)]   # dim3 grid(nx / TILE, ny / TILE, 1)
        return Launch(grid, block, (np.zeros((cols, rows), np.float32), a, rows, cols))
    return setup


def _rect_reference(args, shape):
    return {0: args[1].T}


def _batched_setup(rng, shape):
    batch, rows, cols = shape
    a = rng.standard_normal((batch, rows, cols)).astype(np.float32)
    return Launch((_cdiv(cols, 32), _cdiv(rows, 32), batch), (32, 8), (np.zeros((batch, cols, rows), np.float32), a,
                                                                         rows, cols))


def _inplace_setup(rng, n):
    g = _cdiv(n, T)
    return Launch((g, g), (T, T), (rng.standard_normal((n, n)).astype(np.float32), n))


def _cplx_setup(rng, shape):
    rows, cols = shape
    a = rng.standard_normal((rows, cols, 2)).astype(np.float32)
    return Launch((_cdiv(cols, T), _cdiv(rows, T)), (T, T), (np.zeros((cols, rows, 2), np.float32), a, rows, cols))


def _cplx_reference(args, shape):
    a = args[1]
    z = a[..., 0] + 1j * a[..., 1].astype(np.float64)
    w = np.conj(z).T
    return {0: np.stack([w.real, w.imag], -1)}


CASES = [
    Case("tr_naive", SRC, "transpose_naive", _rect_setup(T, (T, T)), _rect_reference, RECT,
         style="NVIDIA transpose sample: transposeNaive (strided writes), rectangular with guards"),
    Case("tr_shared_tile", SRC, "transpose_tile", _rect_setup(T, (T, T)), _rect_reference, RECT,
         style="coalesced transpose through a TILE x TILE shared tile (bank conflicts left in)",
         bugs=(Bug("tile_read_without_barrier",
                   (("    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = idata[y * cols + x];\n"
                     "    __syncthreads();\n"
                     "    x = blockIdx.y * TILE + threadIdx.x;   // column",
                     "    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = idata[y * cols + x];\n"
                     "    x = blockIdx.y * TILE + threadIdx.x;   // column"),),
                   "SharedMemoryRaceError", (45, 70), block=(0, 0, 0), array="tile", index=(1, 0),
                   what="No barrier between filling the tile and reading it transposed: thread (1, 0) reads "
                        "tile[1][0] before thread (0, 1) has stored it."),)),
    Case("tr_padded_tile", SRC, "transpose_padded", _rect_setup(T, (T, T)), _rect_reference, RECT,
         style="Harris, 'An Efficient Matrix Transpose': tile[TILE][TILE + 1] against bank conflicts, unsigned indices",
         bugs=(Bug("output_stride_is_cols",
                   (("odata[(bx + ty) * rows + by + tx] = tile[tx][ty];",
                     "odata[(bx + ty) * cols + by + tx] = tile[tx][ty];"),),
                   "OutOfBoundsError", (17, 40), block=(1, 0, 0), thread=(0, 1, 0), array="odata", index=(680,),
                   what="The output's rows are `rows` long, not `cols`: block (1, 0)'s second row of threads "
                        "writes odata[17 * 40], past the 680 elements."),)),
    Case("tr_diagonal", SRC, "transpose_diagonal", _rect_setup(T, (T, T)), _rect_reference,
         ((1, 1), (48, 48), (30, 31), (45, 70), (70, 45), (100, 33)),
         style="NVIDIA transpose sample: transposeDiagonal block reordering (square and rectangular grids), `%=`"),
    Case("tr_block_rows", SRC, "transpose_block_rows", _rect_setup(32, (32, 8, 1)), _rect_reference,
         ((1, 1), (17, 5), (32, 32), (40, 50), (100, 33), (64, 96)),
         style="Harris transposeCoalesced: dim3 block(TILE_DIM, BLOCK_ROWS, 1), each thread looping j += BLOCK_ROWS, "
               "guarded",
         bugs=(Bug("row_guard_dropped_in_load",
                   (("        if (x < cols && y + j < rows) "
                     "tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];",
                     "        if (x < cols) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];"),),
                   "OutOfBoundsError", (40, 50), block=(0, 1, 0), thread=(0, 0, 0), array="idata", index=(2000,),
                   what="The load checks only the column: in the second row of tiles, thread (0, 0) at j = 8 "
                        "reads row 40 of 40."),)),
    Case("tr_batched_z", SRC, "transpose_batched", _batched_setup, lambda a, s: {0: np.transpose(a[1], (0, 2, 1))},
         ((1, 1, 1), (3, 40, 70), (2, 64, 32), (5, 33, 17)),
         style="batched transpose: blockIdx.z picks the matrix, per-matrix pointers, (size_t) offsets"),
    Case("tr_inplace_square", SRC, "transpose_inplace", _inplace_setup, lambda a, n: {0: a[0].T}, (1, 16, 45, 64, 100),
         style="in-place square transpose: tile pairs swapped by the blocks on and above the diagonal",
         bugs=(Bug("return_before_barrier",
                   (("    if (r1 < n && c1 < n) t1[ty][tx] = a[r1 * n + c1];",
                     "    if (r1 >= n || c1 >= n) return;\n    t1[ty][tx] = a[r1 * n + c1];"),),
                   "BarrierDivergenceError", 45, block=(2, 0, 0),
                   what="Threads past the edge return before the barrier: in block (2, 0), the first partial "
                        "tile, they leave while the others wait."),)),
    Case("tr_conj_float2", SRC, "conj_transpose_cplx", _cplx_setup, _cplx_reference, RECT,
         style="conjugate transpose of complex float2 (typedef cplx), tile of structs, in[i].x / .y"),
]
