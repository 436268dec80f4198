"""Wrong kernels, each one of the book's kernels with one classic mistake, and what
checked mode (and compute-sanitizer on a GPU) should say about it.

Each is defined as an edit of the correct source in kernels/, so there is one
source of truth per kernel and the book can show each bug as a diff.

    from tiling_course import corpus
    bug = corpus.WRONG["no_first_barrier"]
    print(bug.source())                 # the edited CUDA C
    bug.run(backend="cpu", check=True)  # raises cudacheck.SharedMemoryRaceError
"""
from dataclasses import dataclass, field

import numpy as np

from . import matmul
from .measure import model

RESULTS_FILE = "wrong-results.json"   # in data/, written on a GPU by scripts/record_wrong_results.py


@dataclass(frozen=True)
class WrongKernel:
    name: str
    kernel: str            # the correct kernel it is an edit of (a key of matmul.KERNELS)
    what: str              # the mistake, in a sentence
    edits: tuple           # (old, new) pairs; each old text must occur in the source
    shape: tuple           # (m, k, n, tile) of the launch that shows the bug
    expect: str            # the exception checked mode raises
    details: dict = field(default_factory=dict)   # attributes the exception must carry

    def source(self):
        return matmul.apply_edits(matmul.source(self.kernel), self.edits, self.name, self.kernel)

    def line_of(self, text):
        """The 1-based line of the edited source where `text` first occurs."""
        src = self.source()
        return src[:src.index(text)].count("\n") + 1

    def inputs(self, rng=None):
        rng = rng or np.random.default_rng()
        m, k, n, _ = self.shape
        return (rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32))

    def run(self, backend="cpu", check=True, rng=None, **call_options):
        """Launch the wrong kernel on its shape (even one its correct kernel refuses);
        returns (M, N, P): the NumPy inputs and the product, a CuPy array on the GPU."""
        M, N = self.inputs(rng)
        tile = self.shape[3]
        P, _ = matmul.run(M, N, self.kernel, tile, backend, self.source(), check, check_shape=False,
                           **call_options)
        return M, N, P


# Lines of the book's kernels that the wrong kernels' edits replace.
TILED_FIRST_BARRIER = "        __syncthreads();  // read after write: the tiles are complete\n"
TILED_SECOND_BARRIER = "        __syncthreads();  // write after read: nobody still needs this phase's tiles\n"
BOUNDS_LOAD_M = "        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;\n"
BOUNDS_LOAD_N = "        Nds[ty][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;\n"
NAIVE_ROW = "    int row = blockIdx.y * blockDim.y + threadIdx.y;  // which element this thread computes\n"
NAIVE_COL = "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n"

