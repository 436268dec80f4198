// The CUDA runtime API a whole program's host code uses (cudaMalloc, cudaMemcpy, events,
// the device query, kernel<<<grid, block, shared, stream>>>), for programs run by
// cudacheck.run_program on the CPU runtime. cuda_cpu.h includes it when KC_PROGRAM is
// defined (nvcc includes cuda_runtime.h into every .cu file, so a program need not).
//
// Device memory, launches and the error state are implemented in kc_host.cpp, which hands
// every call that touches device memory to the Python side (runtime/cudacheck/cpu/host_api.py):
// it places allocations in the launcher's slots, checks copies against them and launches
// kernels in worker processes exactly as RawKernel launches do. The functions that take
// `int kc_line = __builtin_LINE()` receive the caller's line, for checked mode's reports;
// the program calls them as CUDA declares them.
#pragma once
#include "kc_stubs.h"

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidHostPointer = 16,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidChannelDescriptor = 20,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidFilterSetting = 26,
    cudaErrorMissingConfiguration = 52,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorUnsupportedLimit = 215,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrReservedSharedMemoryPerBlock = 111,
};

// The device the CPU runtime describes: an NVIDIA H100 SXM5 80 GB (compute capability 9.0),
// the GPU the book's measurements come from. Its limits are the ones the launcher enforces
// (runtime/cudacheck/launch.py). Its fields are CUDA 13's: clockRate, memoryClockRate and
// deviceOverlap, which CUDA 13 removed, are refused as nvcc 13 refuses them
// (frontend/launches.py names what replaced each).
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t reservedSharedMemPerBlock;
};

typedef struct KcEvent* cudaEvent_t;
typedef struct KcStream* cudaStream_t;

cudaError_t cudaMalloc(void** devPtr, size_t size, int kc_line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size, int kc_line = __builtin_LINE()) {
    return cudaMalloc(reinterpret_cast<void**>(devPtr), size, kc_line);
}
cudaError_t cudaFree(void* devPtr, int kc_line = __builtin_LINE());
cudaError_t cudaMallocHost(void** ptr, size_t size);
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size) { return cudaMallocHost(reinterpret_cast<void**>(ptr), size); }
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, int kc_line = __builtin_LINE());
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream = 0,
                            int kc_line = __builtin_LINE());
cudaError_t cudaMemset(void* devPtr, int value, size_t count, int kc_line = __builtin_LINE());
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0,
                            int kc_line = __builtin_LINE());
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
namespace kc {
cudaError_t host_error(cudaError_t e);   // e, recorded as the last error (cudaGetLastError)
}
// __device__ and __constant__ variables live in a section the host process shares with the
// workers (cuda_cpu.h: KC_DEVICE_VAR), so the symbol copies are copies to and from it,
// checked against the variable's size as CUDA checks them (cudaErrorInvalidValue).
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    if (offset > sizeof(T) || count > sizeof(T) - offset || kind == cudaMemcpyDeviceToHost ||
        kind == cudaMemcpyHostToHost)
        return ::kc::host_error(cudaErrorInvalidValue);
    memcpy(const_cast<char*>(reinterpret_cast<const volatile char*>(&symbol)) + offset, src, count);
    return cudaSuccess;
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    if (offset > sizeof(T) || count > sizeof(T) - offset || kind == cudaMemcpyHostToDevice ||
        kind == cudaMemcpyHostToHost)
        return ::kc::host_error(cudaErrorInvalidValue);
    memcpy(dst, const_cast<const char*>(reinterpret_cast<const volatile char*>(&symbol)) + offset, count);
    return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T&) { *size = sizeof(T); return cudaSuccess; }

