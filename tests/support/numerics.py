"""The tests' random inputs and their comparison with NumPy in float64."""
import numpy as np

UNIT_ROUNDOFF = 2.0 ** -24  # float32


def random_matrix(rng, rows, cols):
    return rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.float32)


def assert_product(P, M, N):
    """P must equal M @ N computed in float64, within the rounding error bound of a
    float32 dot product of length k: |P - MN| <= 2 k u (|M| |N|) elementwise
    (u = 2^-24; the factor 2 covers fused and unfused multiply-adds alike)."""
    P = np.asarray(P, dtype=np.float64)
    M64, N64 = M.astype(np.float64), N.astype(np.float64)
    k = M.shape[1]
    ref = M64 @ N64
    bound = 2 * k * UNIT_ROUNDOFF * (np.abs(M64) @ np.abs(N64)) + 1e-30
    err = np.abs(P - ref)
    bad = np.argwhere(err > bound)
    assert bad.size == 0, (f"{len(bad)} elements differ from NumPy beyond the float32 bound, first at "
                           f"{tuple(bad[0])}: got {P[tuple(bad[0])]}, expected {ref[tuple(bad[0])]}")


def fma_exact32(a, b, c):
    """fma(a, b, c) for float32 operands, rounded once to float32 (exact rational arithmetic)."""
    from fractions import Fraction
    out = np.empty(len(a), np.float32)
    for i, (x, y, z) in enumerate(zip(a, b, c)):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        r = np.float32(float(exact))
        lo, hi = (np.nextafter(r, np.float32(-np.inf)), r) if Fraction(float(r)) > exact else \
                 (r, np.nextafter(r, np.float32(np.inf)))
        dlo, dhi = exact - Fraction(float(lo)), Fraction(float(hi)) - exact
        out[i] = lo if dlo < dhi or (dlo == dhi and not (lo.view(np.uint32) & 1)) else hi
    return out
