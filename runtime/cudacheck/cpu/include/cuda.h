// <cuda.h> on the CPU runtime. Everything it declares for device code is in cuda_cpu.h, which
// the CPU runtime includes before every kernel, except the tensor map's type, which device code
// names only where it includes this header (as with NVRTC and nvcc). A whole program's host code
// (cudacheck.run_program) also gets the driver's cuTensorMapEncodeTiled, which encodes the CPU
// runtime's map (kc_abi.h: CpuTensorMap, ranks 1-5) of a device allocation, with the driver's checks.
#pragma once
// A whole program's C++ host unit (a .cpp file, cpu/host_units.py) that includes this header
// gets the runtime API from cuda_cpu.h, which every CUDA unit has read already.
#ifndef KC_CUDA_CPU_H
#include "cuda_cpu.h"
#endif

typedef unsigned int cuuint32_t;
typedef unsigned long long cuuint64_t;
#define CU_TENSOR_MAP_NUM_QWORDS 16
// 128 bytes aligned to 64, as the driver's: a kernel takes it by value (`const __grid_constant__
// CUtensorMap`) or through a pointer into device memory.
typedef struct CUtensorMap_st {
    alignas(64) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

#ifdef KC_PROGRAM
#include "../src/kc_abi.h"

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_SUPPORTED = 801,
} CUresult;
typedef enum CUtensorMapDataType_enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, CU_TENSOR_MAP_DATA_TYPE_UINT16, CU_TENSOR_MAP_DATA_TYPE_UINT32,
    CU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_DATA_TYPE_UINT64, CU_TENSOR_MAP_DATA_TYPE_INT64,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ
} CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum {
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B
} CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum {
    CU_TENSOR_MAP_SWIZZLE_NONE = 0, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B
} CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum {
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0, CU_TENSOR_MAP_L2_PROMOTION_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;

// A map the driver would refuse, or one the CPU runtime cannot copy: said on stderr (the
// driver says nothing, but a program's assert on the result would leave the reader guessing),
// by kc_host.cpp, since <cuda.h> gives a program no <stdio.h>, as the toolkit's does not.
extern "C" void kc_say_tensor_map_refused(const char* why);
namespace kc {
inline CUresult tensor_map_refused(CUresult code, const char* why) {
    kc_say_tensor_map_refused(why);
    return code;
}
}  // namespace kc

// The driver's checks (CUDA Driver API, cuTensorMapEncodeTiled): address and strides multiples
// of 16 bytes, 1 to 256 elements a box dimension, a box row of a multiple of 16 bytes and at most
// the swizzle's span, element strides 1 to 8 (dimension 0's ignored). Ranks 1 to 5 (kc_abi.h:
// CpuTensorMap, dimensions 2-4 as stacks of 2-D boxes); interleaved layouts are refused, saying
// what to do.
inline CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                       cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim,
                                       const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
                                       const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                       CUtensorMapFloatOOBfill oobFill) {
    static const unsigned sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    static const unsigned spans[] = {0, 32, 64, 128};
    (void)l2Promotion;
    if (!tensorMap || unsigned(tensorDataType) > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ || unsigned(swizzle) > 3 ||
        unsigned(oobFill) > 1 || tensorRank < 1 || tensorRank > 5)
        return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "an argument out of the driver's range");
    const unsigned size = sizes[tensorDataType];
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return kc::tensor_map_refused(CUDA_ERROR_NOT_SUPPORTED, "interleaved maps are not provided by the CPU "
                                      "runtime; use CU_TENSOR_MAP_INTERLEAVE_NONE");
    for (cuuint32_t d = 0; d < tensorRank; ++d) {
        if (elementStrides[d] < 1 || elementStrides[d] > 8)
            return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "element strides are 1 to 8");
        if (boxDim[d] < 1 || boxDim[d] > 256 || globalDim[d] < 1 || globalDim[d] > (1ull << 32))
            return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "a box has 1 to 256 elements a dimension, a "
                                          "tensor 1 to 2^32");
        if (d && (globalStrides[d - 1] % 16 || globalStrides[d - 1] >= (1ull << 40)))
            return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "strides are multiples of 16 bytes below 2^40");
    }
    if (reinterpret_cast<uintptr_t>(globalAddress) % 16)
        return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "the address must be a multiple of 16 bytes");
    if (boxDim[0] * size % 16 || (swizzle && boxDim[0] * size > spans[swizzle]))
        return kc::tensor_map_refused(CUDA_ERROR_INVALID_VALUE, "a box row is a multiple of 16 bytes, and at "
                                      "most the swizzle's span");
    kc::CpuTensorMap m = {};
    m.magic = kc::TENSOR_MAP_MAGIC;
    m.element_size = size;
    m.address = reinterpret_cast<uint64_t>(globalAddress);
    m.rank = tensorRank;
    m.cols = globalDim[0];
    m.box_cols = boxDim[0];
    m.rows = tensorRank > 1 ? globalDim[1] : 1;
    m.row_pitch = tensorRank > 1 ? globalStrides[0] : 0;
    m.box_rows = tensorRank > 1 ? boxDim[1] : 1;
    for (cuuint32_t d = 2; d < 5; ++d) {
        m.dims_outer[d - 2] = d < tensorRank ? globalDim[d] : 1;
        m.strides_outer[d - 2] = d < tensorRank ? globalStrides[d - 1] : 0;
        m.box_outer[d - 2] = d < tensorRank ? boxDim[d] : 1;
    }
    for (cuuint32_t d = 1; d < tensorRank; ++d) m.skip[d - 1] = uint8_t(elementStrides[d] - 1);
    m.swizzle = spans[swizzle];
    m.oob_nan = oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    static_assert(sizeof(m) == sizeof(CUtensorMap), "a CpuTensorMap fills a CUtensorMap");
    __builtin_memcpy(tensorMap, &m, sizeof(m));
    return CUDA_SUCCESS;
}
#endif