WRONG = {w.name: w for w in [
    WrongKernel("no_block_idx", "naive", "The naive kernel with `row` and `col` taken from `threadIdx` alone: every "
                "block computes the same tile, so the same thread of every block writes the same element of P, "
                "and the rest of P is never written.",
                ((NAIVE_ROW, "    int row = threadIdx.y;  // which element this thread computes\n"),
                 (NAIVE_COL, "    int col = threadIdx.x;\n")),
                (32, 32, 32, 16), "GlobalMemoryRaceError",
                # Which thread and which two blocks depend on how many workers ran the blocks;
                # tests/runtime/test_checked.py holds that the two are one thread of two blocks.
                dict(array="P", hazard="write-write", op="write", other_op="write")),
    WrongKernel("no_guards", "tiled", "Chapter 2's kernel with the number of tiles rounded up, as the lecture's "
                "step 2 does, but without the guards of its step 3a: for a Width that is not a multiple of the "
                "tile, the last phase reads past the matrix.",
                (("    int num_tiles = Width / TILE_WIDTH;\n",
                  "    int num_tiles = (Width + TILE_WIDTH - 1) / TILE_WIDTH;\n"),),
                (20, 20, 20, 16), "OutOfBoundsError",
                dict(array="N", index=(400,), op="read", thread=(0, 4, 0), block=(0, 0, 0))),
    WrongKernel("no_first_barrier", "tiled", "The first __syncthreads() is missing: threads compute from tiles "
                "that others have not finished loading.",
                ((TILED_FIRST_BARRIER, ""),), (32, 32, 32, 16), "SharedMemoryRaceError",
                dict(array="Mds", index=(0, 1), thread=(1, 0, 0), other_thread=(0, 0, 0), block=(0, 0, 0),
                     hazard="read after write")),
    WrongKernel("no_second_barrier", "tiled", "The second __syncthreads() is missing: fast threads load the next "
                "phase's tiles over values slow threads still need.",
                ((TILED_SECOND_BARRIER, ""),), (32, 32, 32, 16), "SharedMemoryRaceError",
                dict(array="Mds", index=(0, 0), thread=(1, 0, 0), other_thread=(0, 0, 0), block=(0, 0, 0),
                     hazard="write after read")),
    WrongKernel("barrier_in_branch", "tiled_bounds", "The first barrier sits inside `if (row < m)`: threads "
                "below the matrix skip it and wait at the second one instead.",
                (("        __syncthreads();\n", "        if (row < m)\n            __syncthreads();\n"),),
                (20, 20, 20, 16), "BarrierDivergenceError", dict(block=(0, 1, 0))),
    WrongKernel("early_return", "tiled_bounds", "Threads outside P return before the tile loop, so they never "
                "reach the barriers the others wait at (and never load their share of the tiles).",
                (("    float sum = 0.0f;\n",
                  "    if (row >= m || col >= n)\n        return;\n    float sum = 0.0f;\n"),),
                (20, 20, 20, 16), "BarrierDivergenceError", dict(block=(1, 0, 0))),
    WrongKernel("no_zero_fill", "tiled_bounds", "The guards skip loads past the edge but store nothing instead "
                "(the student notes' version): those tile elements keep stale or uninitialized values.",
                ((BOUNDS_LOAD_M, "        if (row < m && mcol < k)\n            Mds[ty][tx] = M[row * k + mcol];\n"),
                 (BOUNDS_LOAD_N, "        if (nrow < k && col < n)\n            Nds[ty][tx] = N[nrow * n + col];\n")),
                (20, 20, 20, 16), "UninitializedReadError", dict(array="Nds", block=(1, 0, 0))),
    WrongKernel("off_by_one_guard", "tiled_bounds", "The guards use <= where < is meant: the last thread in "
                "each direction reads one element past the matrix.",
                ((BOUNDS_LOAD_M, BOUNDS_LOAD_M.replace("row < m && mcol < k", "row <= m && mcol <= k")),
                 (BOUNDS_LOAD_N, BOUNDS_LOAD_N.replace("nrow < k && col < n", "nrow <= k && col <= n"))),
                (20, 20, 20, 16), "OutOfBoundsError",
                dict(array="N", index=(400,), op="read", thread=(0, 4, 0), block=(0, 0, 0))),
    WrongKernel("transposed_output", "tiled_bounds", "P is written at [col][row] instead of [row][col]: with "
                "more columns than rows the writes run past the end of P.",
                (("        P[row * n + col] = sum;\n", "        P[col * n + row] = sum;\n"),),
                (16, 16, 40, 8), "OutOfBoundsError",
                dict(array="P", index=(640,), op="write", thread=(0, 0, 0), block=(2, 0, 0))),
    WrongKernel("small_shared_tile", "tiled", "Mds has half as many rows as the block has threads: the lower "
                "half of the block writes past it.",
                (("    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];\n",
                  "    __shared__ float Mds[TILE_WIDTH / 2][TILE_WIDTH];\n"),),
                (32, 32, 32, 16), "OutOfBoundsError",
                dict(array="Mds", index=(8, 0), op="write", thread=(0, 8, 0), block=(0, 0, 0))),
    WrongKernel("wrong_stride_into_N", "tiled", "N is indexed with a row stride of Width + 1: the last rows "
                "reach past the end of N.",
                (("N[(ph * TILE_WIDTH + ty) * Width + col]", "N[(ph * TILE_WIDTH + ty) * (Width + 1) + col]"),),
                (32, 32, 32, 16), "OutOfBoundsError",
                dict(array="N", index=(1024,), op="read", thread=(1, 15, 0), block=(0, 0, 0))),
    WrongKernel("no_syncwarp", "coalescedMultiply", "The Best Practices Guide's coalescedMultiply as printed, "
                "with no barrier: it relied on warps running in lock step, which GPUs no longer guarantee.",
                (("    __syncwarp();\n", ""),), (32, 16, 32, 16), "SharedMemoryRaceError",
                dict(array="aTile", index=(0, 1), thread=(1, 0, 0), other_thread=(0, 0, 0), block=(0, 0, 0),
                     hazard="read after write")),
]}


def stored_gpu_result(name):
    """(P, label) of a wrong kernel's unchecked run on the reference GPU, recorded by
    scripts/record_wrong_results.py with the inputs of inputs(np.random.default_rng(0)),
    or None if the book holds no such record."""
    run = model.stored_run(RESULTS_FILE)      # a run of outputs: each wrong kernel's P in its extra
    record = next((r for r in run.records if r.kernel == name), None) if run else None
    if record is None:
        return None
    meta, sw = run.meta, run.meta.software
    label = f"{meta.device}, measured {meta.day} (CUDA {sw['cuda_runtime']}, CuPy {sw['cupy']})"
    return np.array(record.extra["P"], dtype=np.float32), label
