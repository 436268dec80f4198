"""The histogram task: values counted into bins, one thread per value, compared exactly."""
from dataclasses import dataclass

import numpy as np

from .. import matmul
from .base import Task, stores


@dataclass(frozen=True)
class Histogram(Task):
    """hist[b] = how many of the n values in `data` equal b, for bins b = 0 .. bins - 1
    (every value is a bin index), one thread per value: grid ceil(n / tile), blocks of
    `tile` threads, arguments (data, hist, n), hist zeroed before the launch. The shape is
    (n, bins). Counts are compared exactly. Threads of a block take turns on the CPU
    runtime, so a count that two threads update without an atomic comes out right there
    and loses updates on a GPU: only the checked run shows the race."""
    function: str = "histogram"
    rank = 2
    reference = "NumPy's bincount"
    result = "counts"
    verdict = "counts every value exactly"
    holder = "which holds a value of that bin"

    @property
    def name(self):
        return self.function

    def default_shapes(self, tile):
        return [(1, 16), (3 * tile + 5, 16), (5 * tile - 3, 3)]

    def describe(self, shape):
        n, bins = shape
        return f"{n} value{'s' if n != 1 else ''} in {bins} bins"

    def size(self, shape):
        return self.describe(shape)

    def inputs(self, shape, rng):
        """The values, and the histogram as the launch receives it: zeros (copied for each run)."""
        n, bins = shape
        return rng.integers(0, bins, n).astype(np.int32), np.zeros(bins, np.uint32)

    def check_shape(self, shape):
        """Raise ValueError for a histogram of no values or no bins."""
        if len(shape) != 2 or not all(shape):
            raise ValueError(f"a histogram needs at least one value and one bin; got {' x '.join(map(str, shape))}")

    def compile(self, code, tile, backend, check):
        return matmul.build(code, self.function, (), backend, check)

    def run(self, code, inputs, tile, backend, check, **options):
        data, empty = inputs
        self.check_shape((data.size, empty.size))
        fn = self.compile(code, tile, backend, check)
        xp = np
        if fn.backend == "gpu":
            import cupy as xp
        data, hist = xp.asarray(data, dtype=xp.int32), xp.array(empty, dtype=xp.uint32)   # hist: a copy
        n = data.shape[0]
        fn((-(-n // tile),), (tile,), (data, hist, np.int32(n)), sync=True, **options)
        return hist, fn

    def compare(self, result, inputs, tile):
        data, empty = inputs
        ref = self.expected(data, empty.size)
        bad = np.asarray(result) != ref
        if not bad.any():
            return None
        b = int(np.argmax(bad))
        return dict(array="hist", count=int(bad.sum()), total=int(bad.size), row=0, col=b, element=f"hist[{b}]",
                    expected=float(ref[b]), got=float(result[b]))

    @staticmethod
    def expected(data, bins):
        return np.bincount(data, minlength=bins).astype(np.uint32)

    def writers(self, code, inputs, tile, row, col):
        """The threads that store hist[col] in the block of the first value in that bin."""
        first = np.flatnonzero(inputs[0] == col)
        block = (int(first[0]) // tile if first.size else 0, 0, 0)
        _, fn = self.run(code, inputs, tile, "cpu", True, trace=[block[:2]])
        return block, (tile, 1), stores(matmul.take_report(fn), 1, col)   # hist is its second array

    def tile_note(self, tiles):
        tiles = list(tiles)
        return f"({' and '.join(map(str, tiles))} threads per block{', each' if len(tiles) > 1 else ''})"
