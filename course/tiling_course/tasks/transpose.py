"""The block transpose task: each tile of A transposed in place (PMPP's chapter 5,
exercise 10), compared exactly."""
from dataclasses import dataclass

import numpy as np

from .. import matmul
from .base import Task, stores


@dataclass(frozen=True)
class BlockTranspose(Task):
    """Each BLOCK_WIDTH x BLOCK_WIDTH tile of A (height x width, row-major, both multiples
    of BLOCK_WIDTH) transposed in place, as PMPP's chapter 5 exercise 10 launches it:
    grid (width / BLOCK_WIDTH, height / BLOCK_WIDTH), blocks of BLOCK_WIDTH x BLOCK_WIDTH
    threads, arguments (A, width, height). `tile` is BLOCK_WIDTH (the `macro` option). It
    only moves numbers, so the result is compared exactly."""
    function: str = "block_transpose"
    macro: str = "BLOCK_WIDTH"
    rank = 2
    reference = "A with each tile transposed"
    result = "transpose"
    verdict = "transposes every tile of A in place, bit for bit,"

    @property
    def name(self):
        return self.function

    def default_shapes(self, tile):
        return [(tile, tile), (2 * tile, 3 * tile), (3 * tile, tile)]

    def describe(self, shape):
        return f"A of {shape[0]} x {shape[1]}"

    def size(self, shape):
        return f"{shape[0]}x{shape[1]}"

    def inputs(self, shape, rng):
        return (rng.uniform(-1, 1, shape).astype(np.float32),)

    def check_shape(self, shape, tile):
        """Raise ValueError if A's height or width is no multiple of BLOCK_WIDTH."""
        if len(shape) != 2 or shape[0] % tile or shape[1] % tile or not all(shape):
            raise ValueError(f"`{self.name}` transposes whole tiles: A's height and width must be positive "
                             f"multiples of {self.macro} ({tile}); got {' x '.join(map(str, shape))}")

    def compile(self, code, tile, backend, check):
        return matmul.build(code, self.function, matmul.tile_options(self.macro, tile, code), backend, check)

    def run(self, code, inputs, tile, backend, check, **options):
        self.check_shape(inputs[0].shape, tile)
        fn = self.compile(code, tile, backend, check)
        xp = np
        if fn.backend == "gpu":
            import cupy as xp
        A = xp.array(inputs[0], dtype=xp.float32, order="C")   # a copy, on the backend's device
        height, width = A.shape
        fn((width // tile, height // tile), (tile, tile), (A, np.int32(width), np.int32(height)), sync=True, **options)
        return A, fn

    def expected(self, A, tile):
        """A with each tile x tile tile transposed where it stands."""
        h, w = A.shape
        return A.reshape(h // tile, tile, w // tile, tile).transpose(0, 3, 2, 1).reshape(h, w)

    def compare(self, result, inputs, tile):
        ref = self.expected(inputs[0], tile)
        bad = result != ref
        if not bad.any():
            return None
        row, col = (int(i) for i in np.unravel_index(np.argmax(bad), bad.shape))   # the first, row by row
        return dict(array="A", count=int(bad.sum()), total=int(bad.size), row=row, col=col,
                    expected=float(ref[row, col]), got=float(result[row, col]))

    def writers(self, code, inputs, tile, row, col):
        block = (col // tile, row // tile, 0)
        A = inputs[0]
        _, fn = self.run(code, inputs, tile, "cpu", True, trace=[block[:2]])
        return block, (tile, tile), stores(matmul.take_report(fn), 0, row * A.shape[1] + col)   # A: its first array

    def tile_note(self, tiles):
        tiles = list(tiles)
        if len(tiles) == 1:
            return f"({self.macro} {tiles[0]})"
        return f"({self.macro} {' and '.join(map(str, tiles))}, each)"