// Device limits: recorded and read back; the CPU runtime's own stack and printf buffer do
// not depend on them.
enum cudaLimit {
    cudaLimitStackSize = 0,
    cudaLimitPrintfFifoSize = 1,
    cudaLimitMallocHeapSize = 2,
    cudaLimitDevRuntimeSyncDepth = 3,
    cudaLimitDevRuntimePendingLaunchCount = 4,
    cudaLimitMaxL2FetchGranularity = 5,
    cudaLimitPersistingL2CacheSize = 6,
};
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
template <class... P>
inline cudaError_t cudaFuncSetAttribute(void (*func)(P...), cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value);
}
// The L1/shared split a kernel (or the device) prefers: a hint a GPU may ignore, and which
// changes no result; the CPU runtime checks the arguments as CUDA does and keeps the device's.
enum cudaFuncCache {
    cudaFuncCachePreferNone = 0,
    cudaFuncCachePreferShared = 1,
    cudaFuncCachePreferL1 = 2,
    cudaFuncCachePreferEqual = 3,
};
cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig);
template <class... P>
inline cudaError_t cudaFuncSetCacheConfig(void (*func)(P...), cudaFuncCache cacheConfig) {
    return cudaFuncSetCacheConfig(reinterpret_cast<const void*>(func), cacheConfig);
}
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* cacheConfig);
// The described device's memory (cudaDeviceProp::totalGlobalMem) and what of it is free: the
// total less the bytes the program's cudaMalloc calls hold now.
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);

// How many blocks of `blockSize` threads and `dynamicSMemSize` bytes of dynamic shared memory (with
// the kernel's static shared memory) one SM of the described device holds at once. Registers are
// not counted: the CPU runtime cannot know how many a GPU's compiler gives the kernel.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize);
template <class... P>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, void (*func)(P...), int blockSize,
                                                                 size_t dynamicSMemSize) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void*>(func), blockSize,
                                                         dynamicSMemSize);
}
// A cooperative launch: declared for the parse only; the front end rewrites every call into
// ::kc::launch_cooperative (frontend/launches.py), which needs the kernel named directly.
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                        size_t sharedMem = 0, cudaStream_t stream = 0);

// Pitched memory and 2-D copies: a row pitch of 512 bytes' multiples (cudaMallocPitch's
// alignment; the CPU runtime's choice, which a program reads back rather than assumes).
cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height, int kc_line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMallocPitch(T** devPtr, size_t* pitch, size_t width, size_t height,
                                   int kc_line = __builtin_LINE()) {
    return cudaMallocPitch(reinterpret_cast<void**>(devPtr), pitch, width, height, kc_line);
}
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, int kc_line = __builtin_LINE());

// Texture objects (kc_host_texture.cpp): CUDA arrays, the descriptors and the objects, whose
// fetches, formats and modes are texture_indirect_functions.h's.
enum cudaResourceViewFormat { cudaResViewFormatNone = 0 };
typedef struct cudaArray* cudaArray_t;
typedef const struct cudaArray* cudaArray_const_t;
typedef struct cudaMipmappedArray* cudaMipmappedArray_t;
struct cudaResourceDesc {
    cudaResourceType resType;
    union {
        struct { cudaArray_t array; } array;
        struct { cudaMipmappedArray_t mipmap; } mipmap;
        struct { void* devPtr; cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
        struct { void* devPtr; cudaChannelFormatDesc desc; size_t width, height, pitchInBytes; } pitch2D;
    } res;
    unsigned int flags;
};
struct cudaTextureDesc {
    cudaTextureAddressMode addressMode[3];
    cudaTextureFilterMode filterMode;
    cudaTextureReadMode readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};
struct cudaResourceViewDesc {
    cudaResourceViewFormat format;
    size_t width, height, depth;
    unsigned int firstMipmapLevel, lastMipmapLevel, firstLayer, lastLayer;
    unsigned int flags;
};
cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);
// cudaCreateChannelDesc<float4>(): the channels of a fetch's result type (texture_indirect_functions.h).
template <class T>
inline cudaChannelFormatDesc cudaCreateChannelDesc() {
    using C = typename ::kc::tex::shape<T>::channel;
    constexpr int n = ::kc::tex::shape<T>::n, bits = int(sizeof(C)) * 8;
    constexpr cudaChannelFormatKind kind = C(0.5) != C(0) ? cudaChannelFormatKindFloat
                                           : C(-1) < C(0) ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned;
    return cudaCreateChannelDesc(bits, n > 1 ? bits : 0, n > 2 ? bits : 0, n > 3 ? bits : 0, kind);
}
cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height = 0,
                            unsigned int flags = 0, int kc_line = __builtin_LINE());
