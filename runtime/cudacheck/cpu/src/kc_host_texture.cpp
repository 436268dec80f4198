// A whole program's texture objects (kc_host.h): pitched memory, CUDA arrays, the copies to and
// from them, and cudaCreateTextureObject, with the CUDA runtime's checks of each descriptor.
// Linked only into programs, beside kc_host.cpp (runtime/cudacheck/cpu/compiler.py: PROGRAM_UNITS).
//
// A CUDA array is a device allocation of its texels, rows one after another (cudaMalloc), so
// copies to and from it are cudaMemcpy's, checked as every copy is. A texture object is a
// kc::CpuTexture (kc_abi.h) in the host's heap: the workers of a launch are forked from this
// process and read it there, and the texels through its `data`.
#define KC_PROGRAM
#include <stdio.h>   // cuda_cpu.h gives a whole program's units none (as nvcc)
#include "../include/cuda_cpu.h"

// The limits of an H100 (compute capability 9.0) that texture objects are held to.
static constexpr size_t TEXTURE_ALIGNMENT = 512;        // cudaDeviceProp::textureAlignment
static constexpr size_t TEXTURE_PITCH_ALIGNMENT = 32;   // cudaDeviceProp::texturePitchAlignment
static constexpr size_t MALLOC_PITCH_ALIGNMENT = 512;
static constexpr size_t MAX_TEXTURE_1D_LINEAR = size_t(1) << 28;   // texels
static constexpr size_t MAX_TEXTURE_2D = 131072;                   // texels a side (array or pitch2D)
static constexpr size_t MAX_TEXTURE_3D = 16384;                    // texels a side of a 3-D array

struct cudaArray {
    cudaChannelFormatDesc desc;
    size_t width, height, depth;   // texels; a 1-D array has height 1, a 1-D or 2-D one depth 1
    size_t texel;                  // bytes a texel
    char* data;                    // device memory: width * texel bytes a row, rows one after another,
                                   // slices one after another
};

using kc::host_error;

// The texel's bytes, or 0 for a format CUDA does not take: 1, 2 or 4 channels of one width
// (8, 16 or 32 bits; a float 16 or 32), listed from x on.
static size_t texel_bytes(const cudaChannelFormatDesc& d) {
    int bits = d.x, n = 1 + (d.y != 0) + (d.z != 0) + (d.w != 0);
    if (bits != 8 && bits != 16 && bits != 32) return 0;
    if ((d.y && d.y != bits) || (d.z && d.z != bits) || (d.w && d.w != bits) || (d.z && !d.y) || (d.w && !d.z) ||
        n == 3)
        return 0;
    if (d.f == cudaChannelFormatKindFloat ? bits == 8 : d.f != cudaChannelFormatKindSigned &&
                                                            d.f != cudaChannelFormatKindUnsigned)
        return 0;
    return size_t(n) * size_t(bits) / 8;
}

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height, int line) {
    if (!devPtr || !pitch) return host_error(cudaErrorInvalidValue);
    *pitch = (width + MALLOC_PITCH_ALIGNMENT - 1) / MALLOC_PITCH_ALIGNMENT * MALLOC_PITCH_ALIGNMENT;
    return cudaMalloc(devPtr, *pitch * height, line);
}

// Row by row, each row a cudaMemcpy (checked against its allocations as any copy is).
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, int line) {
    if (width > dpitch || width > spitch) return host_error(cudaErrorInvalidPitchValue);
    for (size_t r = 0; r < height; ++r) {
        cudaError_t e = cudaMemcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch,
                                   width, kind, line);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

// A CUDA array of width x height x depth texels (0: the dimension is absent), each side at most `limit`.
static cudaError_t new_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                             size_t depth, size_t limit, int line) {
    if (!array || !desc) return host_error(cudaErrorInvalidValue);
    size_t texel = texel_bytes(*desc);
    if (!texel) return host_error(cudaErrorInvalidChannelDescriptor);
    if (width == 0 || width > limit || height > limit || depth > limit || (depth && !height))
        return host_error(cudaErrorInvalidValue);
    cudaArray a{*desc, width, height ? height : 1, depth ? depth : 1, texel, nullptr};
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&a.data), a.width * a.height * a.depth * texel, line);
    if (e != cudaSuccess) return e;
    *array = new cudaArray(a);
    return cudaSuccess;
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned int, int line) {
    return new_array(array, desc, width, height, 0, MAX_TEXTURE_2D, line);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned int,
                              int line) {
    return new_array(array, desc, extent.width, extent.height, extent.depth,
                     extent.depth ? MAX_TEXTURE_3D : MAX_TEXTURE_2D, line);
}

