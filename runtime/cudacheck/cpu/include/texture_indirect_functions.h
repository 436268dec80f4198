// Texture objects in device code: cudaTextureObject_t and the fetches tex1Dfetch, tex1D, tex2D,
// tex3D, tex1DLod and tex2DLod, computed as the CUDA Programming Guide's appendix on texture
// fetching describes them. cuda_cpu.h includes it, as nvcc and NVRTC give these to every kernel.
//
// A cudaTextureObject_t is the address of a kc::CpuTexture (kc_abi.h), made by the host API
// (kc_host_texture.cpp) or by cudacheck.texture (Python). A fetch:
//   - addresses each dimension: unnormalized coordinates are texel positions in [0, size), and
//     there only clamp and border apply (wrap and mirror act as clamp); a normalized coordinate
//     is truncated to fixed point (21 to 23 fractional bits: coordinate_bits) and times the
//     size exactly, as an H100's texture unit takes it (normalized_axis). A texel index outside
//     the texture is clamped to the edge, wrapped around, mirrored (in a period of twice the
//     size) or, in border mode, reads the border colour;
//   - point filtering reads texel floor(x);
//   - linear filtering reads texels floor(xb) and floor(xb) + 1 with xb = x - 0.5 and weighs
//     them with the fraction of xb rounded to 9-bit fixed point with 8 fractional bits (256
//     steps, 1.0 included), as the hardware does: (1-a) T[i] + a T[i+1], summed exactly and
//     rounded once (in 2-D and 3-D each corner's weight in 1/256 too: weights());
//   - readMode cudaReadModeNormalizedFloat reads 8- and 16-bit integers as floats: unsigned
//     v / (2^bits - 1), signed max(v / (2^(bits-1) - 1), -1);
//   - tex1Dfetch reads linear memory by integer index, unfiltered, zeros outside [0, size).
// The weights round to the nearest 1/256, ties up, as a GPU's 1-D results posted on NVIDIA's forum
// and an H100's show (tests/runtime/test_textures.py, logs/2026-12-07-texture-filtering.md).
#pragma once
#include "../src/kc_abi.h"

typedef unsigned long long cudaTextureObject_t;

// The formats and modes, which device code sees too (as with nvcc and NVRTC); the descriptors
// that use them are the host's (kc_host.h).
enum cudaChannelFormatKind {
    cudaChannelFormatKindSigned = 0,
    cudaChannelFormatKindUnsigned = 1,
    cudaChannelFormatKindFloat = 2,
    cudaChannelFormatKindNone = 3,
};
struct cudaChannelFormatDesc { int x, y, z, w; cudaChannelFormatKind f; };
enum cudaResourceType {
    cudaResourceTypeArray = 0,
    cudaResourceTypeMipmappedArray = 1,
    cudaResourceTypeLinear = 2,
    cudaResourceTypePitch2D = 3,
};
enum cudaTextureAddressMode {
    cudaAddressModeWrap = 0,
    cudaAddressModeClamp = 1,
    cudaAddressModeMirror = 2,
    cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };

