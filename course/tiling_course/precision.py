"""The precisions the book's kernels multiply in, and the exact roundings into them.

    fp32  float in, float products (the SIMT kernels and the ladder)
    tf32  float in, rounded to TF32 inside the tensor-core fragments: 8 exponent bits and
          10 mantissa bits, rounded to nearest with ties away from zero, as
          wmma::__float_to_tf32 does (the CUDA Math API)
    fp16  __half in (numpy float16): 5 exponent bits, 10 mantissa bits, round to nearest even
    bf16  __nv_bfloat16 in: float's 8 exponent bits, 7 mantissa bits, round to nearest even;
          NumPy has no bfloat16, so its bits travel as uint16

Every tensor-core kernel accumulates in float. `rounded` gives the float32 values a kernel
really multiplies, so a test can compare it with a float64 product of exactly those.
The functions take NumPy or CuPy arrays alike (they use only the arrays' own methods).
"""
import numpy as np

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
ITEMSIZE = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
# The -D option that selects a precision in kernels/tensor_cores.cu (fp16 is its default).
DEFINES = {"fp32": (), "tf32": ("-DTC_TF32",), "fp16": (), "bf16": ("-DTC_BF16",)}
# Unit roundoff of an input rounded to the precision: 2^-(mantissa bits + 1).
UNIT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}
# Largest |kernel - cuBLAS| / largest |cuBLAS| that counts as the same product at a
# precision: both multiply the same rounded inputs and accumulate in float, except TF32,
# where cuBLAS rounds float to TF32 its own way, so single products may differ by one of
# TF32's units; the benchmark's FP32 tolerance (1e-3) covers all of them.
TOLERANCE = {"fp32": 1e-3, "tf32": 1e-3, "fp16": 1e-3, "bf16": 1e-3}


def _bits(x):
    return x.astype(np.float32).view(np.uint32)


def bf16_bits(x):
    """float32 -> bfloat16 bits (uint16), round to nearest even; NaN stays a quiet NaN."""
    b = _bits(x)
    rounded = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, (b >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def bf16_to_float(bits):
    """bfloat16 bits (uint16) -> float32, exactly."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def tf32(x):
    """float32 rounded to TF32 (kept in a float32): round to nearest, ties away from zero,
    on the 13 mantissa bits TF32 drops; infinities and NaN unchanged."""
    b = _bits(x)
    finite = (b & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
    return np.where(finite, (b + np.uint32(0x1000)) & np.uint32(0xFFFFE000), b).view(np.float32)


def to_device_format(x, prec):
    """What a kernel of precision `prec` takes for the float32 matrix x: float32 (fp32,
    tf32: the kernel rounds), float16, or bf16 bits as uint16."""
    if prec in ("fp32", "tf32"):
        return x.astype(np.float32)
    if prec == "fp16":
        return x.astype(np.float16)
    if prec == "bf16":
        return bf16_bits(x)
    raise ValueError(f"no precision {prec!r}; the book's are {', '.join(PRECISIONS)}")


def rounded(x, prec):
    """The float32 values a kernel of precision `prec` multiplies, for the float32 x."""
    if prec == "tf32":
        return tf32(x)
    if prec == "bf16":
        return bf16_to_float(bf16_bits(x))
    return to_device_format(x, prec).astype(np.float32)


# The compute capability a GPU needs for tensor-core fragments of each precision (CUDA
# C++ Programming Guide, warp matrix functions: __half from 7.0, __nv_bfloat16 and tf32
# from 8.0). Colab's T4 (7.5) runs the FP16 kernels only.
TENSOR_CORE_CAPABILITY = {"fp16": 70, "bf16": 80, "tf32": 80}


def runs_on_this_gpu(prec):
    """Whether the GPU at hand (if any) has tensor cores for `prec`; False without a GPU."""
    from cudacheck import gpu_available
    if not gpu_available():
        return False
    import cupy
    return int(cupy.cuda.Device().compute_capability) >= TENSOR_CORE_CAPABILITY.get(prec, 0)


def fma32(a, b, c):
    """a*b + c of float32 scalars rounded once to float32, as a GPU's fused multiply-add
    (what nvcc makes of `sum += a * b`): the product is exact in float64, the sum is
    split exactly into a float64 and its error, and the one case where rounding twice
    could differ (the float64 sum halfway between two float32s) is decided by the error."""
    p = np.float64(a) * np.float64(b)
    s = p + np.float64(c)
    bb = s - p
    err = (p - (s - bb)) + (np.float64(c) - bb)   # TwoSum: s + err is the exact sum
    r = np.float32(s)
    if err != 0 and np.float64(r) != s:
        other = np.nextafter(r, np.float32(np.inf) if np.float64(r) < s else np.float32(-np.inf))
        if np.float64(r) + np.float64(other) == 2 * s:   # s halfway: the error decides
            exact_above = err > 0
            r = max(r, other) if exact_above else min(r, other)
    return np.float32(r)