// One side of a 3-D copy: where its first row starts, and the bytes from a row to the next and
// the rows from a slice to the next. False where the copy would leave the array, or a pitched
// pointer's rows are narrower than what is copied.
struct CopySide { char* base; size_t row_pitch, slice_rows; };
static bool copy_side(const cudaArray* a, cudaPos pos, cudaPitchedPtr p, cudaExtent e, size_t row_bytes,
                      CopySide* side) {
    if (a) {
        if (pos.x > a->width || e.width > a->width - pos.x || pos.y > a->height || e.height > a->height - pos.y ||
            pos.z > a->depth || e.depth > a->depth - pos.z)
            return false;
        size_t row = a->width * a->texel;
        *side = CopySide{a->data + (pos.z * a->height + pos.y) * row + pos.x * a->texel, row, a->height};
        return true;
    }
    if (!p.ptr || pos.x > p.pitch || row_bytes > p.pitch - pos.x || (e.depth > 1 && p.ysize < pos.y + e.height))
        return false;
    *side = CopySide{static_cast<char*>(p.ptr) + (pos.z * p.ysize + pos.y) * p.pitch + pos.x, p.pitch, p.ysize};
    return true;
}

// Row by row, each a cudaMemcpy: the extent's width in texels where an array takes part, else bytes.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p, int line) {
    if (!p || !p->srcArray == !p->srcPtr.ptr || !p->dstArray == !p->dstPtr.ptr) return host_error(cudaErrorInvalidValue);
    const cudaArray* arr = p->srcArray ? p->srcArray : p->dstArray;
    if (p->srcArray && p->dstArray && p->srcArray->texel != p->dstArray->texel)
        return host_error(cudaErrorInvalidValue);
    size_t row_bytes = p->extent.width * (arr ? arr->texel : 1);
    CopySide src, dst;
    if (!copy_side(p->srcArray, p->srcPos, p->srcPtr, p->extent, row_bytes, &src) ||
        !copy_side(p->dstArray, p->dstPos, p->dstPtr, p->extent, row_bytes, &dst))
        return host_error(cudaErrorInvalidValue);
    for (size_t z = 0; z < p->extent.depth; ++z)
        for (size_t y = 0; y < p->extent.height; ++y) {
            cudaError_t e = cudaMemcpy(dst.base + (z * dst.slice_rows + y) * dst.row_pitch,
                                       src.base + (z * src.slice_rows + y) * src.row_pitch, row_bytes, p->kind, line);
            if (e != cudaSuccess) return e;
        }
    return cudaSuccess;
}

cudaError_t cudaFreeArray(cudaArray_t array, int line) {
    if (!array) return cudaSuccess;
    cudaError_t e = cudaFree(array->data, line);
    delete array;
    return e;
}

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
    if (!desc || !array) return host_error(cudaErrorInvalidValue);
    *desc = array->desc;
    return cudaSuccess;
}