namespace kc {
[[noreturn]] void assert_fail(const char* expr, int line);
namespace tex {

// A fetch's four channels as the read gives them: a float's bits (a float texture, or an 8- or
// 16-bit integer one read as normalized floats), or a 32-bit integer's (sign- or zero-extended).
struct Channels { uint32_t bits[4]; };

// No memcpy here: in checked mode a kernel's memcpy is the checked runtime's, which would take
// a texel's read for an access outside every array of the launch.
inline uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
inline float bits_float(uint32_t b) { return __builtin_bit_cast(float, b); }

// An IEEE half's bits as a float (exact: every half is a float).
inline float half_float(uint16_t h) {
    uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 31, frac = h & 1023;
    if (exp == 31) return bits_float(sign | 0x7f800000u | (frac << 13));
    if (exp == 0) return bits_float(sign) + (sign ? -1.0f : 1.0f) * float(frac) * 0x1p-24f;
    return bits_float(sign | ((exp + 112) << 23) | (frac << 13));
}

// The texture object and its texels are read without checked mode's instrumentation: the
// object lies in the host's memory, not a device allocation, and a fetch is in bounds by
// construction (its addressing modes keep it so). Every function that reads either says so.
#define KC_TEX_READS __attribute__((no_sanitize_thread))

KC_TEX_READS inline bool filtered_floats(const CpuTexture& t) { return t.channel_kind == 2 || t.read_normalized; }

// One texel, inside the texture.
KC_TEX_READS inline Channels texel(const CpuTexture& t, int64_t x, int64_t y, int64_t z) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(t.data) + uint64_t(z) * t.slice_pitch +
                             uint64_t(y) * t.pitch + uint64_t(x) * t.channels * (t.channel_bits / 8);
    Channels c = {{0, 0, 0, 0}};
    for (uint32_t k = 0; k < t.channels; ++k) {
        uint32_t raw = 0;
        for (uint32_t b = 0; b < t.channel_bits / 8; ++b) raw |= uint32_t(p[k * (t.channel_bits / 8) + b]) << (8 * b);
        if (t.channel_kind == 2) {   // float: 32 bits, or a half
            c.bits[k] = t.channel_bits == 32 ? raw : float_bits(half_float(uint16_t(raw)));
            continue;
        }
        bool is_signed = t.channel_kind == 0;
        int32_t v = t.channel_bits == 32 ? int32_t(raw)
                    : t.channel_bits == 16 ? (is_signed ? int32_t(int16_t(raw)) : int32_t(uint16_t(raw)))
                                           : (is_signed ? int32_t(int8_t(raw)) : int32_t(uint8_t(raw)));
        if (!t.read_normalized) {
            c.bits[k] = uint32_t(v);
            continue;
        }
        float top = float((1u << (t.channel_bits - (is_signed ? 1 : 0))) - 1);
        float f = float(v) / top;
        c.bits[k] = float_bits(f < -1.0f ? -1.0f : f);
    }
    return c;
}

// What a texel outside the texture reads in border mode: the border colour (an integer texture
// read as integers gets its channels converted to integers).
KC_TEX_READS inline Channels border(const CpuTexture& t) {
    Channels c;
    for (int k = 0; k < 4; ++k)
        c.bits[k] = filtered_floats(t) ? float_bits(t.border_color[k]) : uint32_t(int32_t(t.border_color[k]));
    return c;
}

// An integer texel index from a float position: saturated well outside any texture, NaN as
// the far negative end (it then clamps to texel 0 or reads the border).
inline int64_t index_of(float f) {
    if (!(f > -1e12f)) return -(int64_t(1) << 40);
    if (f > 1e12f) return int64_t(1) << 40;
    return int64_t(floorf(f));
}

constexpr uint32_t WRAP = 0, CLAMP = 1, MIRROR = 2, BORDER = 3;

// The addressing mode in effect: wrap and mirror need normalized coordinates.
KC_TEX_READS inline uint32_t mode_of(const CpuTexture& t, int d) {
    uint32_t m = t.address_mode[d];
    return t.normalized_coords || m == BORDER ? m : CLAMP;
}

// Texel index j of a dimension of `size` texels as the addressing mode places it; -1: the border.
// Mirror reflects the index in a period of two sizes (normalized coordinates only, as wrap).
inline int64_t place(uint32_t mode, int64_t j, uint32_t size) {
    int64_t n = size;
    if (j >= 0 && j < n) return j;
    if (mode == BORDER) return -1;
    if (mode == WRAP) return ((j % n) + n) % n;
    if (mode == MIRROR) {
        int64_t k = ((j % (2 * n)) + 2 * n) % (2 * n);
        return k < n ? k : 2 * n - 1 - k;
    }
    return j < 0 ? 0 : n - 1;
}

struct Axis { int64_t lo, hi; uint32_t weight; };   // texels lo and hi, hi weighing weight/256

// The fractional bits a GPU keeps of a normalized coordinate, one count for every axis of a
// texture, by its width and height: 21 up to 8192 texels, 22 up to 65536, 23 above (an H100's
// 1-D textures of 1 to 131071 texels and 2-D of 13 x 10000, 10000 x 13 and 3 x 40000; a 3-D
// texture's depth counts otherwise, not modelled: logs/2026-12-07-texture-coordinates.md).
KC_TEX_READS inline int coordinate_bits(const CpuTexture& t) {
    uint32_t n = t.width > t.height ? t.width : t.height;
    return 21 + (n > 8192) + (n > 65536);
}

// The weight of a fraction of `bits` bits in 1/256, rounded to nearest, ties up: 0..256.
inline uint32_t weight_of(uint64_t frac, int bits) {
    return uint32_t((frac + (uint64_t(1) << (bits - 9))) >> (bits - 8));
}

// A normalized coordinate as a GPU's texture unit takes it: truncated to fixed point
// (coordinate_bits; NaN as 0), then times the size exactly. Point filtering reads the texel it
// falls in; linear the texels either side of it less half a texel, the fraction rounded to 1/256;
// the mode places each index (place).
KC_TEX_READS inline Axis normalized_axis(const CpuTexture& t, uint32_t m, float x, uint32_t size) {
    const int bits = coordinate_bits(t);
    // beyond 2^24 every float is an even integer: only the parity of the whole part counts
    // (mirror), and a large one reads as the edge (clamp) or the border
    if (!(x == x)) x = 0.0f;
    if (x > 0x1p24f) x = 0x1p24f;
    if (x < -0x1p24f) x = -0x1p24f;
    const int64_t fixed = int64_t(floor(double(x) * double(uint64_t(1) << bits)));   // exact: a power of 2
    // the position in texels, in 2^-bits: the whole part's texels (>> floors) and the fraction's,
    // exactly (a side has at most 2^17 texels, as on a GPU, so nothing overflows)
    const uint64_t fraction = (uint64_t(1) << bits) - 1;
    const int64_t base = (fixed >> bits) * int64_t(size);
    const int64_t scaled = int64_t((uint64_t(fixed) & fraction) * size);
    if (t.filter_mode == 0) {
        int64_t j = place(m, base + (scaled >> bits), size);
        return Axis{j, j, 0};
    }
    const int64_t b = scaled - (int64_t(1) << (bits - 1));   // less half a texel
    const int64_t i = base + (b >> bits);
    return Axis{place(m, i, size), place(m, i + 1, size), weight_of(uint64_t(b) & fraction, bits)};
}

KC_TEX_READS inline Axis axis(const CpuTexture& t, int d, float x, uint32_t size) {
    uint32_t m = mode_of(t, d);
    if (t.normalized_coords) return normalized_axis(t, m, x, size);
    if (t.filter_mode == 0) {
        int64_t j = place(m, index_of(x), size);
        return Axis{j, j, 0};
    }
    float b = x - 0.5f;
    int64_t i = index_of(b);
    float frac = b - floorf(b);
    // 9-bit fixed point, 8 fractional bits: 0..256, ties up (an H100 gives 129/256 for 128.5/256;
    // frac * 256 + 0.5 is exact in float). NaN's fraction (none) weighs 0.
    uint32_t w = frac == frac ? uint32_t(floorf(frac * 256.0f + 0.5f)) : 0;
    return Axis{place(m, i, size), place(m, i + 1, size), w};
}

KC_TEX_READS inline const CpuTexture& object(cudaTextureObject_t handle, int line) {
    const CpuTexture* t = reinterpret_cast<const CpuTexture*>(handle);
    if (!t || t->magic != TEXTURE_MAGIC)
        assert_fail("a texture fetch given a cudaTextureObject_t that cudaCreateTextureObject did not return "
                    "(0, or not a texture object)", line);
    return *t;
}

KC_TEX_READS inline Channels read(const CpuTexture& t, int64_t x, int64_t y, int64_t z) {
    return x < 0 || y < 0 || z < 0 ? border(t) : texel(t, x, y, z);
}

// The four corners' weights of two axes p and q, as an H100 weighs a 2-D fetch (its four weights
// sum to 256): the lower corner's the product of the axes' lower weights rounded to 1/256, ties
// up, the others what remains of their row and column. w[0]: p and q lower, w[1]: p upper,
// w[2]: q upper, w[3]: both upper.
inline void plane_weights(uint32_t p_upper, uint32_t q_upper, uint32_t* w) {
    uint32_t lp = 256 - p_upper, lq = 256 - q_upper;
    w[0] = (lp * lq + 128) >> 8;
    w[1] = lq - w[0];
    w[2] = lp - w[0];
    w[3] = 256 - w[0] - w[1] - w[2];
}

// The corners' weights in 1/256, corner bit d set for axis d's upper texel (x varying fastest). In
// 1-D the axis's; in 2-D plane_weights'. In 3-D the plane of x and z first, each of its corners
// then split along y so (its lower texel's share rounded ties up): of the rules tried, the one
// closest to an H100's (80% of 400,000 random fetches bit for bit; splitting the 2-D weights
// along z, 66%), not yet the GPU's own (logs/2026-12-07-texture-coordinates.md).
inline void weights(const Axis* a, int dims, uint32_t* w) {
    w[0] = 256 - a[0].weight;
    w[1] = a[0].weight;
    if (dims == 2) plane_weights(a[0].weight, a[1].weight, w);
    if (dims < 3) return;
    uint32_t xz[4], ly = 256 - a[1].weight;
    plane_weights(a[0].weight, a[2].weight, xz);
    for (int c = 0; c < 4; ++c) {
        int at = (c & 1) | (c & 2) << 1;   // x's bit stays bit 0, z's goes to bit 2
        w[at] = (xz[c] * ly + 128) >> 8;
        w[at | 2] = xz[c] - w[at];
    }
}

// tex1D, tex2D, tex3D: `dims` coordinates of xyz, the rest 0.
KC_TEX_READS inline Channels sample(cudaTextureObject_t handle, int dims, float x, float y, float z, int line) {
    const CpuTexture& t = object(handle, line);
    Axis a[3] = {axis(t, 0, x, t.width), {0, 0, 0}, {0, 0, 0}};
    if (dims > 1) a[1] = axis(t, 1, y, t.height);
    if (dims > 2) a[2] = axis(t, 2, z, t.depth);
    if (t.filter_mode == 0) return read(t, a[0].lo, a[1].lo, a[2].lo);
    // The weighted sum over the 2^dims corners, each corner's weight in 1/256 too (weights()). The
    // sum of weights times texels is exact in double and rounds once to float: an H100 agrees with
    // 97.4% of 400,000 random 1-D fetches and 94.2% of 2-D ones, and differs from the rest by an
    // ulp or a few where the texels' magnitudes differ most (logs/2026-12-07-texture-filtering.md).
    uint32_t w[8];
    weights(a, dims, w);
    double sum[4] = {0, 0, 0, 0};
    for (int corner = 0; corner < (1 << dims); ++corner) {
        int64_t at[3];
        for (int d = 0; d < 3; ++d) at[d] = d < dims && (corner >> d) & 1 ? a[d].hi : a[d].lo;
        Channels c = read(t, at[0], at[1], at[2]);
        for (int k = 0; k < 4; ++k) sum[k] += double(w[corner]) * double(bits_float(c.bits[k]));
    }
    Channels out;
    for (int k = 0; k < 4; ++k) out.bits[k] = float_bits(float(sum[k] / 256.0));
    return out;
}

// tex1Dfetch: linear memory by integer index; zeros outside it.
KC_TEX_READS inline Channels fetch(cudaTextureObject_t handle, int i, int line) {
    const CpuTexture& t = object(handle, line);
    if (i < 0 || uint32_t(i) >= t.width) return Channels{{0, 0, 0, 0}};
    return texel(t, i, 0, 0);
}

// The fetch's result as the type the kernel names (float, int4, uchar2 ...): its first
// channels, as floats or integers of the type's channel type.
template <class T> struct shape { using channel = T; static constexpr int n = 1; };
#define KC_TEX_SHAPE(V, C)                                                              \
    template <> struct shape<V##1> { using channel = C; static constexpr int n = 1; }; \
    template <> struct shape<V##2> { using channel = C; static constexpr int n = 2; }; \
    template <> struct shape<V##4> { using channel = C; static constexpr int n = 4; };
KC_TEX_SHAPE(float, float)
KC_TEX_SHAPE(int, int)
KC_TEX_SHAPE(uint, unsigned int)
KC_TEX_SHAPE(char, signed char)
KC_TEX_SHAPE(uchar, unsigned char)
KC_TEX_SHAPE(short, short)
KC_TEX_SHAPE(ushort, unsigned short)
#undef KC_TEX_SHAPE
inline void put(float& c, uint32_t bits) { c = bits_float(bits); }
template <class I> inline void put(I& c, uint32_t bits) { c = I(int32_t(bits)); }
template <class T> inline T as(const Channels& c) {
    using C = typename shape<T>::channel;
    static_assert(sizeof(T) == sizeof(C) * shape<T>::n,
                  "a texture fetch returns float, int, unsigned int, char, unsigned char, short, unsigned short or "
                  "their 1-, 2- and 4-vectors");
    T out;
    C* ch = reinterpret_cast<C*>(&out);   // T is n channels of C, one after another
    for (int k = 0; k < shape<T>::n; ++k) put(ch[k], c.bits[k]);
    return out;
}

#undef KC_TEX_READS
}  // namespace tex
}  // namespace kc

