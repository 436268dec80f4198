// <cuda_bf16.h> on the CPU runtime: __nv_bfloat16 (nv_bfloat16), __nv_bfloat162 and their
// intrinsics, bit for bit as on a GPU (the pattern both 16-bit types share is kc_lowp.h).
// As CUDA's, it includes <cuda_fp16.h>.
#pragma once
#include "cuda_fp16.h"

namespace kc {
namespace lowp {
// The top half of a float's bits, exactly: CUDA's conversion keeps a NaN's payload.
inline float bfloat_to_float(uint16_t h) { return __uint_as_float(uint32_t(h) << 16); }
}  // namespace lowp
}  // namespace kc

KC_LOWP_TYPE(__nv_bfloat16, __nv_bfloat162, __nv_bfloat16_raw, __nv_bfloat162_raw, kc::lowp::BFloat, __half, bfloat16,
             kc::lowp::bfloat_to_float)

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

// The explicit conversions between the two 16-bit types: one rounding of the exact value.
inline __half::__half(const __nv_bfloat16 f) : __x(kc::lowp::Half::from_double(kc::lowp::value(f))) {}
inline __nv_bfloat16::__nv_bfloat16(const __half f) : __x(kc::lowp::BFloat::from_double(kc::lowp::value(f))) {}

KC_LOWP_CONVERSIONS(__nv_bfloat16, __nv_bfloat162, __float2bfloat16, __float2bfloat16_rn, __bfloat162float,
                    __floats2bfloat162_rn, __float2bfloat162_rn, __float22bfloat162_rn, __bfloat1622float2,
                    __halves2bfloat162, __bfloat162bfloat162, __low2bfloat16, __high2bfloat16)

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
