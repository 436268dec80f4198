"""The ladder of kernels from tiled toward cuBLAS (kernels/ladder*.cu): every rung
against NumPy in float64 on awkward shapes (1 x 1 x 1, primes, non-multiples of the
block tile, m != k != n, k or n not a multiple of 4), on the CPU runtime and in checked
mode with no finding; the float4 paths taken exactly where they may be; tuning variants
of the macros; and, where there is a GPU, the same shapes there."""
import re

import numpy as np
import pytest

from cudacheck import RawModule
from tests.support.numerics import assert_product, random_matrix
from tiling_course import matmul, tryout

RUNGS = [name for name in matmul.KERNELS if name.startswith("ladder")]

# (m, k, n). The block tiles are 32 x 32 (rung 1), 64 x 64 (rung 2) and 128 x 128.
SHAPES = [
    (1, 1, 1), (2, 3, 5), (7, 13, 11), (31, 37, 41),   # tiny and prime
    (64, 33, 17), (100, 7, 129), (3, 130, 5),          # m != k != n, odd k
    (20, 16, 24), (17, 64, 36),                        # k and n multiples of 4, m, n not of a tile
    (33, 12, 130), (65, 130, 64),                      # n = 2 mod 4; k = 2 mod 4
    (128, 128, 128), (129, 128, 131),                  # one whole block tile; one element more
]


def test_rungs_are_registered():
    assert RUNGS == ["ladder1_coarsened", "ladder2_regtile1d", "ladder3_regtile2d", "ladder4_vectorized",
                     "ladder5_warptiled", "ladder6_pipelined"]


def _defaults(kernel):
    """The -D macros' defaults of a rung's source, as ints where they are numbers."""
    return {name: int(value) for name, value in
            re.findall(r"#ifndef (\w+)\n#define \1 (\d+)\n#endif", matmul.source(kernel))}