// CUDA's signatures (a template over the result type, and the older form that writes through a
// pointer); the trailing line argument names the fetch in a report of a bad object.
template <class T> inline T tex1Dfetch(cudaTextureObject_t t, int x, int kc_line = __builtin_LINE()) {
    return ::kc::tex::as<T>(::kc::tex::fetch(t, x, kc_line));
}
template <class T> inline T tex1D(cudaTextureObject_t t, float x, int kc_line = __builtin_LINE()) {
    return ::kc::tex::as<T>(::kc::tex::sample(t, 1, x, 0, 0, kc_line));
}
template <class T> inline T tex2D(cudaTextureObject_t t, float x, float y, int kc_line = __builtin_LINE()) {
    return ::kc::tex::as<T>(::kc::tex::sample(t, 2, x, y, 0, kc_line));
}
template <class T> inline T tex3D(cudaTextureObject_t t, float x, float y, float z, int kc_line = __builtin_LINE()) {
    return ::kc::tex::as<T>(::kc::tex::sample(t, 3, x, y, z, kc_line));
}
// A texture object of the CPU runtime has one level (no mipmapped arrays): every level reads it.
template <class T> inline T tex1DLod(cudaTextureObject_t t, float x, float, int kc_line = __builtin_LINE()) {
    return tex1D<T>(t, x, kc_line);
}
template <class T> inline T tex2DLod(cudaTextureObject_t t, float x, float y, float, int kc_line = __builtin_LINE()) {
    return tex2D<T>(t, x, y, kc_line);
}
template <class T> inline void tex1Dfetch(T* r, cudaTextureObject_t t, int x, int kc_line = __builtin_LINE()) {
    *r = tex1Dfetch<T>(t, x, kc_line);
}
template <class T> inline void tex1D(T* r, cudaTextureObject_t t, float x, int kc_line = __builtin_LINE()) {
    *r = tex1D<T>(t, x, kc_line);
}
template <class T> inline void tex2D(T* r, cudaTextureObject_t t, float x, float y, int kc_line = __builtin_LINE()) {
    *r = tex2D<T>(t, x, y, kc_line);
}
template <class T>
inline void tex3D(T* r, cudaTextureObject_t t, float x, float y, float z, int kc_line = __builtin_LINE()) {
    *r = tex3D<T>(t, x, y, z, kc_line);
}