// The copy of a width x height (bytes x rows) region at column wOffset (bytes), row hOffset of
// the array, to or from memory of pitch `pitch`; cudaErrorInvalidValue where it leaves the array.
static cudaError_t array_copy(const cudaArray* a, size_t wOffset, size_t hOffset, char* mem, size_t pitch,
                              size_t width, size_t height, cudaMemcpyKind kind, bool to_array, int line) {
    if (!a || !mem) return host_error(cudaErrorInvalidValue);
    size_t row = a->width * a->texel;
    if (wOffset > row || width > row - wOffset || hOffset > a->height || height > a->height - hOffset)
        return host_error(cudaErrorInvalidValue);
    char* at = a->data + hOffset * row + wOffset;
    return to_array ? cudaMemcpy2D(at, row, mem, pitch, width, height, kind, line)
                    : cudaMemcpy2D(mem, pitch, at, row, width, height, kind, line);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind, int line) {
    return array_copy(dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), spitch, width, height,
                      kind, true, line);
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, cudaMemcpyKind kind, int line) {
    return array_copy(src, wOffset, hOffset, static_cast<char*>(dst), dpitch, width, height, kind, false, line);
}

// The deprecated linear copies: `count` bytes from (wOffset, hOffset) on, running on into the
// following rows, which lie one after another.
static cudaError_t array_copy_linear(const cudaArray* a, size_t wOffset, size_t hOffset, char* mem, size_t count,
                                     cudaMemcpyKind kind, bool to_array, int line) {
    if (!a || !mem) return host_error(cudaErrorInvalidValue);
    size_t row = a->width * a->texel, total = row * a->height * a->depth;
    if (wOffset > row || hOffset > a->height) return host_error(cudaErrorInvalidValue);
    size_t start = hOffset * row + wOffset;
    if (start > total || count > total - start) return host_error(cudaErrorInvalidValue);
    return to_array ? cudaMemcpy(a->data + start, mem, count, kind, line)
                    : cudaMemcpy(mem, a->data + start, count, kind, line);
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              cudaMemcpyKind kind, int line) {
    return array_copy_linear(dst, wOffset, hOffset, const_cast<char*>(static_cast<const char*>(src)), count, kind,
                             true, line);
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                cudaMemcpyKind kind, int line) {
    return array_copy_linear(src, wOffset, hOffset, static_cast<char*>(dst), count, kind, false, line);
}

// The texture's format, from a channel descriptor: false where CUDA takes none.
static bool set_format(kc::CpuTexture& t, const cudaChannelFormatDesc& d) {
    size_t bytes = texel_bytes(d);
    if (!bytes) return false;
    t.channel_bits = uint32_t(d.x);
    t.channels = uint32_t(bytes * 8 / t.channel_bits);
    t.channel_kind = uint32_t(d.f);
    return true;
}

// The resource's texels: an array, linear memory (1-D, by index) or pitched 2-D memory.
static cudaError_t set_resource(kc::CpuTexture& t, const cudaResourceDesc& r) {
    switch (r.resType) {
    case cudaResourceTypeArray: {
        const cudaArray* a = r.res.array.array;
        if (!a) return cudaErrorInvalidValue;
        set_format(t, a->desc);
        t.data = reinterpret_cast<uint64_t>(a->data);
        t.width = uint32_t(a->width), t.height = uint32_t(a->height), t.depth = uint32_t(a->depth);
        t.pitch = a->width * a->texel;
        t.slice_pitch = t.pitch * a->height;
        return cudaSuccess;
    }
    case cudaResourceTypeLinear: {
        const auto& l = r.res.linear;
        if (!l.devPtr || reinterpret_cast<uintptr_t>(l.devPtr) % TEXTURE_ALIGNMENT) return cudaErrorInvalidValue;
        if (!set_format(t, l.desc)) return cudaErrorInvalidChannelDescriptor;
        size_t texel = t.channels * t.channel_bits / 8, n = l.sizeInBytes / texel;
        if (n == 0 || n > MAX_TEXTURE_1D_LINEAR) return cudaErrorInvalidValue;
        t.data = reinterpret_cast<uint64_t>(l.devPtr);
        t.width = uint32_t(n), t.height = t.depth = 1;
        t.pitch = l.sizeInBytes;
        return cudaSuccess;
    }
    case cudaResourceTypePitch2D: {
        const auto& p = r.res.pitch2D;
        if (!p.devPtr || reinterpret_cast<uintptr_t>(p.devPtr) % TEXTURE_ALIGNMENT) return cudaErrorInvalidValue;
        if (!set_format(t, p.desc)) return cudaErrorInvalidChannelDescriptor;
        size_t texel = t.channels * t.channel_bits / 8;
        if (p.width == 0 || p.height == 0 || p.width > MAX_TEXTURE_2D || p.height > MAX_TEXTURE_2D ||
            p.pitchInBytes % TEXTURE_PITCH_ALIGNMENT || p.pitchInBytes < p.width * texel)
            return cudaErrorInvalidValue;
        t.data = reinterpret_cast<uint64_t>(p.devPtr);
        t.width = uint32_t(p.width), t.height = uint32_t(p.height), t.depth = 1;
        t.pitch = p.pitchInBytes;
        return cudaSuccess;
    }
    default:   // mipmapped arrays: the CPU runtime has none (cudaMallocMipmappedArray is not provided)
        return cudaErrorInvalidValue;
    }
}

