// <cuda_fp16.h> on the CPU runtime: __half (half), __half2 and their intrinsics, bit for bit
// as on a GPU (the pattern both 16-bit types share is kc_lowp.h).
#pragma once
#include "kc_lowp.h"

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

inline __half __float2half(const float a) { return __half(a); }
inline __half __float2half_rn(const float a) { return __half(a); }
inline float __half2float(const __half a) { return float(a); }
inline __half2 __floats2half2_rn(const float a, const float b) { return __half2(__half(a), __half(b)); }
inline __half2 __float2half2_rn(const float a) { return __floats2half2_rn(a, a); }
inline __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
inline float2 __half22float2(const __half2 a) { return make_float2(float(a.x), float(a.y)); }
inline __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
inline __half2 __half2half2(const __half a) { return __half2(a, a); }
inline __half __low2half(const __half2 a) { return a.x; }
inline __half __high2half(const __half2 a) { return a.y; }

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
