// <cuda_fp16.h> on the CPU runtime: __half (half), __half2 and their intrinsics, bit for bit
// as on a GPU (the pattern both 16-bit types share is kc_lowp.h).
#pragma once
#include "../src/kc_lowp.h"

namespace kc {
namespace lowp {
// Exact; every NaN becomes the canonical float NaN, as CUDA's conversion gives it.
inline float half_to_float(uint16_t h) { return Half::is_nan(h) ? __uint_as_float(0x7fffffffu) : float(Half::to_double(h)); }
}  // namespace lowp
}  // namespace kc

KC_LOWP_TYPE(__half, __half2, __half_raw, __half2_raw, kc::lowp::Half, __nv_bfloat16, half, kc::lowp::half_to_float)

typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half nv_half;
typedef __half2 nv_half2;

KC_LOWP_CONVERSIONS(__half, __half2, __float2half, __float2half_rn, __half2float, __floats2half2_rn,
                    __float2half2_rn, __float22half2_rn, __half22float2, __halves2half2, __half2half2, __low2half,
                    __high2half)

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
