"""Element-wise kernels (src/team_elementwise.cu)."""
import numpy as np

from .case import Bug, Case, Launch

N = (1, 7, 128, 1001)


def _f(rng, n, k=1):
    return [rng.standard_normal(n).astype(np.float32) for _ in range(k)]


def _grid(n, b=128):
    return (max(1, -(-n // b)),)


def _horner_case():
    held = {}

    def setup(rng, n):
        c = rng.standard_normal(6).astype(np.float32)
        held["c"] = c
        return Launch(_grid(n), (128,), (_f(rng, n)[0], np.zeros(n, np.float32), n), globals={"coeffs": c})

    def reference(args, n):
        return {1: np.polyval(held["c"][::-1].astype(np.float64), args[0].astype(np.float64))}
    return Case("horner", "team_elementwise", "horner", setup, reference, N, rtol=1e-4, atol=1e-4,
                style="polynomial by Horner's rule, coefficients in __constant__ memory")


def _pitched(rng, s):
    h, w = s
    pitch = ((w + 31) // 32) * 32
    m = rng.standard_normal((h, pitch)).astype(np.float32)
    return Launch((-(-w // 16), -(-h // 8)), (16, 8), (m, pitch * 4, w, h, 1.5))


def _pitched_ref(args, s):
    h, w = s
    m = args[0].astype(np.float64).copy()
    m[:, :w] += 1.5
    return {0: m}


def _sx(rng, n):
    x, y = _f(rng, n, 2)
    return Launch((2,), (64,), (n, 2.5, x, y))


def _gather(rng, n):
    src = rng.standard_normal(n + 3)
    return Launch(_grid(n), (128,), (src, rng.integers(0, n + 3, n).astype(np.int64), np.zeros(n), n))


def _bytes(rng, n):
    return Launch(_grid(n), (128,), (rng.integers(0, 256, n).astype(np.uint8),
                                     rng.integers(-300, 300, n).astype(np.int16),
                                     np.zeros(n, np.bool_), np.zeros(n, np.int8), n))


def _bytes_ref(args, n):
    a, b = args[0].astype(np.int64), args[1].astype(np.int64)
    return {2: (a > 127) & (b < 0), 3: ((a ^ (b & 0xFF)) & 0x7F) - 64}


def _bits_ref(args, n):
    out = []
    for v in args[0].tolist():
        v = (((v | 1) << 3) & 0xFFFFFFFF) % 1000003
        v ^= int(f"{v:032b}"[::-1], 2) >> 16
        out.append((v + bin(v).count("1") + (32 - v.bit_length())) & 0xFFFFFFFF)
    return {1: np.array(out, np.uint32)}


CASES = [
    Case("saxpy_grid_stride", "team_elementwise", "saxpy_grid_stride", _sx,
         lambda a, n: {3: np.float32(2.5) * a[2].astype(np.float64) + a[3]}, N, style="SAXPY with a grid-stride loop",
         bugs=(Bug("stride_overruns",
                   (("i < n; i += blockDim.x * gridDim.x) y[i]", "i <= n; i += blockDim.x * gridDim.x) y[i]"),),
                   "OutOfBoundsError", 100, block=(1, 0, 0), thread=(36, 0, 0), array="x", index=(100,),
                   what="`<=` in the grid-stride loop: one thread reads and writes one past the end."),)),
    Case("vadd_float4", "team_elementwise", "vadd_float4",
         lambda rng, n: Launch(_grid(n // 4 + 1), (128,), (*_f(rng, n, 2), np.zeros(n, np.float32), n)),
         lambda a, n: {2: a[0].astype(np.float64) + a[1]}, N,
         style="float4 loads through reinterpret_cast, scalar tail",
         bugs=(Bug("vector_tail_overrun", (("    int n4 = n / 4;", "    int n4 = (n + 3) / 4;"),),
                   "OutOfBoundsError", 7, block=(0, 0, 0), thread=(1, 0, 0), array="a", index=(1,),
                   what="Rounding the vector count up: "
                        "the last float4 reaches past the array (index in float4s)."),)),
    Case("scale_c_cast", "team_elementwise", "scale_c_cast",
         lambda rng, n: Launch(_grid(n), (128,), (_f(rng, n)[0], 3.0, n)),
         lambda a, n: {0: a[0].astype(np.float64) * 3}, N, style="C-style cast (float2*)x"),
    Case("activations", "team_elementwise", "activations",
         lambda rng, n: Launch(_grid(n), (128,), (_f(rng, n)[0], *[np.zeros(n, np.float32) for _ in range(3)], n)),
         lambda a, n: {1: np.maximum(a[0], 0), 2: 1 / (1 + np.exp(-a[0].astype(np.float64))),
                       3: 0.5 * a[0] * (1 + np.vectorize(__import__("math").erf)(
                           a[0].astype(np.float64) / np.sqrt(2)))},
         N, rtol=1e-5, atol=1e-6, style="activation functions with CUDA math functions"),
    _horner_case(),
    Case("pitched_add", "team_elementwise", "pitched_add", _pitched, _pitched_ref, ((1, 1), (5, 33), (20, 70)),
         style="pitched 2-D rows (cudaMallocPitch layout) through a char* cast",
         bugs=(Bug("pitch_in_elements",
                   (("float* row = (float*)((char*)m + y * pitch);", "float* row = m + y * pitch;"),),
                   "OutOfBoundsError", (5, 33), block=(0, 0, 0), thread=(0, 2, 0), array="m",
                   what="The pitch is in bytes but is added to a float*: rows land four times too far."),)),
    Case("grid3d_index", "team_elementwise", "grid3d_index",
         lambda rng, s: Launch((-(-s[2] // 8), -(-s[1] // 4), -(-s[0] // 2)), (8, 4, 2),
                               (np.zeros(s, np.int32), s[2], s[1], s[0])),
         lambda a, s: {0: np.fromfunction(lambda z, y, x: x + 100 * y + 10000 * z, s)},
         ((1, 1, 1), (3, 5, 9), (4, 8, 16)),
         style="3-D grid and block indexing"),
    Case("gather_int64", "team_elementwise", "gather_int64", _gather, lambda a, n: {2: a[0][a[1]]}, N,
         style="64-bit indices, double precision gather"),
    Case("bytes_and_bools", "team_elementwise", "bytes_and_bools", _bytes, _bytes_ref, N,
         style="bool, unsigned char, short and signed char elements"),
    Case("daxpy_unrolled", "team_elementwise", "daxpy_unrolled",
         lambda rng, n: Launch(_grid(-(-n // 4), 64), (64,), (1.25, rng.standard_normal(n), rng.standard_normal(n), n)),
         lambda a, n: {2: 1.25 * a[1] + a[2]}, N, style="double precision, 4 elements per thread with #pragma unroll",
         bugs=(Bug("unroll_guard_dropped",
                   (("        if (i + k < n) y[i + k] += a * x[i + k];", "        y[i + k] += a * x[i + k];"),),
                   "OutOfBoundsError", 7, block=(0, 0, 0), thread=(1, 0, 0), index=(7,),
                   what="The guard inside the unrolled loop is gone: "
                        "the last thread's group runs past the end."),)),
    Case("clamp_uint", "team_elementwise", "clamp_uint",
         lambda rng, n: Launch(_grid(n), (128,), (rng.integers(-500, 500, n).astype(np.int32), np.zeros(n, np.uint32),
                                                  -20, 300, n)),
         lambda a, n: {1: np.clip(a[0], -20, 300).astype(np.uint32)}, N, style="min/max overloads, int to unsigned"),
    Case("rgb_to_gray", "team_elementwise", "rgb_to_gray",
         lambda rng, n: Launch(_grid(n), (128,), (rng.integers(0, 256, 4 * n).astype(np.uint8), np.zeros(n, np.uint8),
                                                  n)),
         lambda a, n: {1: (np.float32(0.299) * a[0][0::4].astype(np.float32)
                           + np.float32(0.587) * a[0][1::4].astype(np.float32)
                           + np.float32(0.114) * a[0][2::4].astype(np.float32)).astype(np.uint8)},
         N, atol=1, style="uchar4 pixels (CUDA samples, image processing)"),
    Case("complex_mul", "team_elementwise", "complex_mul",
         lambda rng, n: Launch(_grid(n), (128,), (*_f(rng, 2 * n, 2), np.zeros(2 * n, np.float32), n)),
         lambda a, n: {2: (lambda p: np.stack([p.real, p.imag], 1).ravel())(
             (a[0][0::2] + 1j * a[0][1::2].astype(np.float64)) * (a[1][0::2] + 1j * a[1][1::2].astype(np.float64)))},
         N, rtol=1e-5, atol=1e-6, style="float2 complex numbers, member access on elements (in[i].x)"),
    Case("bit_tricks", "team_elementwise", "bit_tricks",
         lambda rng, n: Launch(_grid(n), (128,), (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),
                                                  np.zeros(n, np.uint32), n)),
         _bits_ref, N, style="|=, <<=, %=, ^= with intrinsics"),
]
