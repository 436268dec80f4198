"""Element-wise kernels and launch styles (src/ew_*.cu): a grid-stride SAXPY, float4 loads
through reinterpret_cast and through a C-style cast with scalar tails, activations with
math functions, Horner's rule with __constant__ coefficients, pitched 2-D rows, 3-D grids,
a 2-D grid of 1-D blocks, 64-bit indices, bool/char/short, double math, float2 complex
numbers and integer intrinsics."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


N = (1, 3, 128, 1000, 4099)

# ---------------------------------------------------------------- SAXPY
def _saxpy_setup(rng, n):
    return Launch((4,), (128,), (np.int32(n), np.float32(rng.uniform(-2, 2)), _f32(rng, n), _f32(rng, n)))


def _saxpy_ref(args, n):
    return {3: float(args[1]) * args[2].astype(np.float64) + args[3]}


# ---------------------------------------------------------------- float4
def _vadd_setup(rng, n):
    return Launch((_cdiv(n // 4, 128),), (128,), (_f32(rng, n), _f32(rng, n), np.zeros(n, np.float32), np.int32(n)))


def _scale4_setup(rng, n):
    return Launch((2,), (64,), (_f32(rng, n), np.float32(rng.uniform(-2, 2)), np.float32(rng.uniform(-1, 1)),
                                np.int32(n)))


# ---------------------------------------------------------------- activations
def _act_setup(rng, n):
    x = (rng.standard_normal(n) * 6).astype(np.float32)
    outs = tuple(np.zeros(n, np.float32) for _ in range(5))
    return Launch((_cdiv(n, 256),), (256,),
                  (x,) + outs + (np.float32(-1.5), np.float32(2.5), np.float32(0.1), np.int32(n)))


def _act_ref(args, n):
    v = args[0].astype(np.float64)
    return {1: np.clip(v, -1.5, 2.5), 2: np.where(v > 0, v, float(np.float32(0.1)) * v), 3: 1 / (1 + np.exp(-v)),
            4: np.tanh(v), 5: np.where(v > 20, v, np.log1p(np.exp(v)))}


# ---------------------------------------------------------------- Horner, constant coefficients
_C = {}


def _poly_setup(rng, n):
    c = rng.uniform(-1, 1, 8).astype(np.float32)
    _C["c"] = c
    return Launch((_cdiv(n, 128),), (128,), (rng.uniform(-1.2, 1.2, n).astype(np.float32), np.zeros(n, np.float32),
                                             np.int32(n)), globals={"coeffs": c})


def _poly_ref(args, n):
    return {1: np.polyval(_C["c"][::-1].astype(np.float64), args[0].astype(np.float64))}


# ---------------------------------------------------------------- pitched rows
def _pitch_setup(rng, s):
    h, w = s
    pin, pout = -(-w // 32) * 32, w + 5
    return Launch((_cdiv(w, 16), _cdiv(h, 16)), (16, 16),
                  (_f32(rng, (h, pin)), np.uint64(4 * pin), _f32(rng, (h, pout)), np.uint64(4 * pout), np.int32(w),
                   np.int32(h), np.float32(rng.uniform(-2, 2)), np.float32(rng.uniform(-1, 1))))


def _pitch_ref(args, s):
    h, w = s
    out = args[2].astype(np.float64)
    out[:, :w] = float(args[6]) * args[0][:, :w].astype(np.float64) + float(args[7])
    return {2: out}


# ---------------------------------------------------------------- 3-D grid
def _g3_setup(rng, s):
    nz, ny, nx = s
    return Launch((_cdiv(nx, 8), _cdiv(ny, 4), _cdiv(nz, 2)), (8, 4, 2),
                  (_f32(rng, s), _f32(rng, s), np.zeros(s, np.float32), np.float32(rng.uniform(-2, 2)),
                   np.float32(rng.uniform(-2, 2)), np.int32(nx), np.int32(ny), np.int32(nz)))


def _g3_ref(args, s):
    return {2: float(args[3]) * args[0].astype(np.float64) + float(args[4]) * args[1].astype(np.float64)}


# ---------------------------------------------------------------- 2-D grid of 1-D blocks
def _iota_setup(rng, n):
    blocks = _cdiv(n, 64)
    return Launch((3, _cdiv(blocks, 3)), (64,), (np.zeros(n, np.int32), np.zeros(n, np.float32), _f32(rng, 5),
                                                 np.int32(n)))


def _iota_ref(args, n):
    i = np.arange(n)
    blk = i // 64
    return {0: i, 1: args[2][i % 5].astype(np.float64) * (blk % 3) + blk // 3}


# ---------------------------------------------------------------- int64
def _i64_setup(rng, n):
    stride, offset = int(rng.integers(2, 6)), int(rng.integers(0, 10))
    src = rng.integers(-10**12, 10**12, offset + (n - 1) * stride + 1 + int(rng.integers(0, 4))).astype(np.int64)
    return Launch((_cdiv(n, 128),), (128,), (src, np.zeros(n, np.int64), np.int64(stride), np.int64(offset),
                                             np.int64(n)))


def _i64_ref(args, n):
    i = np.arange(n, dtype=np.int64)
    return {1: args[0][int(args[3]) + i * int(args[2])] * 3 - i}


# ---------------------------------------------------------------- bool / char / short
def _small_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (rng.random(n) < 0.5, rng.integers(-128, 128, n).astype(np.int8),
                                             rng.integers(-32768, 32768, n).astype(np.int16), np.zeros(n, np.int16),
                                             np.zeros(n, np.int8), np.int32(n)))


def _small_ref(args, n):
    a, b = args[1].astype(np.int64), args[2].astype(np.int64)
    v = np.where(args[0], a * b + 7, b - a)
    return {3: np.clip(v, -32768, 32767), 4: np.sign(v)}


# ---------------------------------------------------------------- double
def _dbl_setup(rng, n):
    return Launch((_cdiv(n, 64),), (64,), (rng.uniform(-3, 3, n), rng.uniform(-3, 3, n), np.zeros(n), np.zeros(n),
                                           np.int32(n)))


def _dbl_ref(args, n):
    a, b = args[0], args[1]
    return {2: np.exp(a) * np.log1p(np.abs(b)) + np.sqrt(np.abs(a) + 1) + (np.abs(b) + 0.5) ** 1.5, 3: np.arctan2(b, a)}


# ---------------------------------------------------------------- float2 complex
def _cplx_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, (n, 2)), _f32(rng, (n, 2)), np.float32(rng.uniform(-1, 1)),
                                             np.float32(rng.uniform(-1, 1)), np.int32(n)))


def _cplx_ref(args, n):
    z = args[0][:, 0].astype(np.float64) + 1j * args[0][:, 1]
    c = args[1][:, 0].astype(np.float64) + 1j * args[1][:, 1]
    r = (float(args[2]) + 1j * float(args[3])) * z + c
    return {0: np.stack([r.real, r.imag], -1)}


# ---------------------------------------------------------------- bits
def _bits_setup(rng, n):
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x >>= rng.integers(0, 32, n).astype(np.uint32)               # many bit lengths
    special = np.array([0, 1, 0xFFFFFFFF, 0x80000000, 0x00010000], np.uint32)
    x[:min(n, 5)] = special[:min(n, 5)]
    return Launch((_cdiv(n, 128),), (128,), (x, np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, np.int32),
                                             np.zeros(n, np.uint32), np.int32(n)))


def _bit_length(x):
    return np.frexp(x.astype(np.float64))[1]


def _bits_ref(args, n):
    x = args[0].astype(np.uint32)
    low = x & (~x + np.uint32(1))
    bits = np.unpackbits(x.astype("<u4").view(np.uint8).reshape(-1, 4), axis=1, bitorder="little")
    rev = np.packbits(bits[:, ::-1], axis=1, bitorder="little").view("<u4").ravel()
    return {1: np.bitwise_count(x), 2: 32 - _bit_length(x), 3: _bit_length(low), 4: rev}


CASES = [
    Case("ew_saxpy_grid_stride", "ew_saxpy", "saxpy", _saxpy_setup, _saxpy_ref, N, rtol=1e-6, atol=1e-6,
         style="NVIDIA 'CUDA Pro Tip: grid-stride loops' saxpy(n, a, x, y), fixed grid",
         bugs=(Bug("loop_bound_inclusive",
                   (("i < n; i += blockDim.x * gridDim.x)", "i <= n; i += blockDim.x * gridDim.x)"),),
                   "OutOfBoundsError", 1000, thread=(104, 0, 0), block=(3, 0, 0), index=(1000,),
                   what="`<=` in the grid-stride loop: the thread that reaches i == n reads x[n] and y[n]."),)),
    Case("ew_vadd_float4_reinterpret", "ew_vadd_float4", "vadd_vec4", _vadd_setup,
         lambda a, n: {2: a[0].astype(np.float64) + a[1]}, N, rtol=1e-6, atol=1e-6,
         style="NVIDIA 'CUDA Pro Tip: vectorized memory access', reinterpret_cast<float4*> + scalar tail",
         bugs=(Bug("vector_guard_inclusive", (("    if (i < n4) {", "    if (i <= n4) {"),),
                   "OutOfBoundsError", 1000, thread=(122, 0, 0), block=(1, 0, 0), array="a", index=(250,),
                   what="`<=` on the float4 count: one more float4 is read past the end of a."),)),
    Case("ew_scale_float4_cstyle", "ew_scale_cstyle", "scale_shift4", _scale4_setup,
         lambda a, n: {0: float(a[1]) * a[0].astype(np.float64) + float(a[2])}, N, rtol=1e-6, atol=1e-6,
         style="(float4*)x C-style cast, in place, grid-stride over float4s, tail by the first threads",
         bugs=(Bug("tail_guard_inclusive", (("    if (gid < n % 4) {", "    if (gid <= n % 4) {"),),
                   "OutOfBoundsError", 1001, thread=(1, 0, 0), block=(0, 0, 0), array="x", index=(1001,),
                   what="`<=` on the tail count: one thread too many handles the tail and reads x[n]."),)),
    Case("ew_activations_math", "ew_activations", "activations", _act_setup, _act_ref, N, rtol=1e-5, atol=1e-6,
         style="clamp / leaky ReLU / sigmoid / tanh / softplus with fminf, fmaxf, expf, tanhf, log1pf"),
    Case("ew_horner_const_coeffs", "ew_poly_const", "poly_eval", _poly_setup, _poly_ref, N, rtol=1e-5, atol=1e-5,
         style="Horner's rule, coefficients in __constant__ (broadcast reads), #pragma unroll",
         bugs=(Bug("leading_coeff_past_end", (("float r = coeffs[DEG];", "float r = coeffs[DEG + 1];"),),
                   "OutOfBoundsError", 1000, thread=(0, 0, 0), block=(0, 0, 0), array="coeffs", index=(8,),
                   what="The leading coefficient is taken one past the constant array."),)),
    Case("ew_pitched_rows", "ew_pitch2d", "pitched_affine", _pitch_setup, _pitch_ref,
         ((1, 1), (3, 7), (10, 20), (33, 40), (17, 65)), rtol=1e-6, atol=1e-6,
         style="cudaMallocPitch layout: rows `pitch` bytes apart via (char*) arithmetic, size_t pitches",
         bugs=(Bug("row_guard_inclusive", (("if (x < w && y < h) {", "if (x < w && y <= h) {"),),
                   "OutOfBoundsError", (10, 20), thread=(0, 10, 0), block=(0, 0, 0), array="in", index=(320,),
                   what="`<=` on the row guard: the row past the image is read through the pitched pointer."),)),
    Case("ew_grid3d_axpby", "ew_grid3d", "axpby3d", _g3_setup, _g3_ref, ((1, 1, 1), (3, 5, 9), (4, 8, 8), (7, 11, 13)),
         rtol=1e-6, atol=1e-6, style="3-D grid of 3-D blocks, (z * ny + y) * nx + x",
         bugs=(Bug("z_guard_missing", (("if (x < nx && y < ny && z < nz) {", "if (x < nx && y < ny) {"),),
                   "OutOfBoundsError", (3, 5, 9), thread=(0, 0, 1), block=(0, 0, 1), index=(135,),
                   what="The z test is forgotten: the last layer of blocks reaches past the volume."),)),
    Case("ew_grid2d_of_1d_blocks", "ew_fill_iota", "fill_index", _iota_setup, _iota_ref, N, rtol=1e-6, atol=1e-6,
         style="a 2-D grid of 1-D blocks flattened as blockIdx.y * gridDim.x + blockIdx.x"),
    Case("ew_int64_strided_gather", "ew_int64", "strided_gather_i64", _i64_setup, _i64_ref, N,
         style="long long indices and strides, (long long)blockIdx.x * blockDim.x, int64 data"),
    Case("ew_bool_char_short", "ew_small_types", "small_types", _small_setup, _small_ref, N,
         style="bool mask, signed char and short element types, saturation to short"),
    Case("ew_double_math", "ew_double_math", "double_math", _dbl_setup, _dbl_ref, N, rtol=1e-12, atol=1e-12,
         style="double kernels: exp, log1p, sqrt, fma, pow, atan2"),
    Case("ew_float2_complex_axpy", "ew_float2_complex", "complex_axpy", _cplx_setup, _cplx_ref, N, rtol=1e-5, atol=1e-6,
         style="complex numbers as float2, make_float2, in place"),
    Case("ew_bit_intrinsics", "ew_bits", "bit_stats", _bits_setup, _bits_ref, N,
         style="__popc, __clz, __ffs, __brev on unsigned words"),
]
