"""What the checker (tiling_course.tryout.run) tries a reader's kernel on: a task says
what the kernel must compute, how it is launched and how its result is judged.

    from tiling_course import hopper, matmul, tasks, tryout
    tryout.run(src, "tiled")                                   # a matrix product of the book
    tryout.run(src, tasks.Matmul(matmul.Launch("tiled", function="mine")))   # the same, spelled out
    tryout.run(src, tasks.BlockTranspose(), tile=16)           # each tile of A transposed in place
    tryout.run(src, tasks.Histogram(), tile=128)               # values counted into bins
    tryout.run(src, tasks.HopperMatmul("matmul_tma_wgmma", "fp16"), gpu=hopper.runs_here())

tryout.run is one loop over shapes and places (checked mode on the CPU, then the GPU) for
every task; a task supplies what differs between them:

    name                         the __global__ function, for the messages
    rank                         numbers in a shape: 3 (m, k, n) or 2 (height, width; values, bins)
    default_shapes(tile)         the shapes to try when the caller gives none
    describe(shape), size(shape) the shape after "on" and "cannot take" ("16x16 times 16x16",
                                 "A of 32 x 48"), and in a pass's list ("16x16·16x16", "32x48")
    inputs(shape, rng)           the input arrays (NumPy: float32, the histogram's values int32);
                                 a kernel that works in place (the transpose) runs on a copy
    run(code, inputs, tile, backend, check, **options) -> (result, Function)
                                 the kernel launched on copies of the inputs (CuPy arrays on
                                 the GPU backend; the result stays there); ValueError for a
                                 shape it cannot take; options go to a checked launch (trace=)
    compile(code, tile, backend, check)
                                 the cudacheck Function, built once per source and options
    compare(result, inputs, tile) None if the result (NumPy) is right, else a dict on one
                                 wrong element: array, row, col, expected, got, count, total,
                                 and `element`, how to write it, where that is not array[row][col]
    reference, result            what compare measures against, and what the kernel computes
                                 (a requirement's failure says it "computes the right product")
    writers(code, inputs, tile, row, col) -> (block, block shape, threads)
                                 who stores that element, from a checked run tracing its block
    holder                       which block that is, in words ("whose tile holds it")
    tile_note(tiles), verdict    the pass message's words on the tile and on the result

An exercise names its task in its `launch` table (from_table).

The tasks, one module each: base.py (Task, the interface above), matrix.py (Matmul,
TensorCoreMatmul), hopper.py (HopperMatmul: a kernel of kernels/hopper.cu), transpose.py
(BlockTranspose), histogram.py (Histogram); all of them importable from here.
"""
from .. import matmul
from .base import Task, stores
from .histogram import Histogram
from .hopper import HopperMatmul
from .matrix import (
    UNIT_ROUNDOFF,
    Matmul,
    TensorCoreMatmul,
    compare,
    default_shapes,
    product,
    tolerance,
    writers,
)
from .transpose import BlockTranspose

__all__ = ["TASKS", "UNIT_ROUNDOFF", "BlockTranspose", "Histogram", "HopperMatmul", "Matmul", "Task",
           "TensorCoreMatmul", "compare", "default_shapes", "from_table", "product", "stores", "tolerance", "writers"]

TASKS = {"matmul": Matmul, "block_transpose": BlockTranspose, "histogram": Histogram, "hopper": HopperMatmul}


def from_table(table):
    """The task an exercise's `launch` table names: without `task` (or with task =
    "matmul") a matrix product, the other keys a matmul.Launch's ({kernel = "tiled",
    function = ...}); with task = "block_transpose" or "histogram", BlockTranspose's or
    Histogram's ({function = ...}); with task = "hopper", HopperMatmul's ({kernel =
    "matmul_tma_wgmma", precision = "fp16"}). KeyError, TypeError or ValueError for what is
    not one of them."""
    table = dict(table)
    name = table.pop("task", "matmul")
    if name not in TASKS:
        raise KeyError(f"no task {name!r}; the tasks are {', '.join(TASKS)}")
    if name == "matmul":
        launch = matmul.Launch(**table)
        matmul.spec(launch.kernel)   # KeyError for a kernel the book does not have
        return product(launch)       # a tensor-core kernel's at its default precision
    return TASKS[name](**table)
