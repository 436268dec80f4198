// <cudaTypedefs.h> on the CPU runtime: the driver entry points' pointer types, for programs that
// fetch them with cudaGetDriverEntryPoint; here only the tensor map's encoder has one.
#pragma once
#include <cuda.h>

#ifdef KC_PROGRAM
typedef CUresult (*PFN_cuTensorMapEncodeTiled_v12000)(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);
#define PFN_cuTensorMapEncodeTiled PFN_cuTensorMapEncodeTiled_v12000
#endif
