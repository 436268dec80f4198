"""Real runs, recorded: the book's tables and figures of who accesses what come from
checked-mode traces of the book's kernels, not from drawings."""
from functools import lru_cache

import numpy as np

from . import matmul


def inputs(m, k=None, n=None, seed=0):
    """The random m x k and k x n float32 matrices that record() runs on."""
    k, n = k or m, n or m
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (m, k)).astype(np.float32),
            rng.uniform(-1, 1, (k, n)).astype(np.float32))


def record(kernel, m, tile, k=None, n=None, blocks=None, threads=None, seed=0):
    """Run one of the book's kernels in checked mode on inputs(m, k, n, seed),
    tracing `blocks` (default: all); returns (LaunchReport, P)."""
    k, n = k or m, n or m
    M, N = inputs(m, k, n, seed)
    if blocks is None:
        grid = matmul.geometry(kernel, m, k, n, tile)[0]
        blocks = [(x, y) for y in range(grid[1]) for x in range(grid[0])]
    P, report = matmul.run_checked(M, N, kernel, tile, trace=blocks, trace_threads=threads)
    return report, P


@lru_cache(maxsize=None)
def counts(kernel, width, tile, k=None, n=None):
    """The LaunchReport (access counts) of one checked run; the counts do not depend on
    the inputs, so each (kernel, shape, tile) runs once per process."""
    return record(kernel, width, tile, k, n, blocks=[])[0]


def rc(index, width):
    """A flat row-major index as (row, column)."""
    return divmod(int(index), width)
