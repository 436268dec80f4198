"""Independent Python models of cuRAND's MRG32k3a and Sobol generators, from the published
algorithms (L'Ecuyer, "Good parameters and implementations for combined multiple recursive
random number generators", Operations Research 47(1), 1999; Bratley and Fox's Gray-code Sobol
construction with Joe and Kuo's direction numbers, new-joe-kuo-6.21201), with cuRAND's seeding
and output scalings as an H100 gave them (logs/2026-12-06-curand-generators.md). Python
integers do the modular matrix powers of the skip-ahead exactly, so nothing here shares code
with the CPU runtime's header."""
import numpy as np

M1, M2 = 4294967087, 4294944443
# x[n] = (1403580 x[n-2] - 810728 x[n-3]) mod m1, y[n] = (527612 y[n-1] - 1370589 y[n-3]) mod m2,
# as matrices on the state (oldest first).
A1 = ((0, 1, 0), (0, 0, 1), (-810728 % M1, 1403580, 0))
A2 = ((0, 1, 0), (0, 0, 1), (-1370589 % M2, 0, 527612))
SUBSEQUENCE, SEQUENCE = 2 ** 76, 2 ** 127


def _mat_mul(p, q, m):
    return tuple(tuple(sum(p[i][k] * q[k][j] for k in range(3)) % m for j in range(3)) for i in range(3))


def _mat_pow(a, n, m):
    r = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    while n:
        if n & 1:
            r = _mat_mul(r, a, m)
        a = _mat_mul(a, a, m)
        n >>= 1
    return r


def _apply(a, v, m):
    return [sum(a[i][k] * v[k] for k in range(3)) % m for i in range(3)]


class MRG32k3a:
    """curand_init(seed, subsequence, offset): 12345 in all six words, each multiplied (mod its
    modulus) by the seed's low or high half xored with 0x55555555 or 0xAAAAAAAA when the seed is
    not 0; then subsequence * 2^76 + offset steps ahead."""

    def __init__(self, seed, subsequence=0, offset=0):
        s1, s2 = [12345] * 3, [12345] * 3
        if seed:
            lo, hi = (seed & 0xFFFFFFFF) ^ 0x55555555, (seed >> 32) ^ 0xAAAAAAAA
            s1 = [lo * s1[0] % M1, hi * s1[1] % M1, lo * s1[2] % M1]
            s2 = [hi * s2[0] % M2, lo * s2[1] % M2, hi * s2[2] % M2]
        self.s1, self.s2 = s1, s2
        self.skip(subsequence * SUBSEQUENCE + offset)

    def skip(self, n):
        self.s1 = _apply(_mat_pow(A1, n, M1), self.s1, M1)
        self.s2 = _apply(_mat_pow(A2, n, M2), self.s2, M2)

    def next_z(self):
        """The combined value in [1, m1]: x - y mod m1, with m1 in place of 0."""
        self.s1 = _apply(A1, self.s1, M1)
        self.s2 = _apply(A2, self.s2, M2)
        return (self.s1[2] - self.s2[2]) % M1 or M1

    def raw(self, n):
        return [self.next_z() for _ in range(n)]


# Joe and Kuo's primitive polynomials (degree s, coefficients a) and initial direction numbers m
# for Sobol dimensions 2..8; dimension 1 is the identity (every m_k = 1).
JOE_KUO = [(1, 0, (1,)), (2, 1, (1, 3)), (3, 1, (1, 3, 1)), (3, 2, (1, 1, 1)), (4, 1, (1, 1, 3, 3)),
           (4, 4, (1, 3, 5, 13)), (5, 2, (1, 1, 5, 5, 17))]


def direction_vectors(dimension, bits=32):
    """The `bits` direction numbers v_k = m_k * 2^(bits - k) of a Sobol dimension (0-based, as
    cuRAND numbers them), m_k extended by the polynomial's recurrence."""
    if dimension == 0:
        m = [1] * bits
    else:
        s, a, m0 = JOE_KUO[dimension - 1]
        m = list(m0)
        for k in range(s, bits):
            v = m[k - s] ^ (m[k - s] << s)
            for j in range(1, s):
                if (a >> (s - 1 - j)) & 1:
                    v ^= m[k - j] << j
            m.append(v)
    return [m[k] << (bits - 1 - k) for k in range(bits)]


def sobol(vectors, index, scramble=0):
    """The Sobol value at `index` of one dimension: the direction numbers of the bits of index's
    Gray code, xored together (and with the scramble constant)."""
    x, g, k = scramble, index ^ (index >> 1), 0
    while g:
        if g & 1:
            x ^= vectors[k]
        g >>= 1
        k += 1
    return x


# ---- the output mappings -----------------------------------------------------------------------
MRG_NORM = 1.0 / M1   # a combined value z in [1, m1] is z times this, in (0, 1]


def mrg_uniform_double(z):
    return z * MRG_NORM


def mrg_bits(z):
    """curand's 32 bits: z times 1.000000048662 (about 2^32 / m1), truncated, at most 2^32 - 1."""
    return min(int(z * 1.000000048662), 0xFFFFFFFF)


def uniform32(x):
    """A 32-bit word in (0, 1] as a double: x * 2^-32 + 2^-33, exact."""
    return x * 2.0 ** -32 + 2.0 ** -33


def uniform32_double(x):
    """curand_uniform_double of a 32-bit Sobol point: x * 2^-32 + 2^-32, exact."""
    return x * 2.0 ** -32 + 2.0 ** -32


def uniform32_float(x):
    """... as a float: x converted to float (rounded to 24 bits), then x * 2^-32 + 2^-33 rounded
    once (a fused multiply-add)."""
    return np.float32(uniform32(float(np.float32(x))))


def uniform64_double(x):
    """A 64-bit word's top 53 bits in (0, 1): (x >> 11) * 2^-53 + 2^-54, exact in double."""
    return (x >> 11) * 2.0 ** -53 + 2.0 ** -54
