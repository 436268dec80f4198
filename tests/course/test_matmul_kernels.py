"""Every kernel of the book against NumPy in float64, on fresh random inputs and
awkward shapes: 1 x 1, primes, non-multiples of the tile, m != k != n, tiles 2 to 32."""
import numpy as np
import pytest

from tests.support.numerics import assert_product, random_matrix
from tiling_course import matmul

TILES = (2, 4, 8, 16, 32)
SQUARE = (1, 2, 7, 31, 64, 97)


def run_case(kernel, m, k, n, tile, backend, rng):
    M, N = random_matrix(rng, m, k), random_matrix(rng, k, n)
    P = matmul.multiply(M, N, kernel=kernel, tile=tile, backend=backend)
    if backend == "gpu":
        P = P.get()
    assert_product(P, M, N)


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("width", SQUARE)
def test_naive(width, tile, rng):
    run_case("naive", width, width, width, tile, "cpu", rng)


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("tiles_per_side", (1, 3, 5))
def test_tiled(tile, tiles_per_side, rng):
    w = tile * tiles_per_side
    run_case("tiled", w, w, w, tile, "cpu", rng)


def test_tiled_refuses_a_width_that_is_not_a_multiple():
    with pytest.raises(ValueError, match="multiple of the tile"):
        matmul.multiply(np.ones((10, 10)), np.ones((10, 10)), kernel="tiled", tile=4, backend="cpu")


RECTANGULAR = [(1, 1, 1), (1, 13, 1), (13, 1, 7), (17, 5, 3), (31, 37, 41), (64, 33, 17), (100, 7, 129), (3, 200, 5)]


@pytest.mark.parametrize("kernel", ["tiled_bounds", "tiled_dynamic"])
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("m,k,n", RECTANGULAR)
def test_bounds_checked_kernels(kernel, m, k, n, tile, rng):
    run_case(kernel, m, k, n, tile, "cpu", rng)


@pytest.mark.parametrize("kernel", ["simpleMultiply", "coalescedMultiply", "sharedABMultiply"])
@pytest.mark.parametrize("tile", (4, 8, 16, 32))
@pytest.mark.parametrize("m_tiles,n_tiles", [(1, 1), (3, 2), (1, 5)])
def test_best_practices_kernels(kernel, tile, m_tiles, n_tiles, rng):
    run_case(kernel, m_tiles * tile, tile, n_tiles * tile, tile, "cpu", rng)


def test_choose_tile_fits_the_limits():
    tile = matmul.choose_tile("cpu")
    assert tile == 32 and tile * tile <= 1024 and 2 * tile * tile * 4 <= 48 * 1024


@pytest.mark.gpu
@pytest.mark.parametrize("kernel,m,k,n,tile", [
    ("naive", 97, 97, 97, 16), ("tiled", 96, 96, 96, 32), ("tiled_bounds", 100, 7, 129, 8),
    ("tiled_dynamic", 31, 37, 41, 16), ("simpleMultiply", 64, 16, 48, 16),
    ("coalescedMultiply", 64, 32, 96, 32), ("sharedABMultiply", 32, 8, 16, 8)])
def test_kernels_on_gpu(kernel, m, k, n, tile, rng):
    run_case(kernel, m, k, n, tile, "gpu", rng)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", matmul.FP32_KERNELS)
def test_kernels_match_cublas(kernel, rng):
    """Each FP32 kernel against cuBLAS (cupy.matmul, no TF32) at a size that fits every
    kernel. (The tensor-core kernels: test_beyond_ladder.py, at their precisions.)"""
    import cupy
    tile = 16
    m, k, n = (256, 256, 256) if matmul.KERNELS[kernel].shapes is not matmul.Shapes.TILE_INNER else (256, tile, 256)
    M, N = cupy.asarray(random_matrix(rng, m, k)), cupy.asarray(random_matrix(rng, k, n))
    P = matmul.multiply(M, N, kernel=kernel, tile=tile, backend="gpu")
    ref = cupy.matmul(M, N)
    assert_product(P.get(), M.get(), N.get())
    assert float(cupy.abs(P - ref).max()) < 1e-3
