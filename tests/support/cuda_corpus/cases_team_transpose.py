"""Transposes (src/team_transpose.cu) on rectangular, non-multiple shapes."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES = ((1, 1), (32, 32), (37, 70), (64, 33), (96, 96))
SQUARE = ((32, 32), (64, 64), (96, 96))


def _setup(dtype=np.float32, copy=False):
    def setup(rng, shape):
        h, w = shape
        x = (rng.standard_normal((h, w)) if dtype != np.int32 else rng.integers(-99, 99, (h, w))).astype(dtype)
        out = np.zeros((h, w) if copy else (w, h), dtype)
        return Launch((-(-w // 32), -(-h // 32)), (32, 8), (out, x, w, h))
    return setup


def _ref(args, shape):
    return {0: args[1].T}


def _bug_no_barrier(kernel_marker):
    return Bug("no_barrier", ((f"{kernel_marker}\n    __syncthreads();", kernel_marker),), "SharedMemoryRaceError",
               (64, 64), block=(0, 0, 0), array="tile",
               what="The barrier between filling the tile and reading it is gone.")


CASES = [
    Case("transpose_naive", "team_transpose", "transpose_naive", _setup(), _ref, SHAPES,
         style="NVIDIA transpose sample: naive (uncoalesced writes)",
         bugs=(Bug("guard_on_wrong_axis", (("        if (x < width && y + j < height) odata[x * height + (y + j)]",
                                            "        if (x < width && y + j < width) odata[x * height + (y + j)]"),),
                   "OutOfBoundsError", (40, 72), block=(0, 1, 0), thread=(0, 0, 0), array="idata",
                   what="The row guard compares with the width: rows past the matrix are read."),)),
    Case("transpose_coalesced", "team_transpose", "transpose_coalesced", _setup(), _ref, SHAPES,
         style="NVIDIA transpose sample: coalesced through a shared tile",
         bugs=(Bug("no_barrier",
                   (("        if (x < width && y + j < height) "
                     "tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];\n"
                     "    __syncthreads();\n"
                     "    x = blockIdx.y * TILE_DIM + threadIdx.x;\n"
                     "    y = blockIdx.x * TILE_DIM + threadIdx.y;\n"
                     "    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)\n"
                     "        if (x < height && y + j < width) "
                     "odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
                     "}\n\n// One",
                     "        if (x < width && y + j < height) "
                     "tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];\n"
                     "    x = blockIdx.y * TILE_DIM + threadIdx.x;\n"
                     "    y = blockIdx.x * TILE_DIM + threadIdx.y;\n"
                     "    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)\n"
                     "        if (x < height && y + j < width) "
                     "odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
                     "}\n\n// One"),),
                   "SharedMemoryRaceError", (64, 64), block=(0, 0, 0), array="tile",
                   what="The barrier between filling the tile and reading it is gone."),)),
    Case("transpose_no_bank_conflicts", "team_transpose", "transpose_no_bank_conflicts", _setup(), _ref, SHAPES,
         style="NVIDIA transpose sample: padded tile [TILE_DIM][TILE_DIM + 1]",
         bugs=(Bug("unguarded_store",
                   (("    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)\n"
                     "        if (x < height && y + j < width) "
                     "odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
                     "}\n\n// Diagonal",
                     "    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)\n"
                     "        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
                     "}\n\n// Diagonal"),),
                   "OutOfBoundsError", (37, 70), block=(2, 0, 0), thread=(0, 0, 0), array="odata",
                   what="The output guard is gone: "
                        "the blocks at the edge write past the transposed matrix."),)),
    Case("transpose_diagonal", "team_transpose", "transpose_diagonal", _setup(), _ref, SQUARE,
         style="NVIDIA transpose sample: diagonal block reordering"),
    Case("copy_shared", "team_transpose", "copy_shared", _setup(np.int32, copy=True), lambda a, s: {0: a[1]}, SHAPES,
         style="NVIDIA transpose sample: copy through shared memory (the bandwidth reference)"),
    Case("transpose_double16", "team_transpose", "transpose_double16",
         lambda rng, s: Launch((-(-s[1] // 16), -(-s[0] // 16)), (16, 16),
                               (np.zeros((s[1], s[0])), rng.standard_normal(s), s[0], s[1])),
         lambda a, s: {0: a[1].T}, SHAPES, style="double-precision 16 x 16 tile transpose",
         bugs=(Bug("tile_without_padding_overrun",
                   (("    __shared__ double t[16][17];", "    __shared__ double t[16][15];"),),
                   "OutOfBoundsError", (32, 32), block=(0, 0, 0), thread=(15, 0, 0), array="t", index=(0, 15),
                   what="The tile was declared one column short instead of one column padded."),)),
]