@pytest.mark.parametrize("kernel", RUNGS)
def test_spec_matches_the_sources_defaults(kernel):
    """geometry() launches what the compiled defaults expect: the block's threads and the
    tile of P a block computes."""
    d, spec = _defaults(kernel), matmul.KERNELS[kernel]
    if kernel == "ladder1_coarsened":
        tile_m = tile_n = d["TILE"]
        threads = d["TILE"] * d["TILE"] // d["COARSE"]
        assert spec.block == (d["TILE"], d["TILE"] // d["COARSE"])
    else:
        tile_m, tile_n = d["BM"], d["BN"]
        if kernel == "ladder2_regtile1d":
            threads = d["BM"] * d["BN"] // d["TM"]
        elif kernel in ("ladder5_warptiled", "ladder6_pipelined"):
            threads = 32 * (d["BM"] // d["WM"]) * (d["BN"] // d["WN"])
        else:
            threads = d["BM"] * d["BN"] // (d["TM"] * d["TN"])
        assert spec.block == (threads, 1)
    assert (spec.tile_m, spec.tile_n) == (tile_m, tile_n)
    assert spec.block[0] * spec.block[1] == threads <= 1024
    grid, block, shared = matmul.geometry(kernel, 300, 5, 70, 16)   # tile (16) does not apply
    assert grid == (-(-70 // tile_n), -(-300 // tile_m)) and block == spec.block
    if spec.pipelined:   # its dynamic shared memory: STAGES slices at the source's defaults
        assert {m: d[m] for m in matmul.PIPELINE_DEFAULTS[kernel]} == matmul.PIPELINE_DEFAULTS[kernel]
        assert shared == d["STAGES"] * (d["BK"] * (d["BM"] + d["MPAD"]) + d["BK"] * d["BN"]) * 4
    else:
        assert shared == 0


def test_existing_kernels_keep_their_geometry():
    assert matmul.geometry("tiled", 64, 64, 64, 16) == ((4, 4), (16, 16), 0)
    assert matmul.geometry("tiled_bounds", 100, 7, 129, 8) == ((17, 13), (8, 8), 0)
    assert matmul.geometry("tiled_dynamic", 31, 37, 41, 16) == ((3, 2), (16, 16), 2 * 16 * 16 * 4)


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("kernel", RUNGS)
def test_rung_on_the_cpu_runtime(kernel, m, k, n, rng):
    M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
    assert_product(matmul.multiply(M, N, kernel=kernel, backend="cpu"), M, N)


def _checked_run(fn, kernel, M, N, geometry, rng):
    """One checked launch under a random schedule (a finding raises); returns P, the report."""
    P = np.full((M.shape[0], N.shape[1]), np.nan, np.float32)   # every element must be written
    grid, block, shared = geometry
    fn(grid, block, matmul.arguments(kernel, M, N, P), shared_mem=shared,
       schedule="random", seed=int(rng.integers(1 << 30)))
    return P, fn.last_launch


@pytest.mark.parametrize("kernel", RUNGS)
def test_rung_in_checked_mode_has_no_finding(kernel, rng):
    """No out-of-bounds access, race, divergent barrier or uninitialized read, in any
    block of any of the shapes, under random thread orders."""
    fn = matmul.compile(kernel, 16, "cpu", check=True)
    for m, k, n in SHAPES:
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        P, _ = _checked_run(fn, kernel, M, N, matmul.geometry(kernel, m, k, n, 16), rng)
        assert_product(P, M, N)


@pytest.mark.parametrize("kernel", ["ladder4_vectorized", "ladder5_warptiled"])
def test_float4_exactly_where_whole_and_aligned(kernel, rng):
    """With k and n multiples of 4 every global access is a float4 (a quarter of the
    accesses); with k = n = 2 mod 4 none of M's, N's or P's can be, and every element is
    accessed on its own."""
    fn = matmul.compile(kernel, 16, "cpu", check=True)
    for (m, k, n), vec in [((128, 64, 128), True), ((128, 66, 130), False)]:
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        geom = matmul.geometry(kernel, m, k, n, 16)
        P, report = _checked_run(fn, kernel, M, N, geom, rng)
        assert_product(P, M, N)
        bx, by = geom[0]
        counts = report.global_counts
        # each block reads its rows of M and its columns of N once; in-bounds elements only
        m_reads, n_reads = m * k * bx, k * n * by
        got = (counts["M"].loads, counts["N"].loads, counts["P"].stores)
        if vec:
            assert got == (m_reads // 4, n_reads // 4, m * n // 4)
        else:
            assert got == (m_reads, n_reads, m * n)


def test_double_buffering_needs_its_one_barrier(rng):
    """Rung 5 has one __syncthreads() per slice of k; without it checked mode finds the
    race between the stores into one copy and the reads of it."""
    src = matmul.source("ladder5_warptiled")
    barrier = "        __syncthreads();\n        buf ^= 1;\n"
    assert src.count(barrier) == 1
    fn = RawModule(src.replace(barrier, "        buf ^= 1;\n"), backend="cpu", check=True).get_function(
        "matmul_ladder5_warptiled")
    M, N = random_matrix(rng, 40, 40), random_matrix(rng, 40, 40)
    with pytest.raises(Exception, match="race"):
        _checked_run(fn, "ladder5_warptiled", M, N, matmul.geometry("ladder5_warptiled", 40, 40, 40, 16), rng)


# Other settings of rung 5's macros (the tuning space): (options, threads, BM, BN).
VARIANTS = [
    (("-DBK=8",), 256, 128, 128),
    (("-DWM=64", "-DWN=32", "-DWNITER=1"), 256, 128, 128),
    (("-DBM=64", "-DBN=128", "-DBK=16", "-DWM=32", "-DWN=32", "-DWNITER=1", "-DMINBLOCKS=1"), 256, 64, 128),
    (("-DBM=256", "-DBK=16", "-DMPAD=0", "-DMINBLOCKS=1"), 512, 256, 128),   # 48 KB: the static limit
]


@pytest.mark.parametrize("options,threads,bm,bn", VARIANTS)
def test_warptiled_variants_in_checked_mode(options, threads, bm, bn, rng):
    fn = RawModule(matmul.source("ladder5_warptiled"), options=options, backend="cpu", check=True).get_function(
        "matmul_ladder5_warptiled")
    for m, k, n in [(1, 1, 1), (31, 37, 41), (bm + 3, 34, bn - 2), (bm, 48, 2 * bn)]:
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        P, _ = _checked_run(fn, "ladder5_warptiled", M, N, ((-(-n // bn), -(-m // bm)), (threads, 1), 0), rng)
        assert_product(P, M, N)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", RUNGS)
def test_rung_on_gpu(kernel, rng):
    import cupy
    for m, k, n in SHAPES + [(1000, 3000, 500), (2047, 2049, 2051), (1024, 1024, 1024)]:
        M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
        P = cupy.full((m, n), cupy.nan, cupy.float32)
        matmul.multiply(cupy.asarray(M), cupy.asarray(N), kernel=kernel, backend="gpu", P=P)
        assert_product(P.get(), M, N)


def test_the_checker_names_the_thread_that_stores_an_element_by_the_kernels_geometry(rng):
    """Rung 1 runs blocks of 32 x 8 threads, each storing four elements of one column, rows
    TILE/COARSE = 8 apart: the checker's feedback names that thread, not one of a 32 x 32 block."""
    launch = matmul.Launch("ladder1_coarsened")
    M, N = random_matrix(rng, 70, 20), random_matrix(rng, 20, 50)
    for row, col in [(0, 0), (37, 45), (69, 33), (int(rng.integers(70)), int(rng.integers(50)))]:
        block, shape, threads = tryout.writers(matmul.source(launch.kernel), launch, M, N, 32, row, col)
        assert shape == (32, 8) and block == (col // 32, row // 32, 0)
        assert threads == [(col % 32, row % 32 % 8, 0)], (row, col, threads)


@pytest.mark.parametrize("kernel", RUNGS)
def test_the_thread_work_figure_shows_every_element_a_thread_computes(kernel):
    """Chapter 6's figure: each traced thread owns tile_m x tile_n / threads-per-block elements of
    P. Rungs 4 and 5 store them as float4s, which the figure must count as four elements each."""
    from tiling_course import figures
    spec = matmul.spec(kernel)
    owned = spec.tile_m * spec.tile_n // (spec.block[0] * spec.block[1])
    fig = figures.thread_work(kernel)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    counts = [int(re.search(r": (\d+) elements of P", label).group(1)) for label in labels]
    assert counts == [owned, owned], (kernel, labels)