// 3-D arrays and copies: an extent is in texels where a CUDA array takes part, else in bytes
// (its width; so is a position's x in linear memory).
struct cudaExtent { size_t width, height, depth; };
struct cudaPos { size_t x, y, z; };
struct cudaPitchedPtr { void* ptr; size_t pitch, xsize, ysize; };
struct cudaMemcpy3DParms {
    cudaArray_t srcArray;
    cudaPos srcPos;
    cudaPitchedPtr srcPtr;
    cudaArray_t dstArray;
    cudaPos dstPos;
    cudaPitchedPtr dstPtr;
    cudaExtent extent;
    cudaMemcpyKind kind;
};
inline cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return cudaExtent{w, h, d}; }
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return cudaPos{x, y, z}; }
inline cudaPitchedPtr make_cudaPitchedPtr(void* d, size_t p, size_t xsz, size_t ysz) {
    return cudaPitchedPtr{d, p, xsz, ysz};
}
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int flags = 0, int kc_line = __builtin_LINE());
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p, int kc_line = __builtin_LINE());
cudaError_t cudaFreeArray(cudaArray_t array, int kc_line = __builtin_LINE());
cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array);
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind, int kc_line = __builtin_LINE());
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, cudaMemcpyKind kind, int kc_line = __builtin_LINE());
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              cudaMemcpyKind kind, int kc_line = __builtin_LINE());
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                cudaMemcpyKind kind, int kc_line = __builtin_LINE());
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texObject, const cudaResourceDesc* resDesc,
                                    const cudaTextureDesc* texDesc, const cudaResourceViewDesc* viewDesc);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject);

namespace kc {
// The static shared memory of each kernel of a whole program (compiler.py writes the table after
// the program's source, ended by a null function), for the occupancy calculation.
struct KernelShared { const void* fn; size_t bytes; };
// kernel<<<grid, block, shared, stream>>>(args) becomes, by the front end's line-preserving
// edit (runtime/cudacheck/frontend/launches.py, find_launches):
//     ::kc::launch_kernel(ID, __LINE__, kernel, grid, block, shared, stream)(args)
// The returned object's call takes exactly the kernel's parameter types, so the arguments
// convert as in a call of the kernel; then the launcher runs it in worker processes.
cudaError_t host_launch(int id, int line, void (*body)(void**), const void* fn, dim3 grid, dim3 block, size_t shared,
                        void** args);
extern const void* launched_fn;   // the kernel the workers of the current launch run
inline int macro_launch = -1;     // the launch a use of a launching macro is (frontend/launches.py: LaunchFinder._macro_launch)
// Whether two types are one (a launch in a function template picks its instance's launch by it:
// frontend/launches.py, _dependent_launch).
template <class A, class B> inline constexpr bool same_type = false;
template <class A> inline constexpr bool same_type<A, A> = true;
template <class... P>
void launched_body(void** a) { invoke(reinterpret_cast<void (*)(P...)>(const_cast<void*>(launched_fn)), a); }
template <class... P>
struct KernelLaunch {
    int id, line;
    void (*fn)(P...);
    dim3 grid, block;
    size_t shared;
    void operator()(P... args) const {
        void* argv[sizeof...(P) + 1] = {const_cast<void*>(static_cast<const void*>(&args))...};
        host_launch(id, line, &launched_body<P...>, reinterpret_cast<const void*>(fn), grid, block, shared, argv);
    }
};
// cudaLaunchCooperativeKernel((void*)kernel, grid, block, args, shared, stream) becomes
//     ::kc::launch_cooperative(ID, __LINE__, kernel, grid, block, args, shared, stream)
// whose args, as CUDA's, point to arguments of exactly the kernel's parameter types; the front end
// marks the launch cooperative (Launch.cooperative) for the Python side.
template <class... P>
inline cudaError_t launch_cooperative(int id, int line, void (*fn)(P...), dim3 grid, dim3 block, void** args,
                                      size_t shared = 0, cudaStream_t = 0) {
    return host_launch(id, line, &launched_body<P...>, reinterpret_cast<const void*>(fn), grid, block, shared, args);
}
template <class... P>
inline KernelLaunch<P...> launch_kernel(int id, int line, void (*fn)(P...), dim3 grid, dim3 block, size_t shared = 0,
                                        cudaStream_t = 0) {
    return KernelLaunch<P...>{id, line, fn, grid, block, shared};
}
}  // namespace kc

// The stub that runtime/cudacheck/cpu/compiler.py writes after the program's source, calling
// its main; kc_program_run (kc_host.cpp) runs it. Declared here, which both see, so that g++
// checks the stub against it.
extern "C" int kc_main(int argc, char** argv);