// The sampling state. Linear memory ignores the filter and addressing modes (tex1Dfetch reads it
// by index). Linear filtering needs float results: a float texture, or 8- and 16-bit integers
// read as normalized floats (else cudaErrorInvalidFilterSetting, as an H100's runtime returns);
// 32-bit integers cannot be read as normalized floats.
static cudaError_t set_sampling(kc::CpuTexture& t, const cudaTextureDesc& d, bool linear_memory) {
    for (int k = 0; k < 3; ++k)
        if (unsigned(d.addressMode[k]) > cudaAddressModeBorder) return cudaErrorInvalidValue;
    if (unsigned(d.filterMode) > cudaFilterModeLinear || unsigned(d.readMode) > cudaReadModeNormalizedFloat)
        return cudaErrorInvalidValue;
    bool integer = t.channel_kind != cudaChannelFormatKindFloat;
    if (d.readMode == cudaReadModeNormalizedFloat && integer && t.channel_bits == 32) return cudaErrorInvalidValue;
    t.read_normalized = d.readMode == cudaReadModeNormalizedFloat && integer;
    if (linear_memory) {
        t.filter_mode = cudaFilterModePoint;
        for (int k = 0; k < 3; ++k) t.address_mode[k] = cudaAddressModeBorder;
        return cudaSuccess;
    }
    if (d.filterMode == cudaFilterModeLinear && integer && !t.read_normalized) return cudaErrorInvalidFilterSetting;
    for (int k = 0; k < 3; ++k) t.address_mode[k] = uint32_t(d.addressMode[k]);
    t.filter_mode = uint32_t(d.filterMode);
    t.normalized_coords = d.normalizedCoords != 0;
    for (int k = 0; k < 4; ++k) t.border_color[k] = d.borderColor[k];
    return cudaSuccess;
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texObject, const cudaResourceDesc* resDesc,
                                    const cudaTextureDesc* texDesc, const cudaResourceViewDesc* viewDesc) {
    if (!texObject || !resDesc || !texDesc) return host_error(cudaErrorInvalidValue);
    if (viewDesc) {
        fprintf(stderr, "cudaCreateTextureObject: resource views are not provided by the CPU runtime; pass NULL "
                        "as the view and describe the texels by the resource itself\n");
        return host_error(cudaErrorNotSupported);
    }
    kc::CpuTexture t = {};
    t.magic = kc::TEXTURE_MAGIC;
    cudaError_t e = set_resource(t, *resDesc);
    if (e == cudaSuccess) e = set_sampling(t, *texDesc, resDesc->resType == cudaResourceTypeLinear);
    if (e != cudaSuccess) return host_error(e);
    *texObject = reinterpret_cast<cudaTextureObject_t>(new kc::CpuTexture(t));
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
    kc::CpuTexture* t = reinterpret_cast<kc::CpuTexture*>(texObject);
    if (!t) return cudaSuccess;
    if (t->magic != kc::TEXTURE_MAGIC) return host_error(cudaErrorInvalidValue);
    // A fetch through it after this is reported (texture_indirect_functions.h); volatile, for a
    // store just before a delete is otherwise one the compiler may drop.
    reinterpret_cast<volatile uint32_t&>(t->magic) = 0;
    delete t;
    return cudaSuccess;
}
