"""Texture objects on the CPU runtime, held to the CUDA Programming Guide's texture-fetching
formulas, modelled here in NumPy: each addressing mode (clamp, wrap, mirror, border) and filter
mode (point: bit for bit; linear: bit for bit against the model of its 9-bit weights, and near
the exact float64 interpolation), normalized coordinates, read modes, element types, tex1Dfetch
on linear memory, awkward sizes; a whole program through the host API; the errors of bad
descriptors; texture references refused, naming texture objects.

The model's float operations are float32 where the runtime's are (the half-texel offset at texel
coordinates); a normalized coordinate is fixed point, scaled exactly, as an H100 takes it (axis();
logs/2026-12-07-texture-coordinates.md); linear filtering's weights round as an H100's do (an axis's
to 1/256 ties up, a 2-D corner's as corner_weights says) and its sum is exact, rounded once: an
H100 gives these bits for 97.4% of random 1-D fetches and 94.2% of 2-D ones, and differs from the
rest by an ulp or a few (logs/2026-12-07-texture-filtering.md)."""
import base64
import re

import numpy as np
import pytest

import cudacheck
from cudacheck import texture as tex
from tests.support import ROOT
from tiling_course.measure import model as measurements

F32 = np.float32
WRAP, CLAMP, MIRROR, BORDER = (tex.cudaAddressModeWrap, tex.cudaAddressModeClamp, tex.cudaAddressModeMirror,
                               tex.cudaAddressModeBorder)
MODE_NAMES = {WRAP: "wrap", CLAMP: "clamp", MIRROR: "mirror", BORDER: "border"}

KERNELS = r'''
extern "C" __global__ void sample1(cudaTextureObject_t t, const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}
extern "C" __global__ void sample2(cudaTextureObject_t t, const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, x[i], y[i]);
}
extern "C" __global__ void sample3(cudaTextureObject_t t, const float* x, const float* y, const float* z, float* out,
                                   int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, x[i], y[i], z[i]);
}
extern "C" __global__ void sample2_float4(cudaTextureObject_t t, const float* x, const float* y, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, x[i], y[i]);
}
extern "C" __global__ void sample2_float2(cudaTextureObject_t t, const float* x, const float* y, float2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tex2D(&out[i], t, x[i], y[i]);   // the form that writes through a pointer
}
extern "C" __global__ void sample2_int4(cudaTextureObject_t t, const float* x, const float* y, int4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int4>(t, x[i], y[i]);
}
extern "C" __global__ void sample2_uchar4(cudaTextureObject_t t, const float* x, const float* y, uchar4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<uchar4>(t, x[i], y[i]);
}
extern "C" __global__ void sample2_short2(cudaTextureObject_t t, const float* x, const float* y, short2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<short2>(t, x[i], y[i]);
}
extern "C" __global__ void sample2_unsigned(cudaTextureObject_t t, const float* x, const float* y, unsigned* out,
                                            int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<unsigned>(t, x[i], y[i]);
}
// mummergpu's texture reads, as texture objects: uint4 and char from 2-D arrays, point-sampled
extern "C" __global__ void sample2_uint4(cudaTextureObject_t t, const float* x, const float* y, uint4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<uint4>(t, x[i], y[i]);
}
extern "C" __global__ void sample2_char(cudaTextureObject_t t, const float* x, const float* y, char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<char>(t, x[i], y[i]);
}
extern "C" __global__ void lod(cudaTextureObject_t t, const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(t, x[i], y[i], 3.0f) - tex1DLod<float>(t, x[i], 1.0f) + tex1D<float>(t, x[i]);
}
extern "C" __global__ void fetch(cudaTextureObject_t t, const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, idx[i]);
}
extern "C" __global__ void fetch_int2(cudaTextureObject_t t, const int* idx, int2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int2>(t, idx[i]);
}
extern "C" __global__ void fetch_char(cudaTextureObject_t t, const int* idx, char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tex1Dfetch(&out[i], t, idx[i]);
}
'''


@pytest.fixture(scope="module")
def mod():
    return cudacheck.RawModule(KERNELS, backend="cpu")


def launch(mod, name, tex_obj, coords, out, n=None):
    """One thread per coordinate (n of them: out's length, unless its elements are vectors)."""
    n = out.shape[0] if n is None else n
    mod.get_function(name)((n + 127) // 128, 128, (tex_obj, *coords, out, np.int32(n)))
    return out


# ---- the model: the Guide's formulas --------------------------------------------------------

def effective(mode, normalized):
    """Wrap and mirror need normalized coordinates; without them a texture clamps."""
    return mode if normalized or mode == BORDER else CLAMP


def coordinate_bits(width, height=1):
    """The fractional bits of a normalized coordinate that a GPU keeps on every axis of a texture
    of this width and height: 21 up to 8192 texels, 22 up to 65536, 23 above (an H100's;
    logs/2026-12-07-texture-coordinates.md)."""
    n = max(width, height)
    return 21 + (n > 8192) + (n > 65536)


def axis(x, n, mode, normalized, linear, bits):
    """Each coordinate's (lower texel, upper texel, the upper's weight in 1/256) on one axis of n
    texels. Unnormalized: x - 0.5 in float32 (linear), its fraction rounded to 1/256, ties up.
    Normalized: x truncated to `bits` fractional bits (the texture's coordinate_bits; NaN as 0),
    times n exactly."""
    x = x.astype(F32)
    if not normalized:
        if not linear:
            j = place(mode, np.floor(x).astype(np.int64), n)
            return j, j, np.zeros(len(x), np.int64)
        b = (x - F32(0.5)).astype(F32)
        fl = np.floor(b)
        i = fl.astype(np.int64)
        return place(mode, i, n), place(mode, i + 1, n), np.floor((b - fl) * F32(256) + F32(0.5)).astype(np.int64)
    x = np.clip(np.where(np.isnan(x), 0, x).astype(np.float64), -2.0 ** 24, 2.0 ** 24)
    fixed = np.floor(x * 2.0 ** bits).astype(np.int64)                # exact: a power of 2
    scaled = (fixed & (2 ** bits - 1)) * n                             # in 2**-bits texels
    base = (fixed >> bits) * n
    if not linear:
        j = place(mode, base + (scaled >> bits), n)
        return j, j, np.zeros(len(x), np.int64)
    b = scaled - 2 ** (bits - 1)                                    # less half a texel
    i = base + (b >> bits)
    w = ((b & (2 ** bits - 1)) + 2 ** (bits - 9)) >> (bits - 8)    # to 1/256, ties up
    return place(mode, i, n), place(mode, i + 1, n), w


def place(mode, j, n):
    """Texel index j of a dimension of n texels under the addressing mode; -1 is the border.
    Mirror reflects it in a period of 2n."""
    if mode == BORDER:
        return np.where((j >= 0) & (j < n), j, -1)
    if mode == WRAP:
        return np.mod(j, n)
    if mode == MIRROR:
        k = np.mod(j, 2 * n)
        return np.where(k < n, k, 2 * n - 1 - k)
    return np.clip(j, 0, n - 1)


def read(texels, border, idx):
    """texels (d, h, w, channels) at the indices (x, y, z), the border colour where any is -1."""
    x, y, z = idx
    outside = (x < 0) | (y < 0) | (z < 0)
    got = texels[np.maximum(z, 0), np.maximum(y, 0), np.maximum(x, 0)]
    return np.where(outside[:, None], np.asarray(border, texels.dtype)[None, :texels.shape[3]], got)


def model(texels, coords, modes, linear, normalized, border=(0, 0, 0, 0)):
    """tex1D/2D/3D of `texels` (d, h, w, channels) at `coords` (x[, y[, z]]), each axis as axis()
    takes it: point filtering reads texel floor(x); linear filtering weighs texels floor(xb) and
    floor(xb) + 1, xb = x - 0.5, by the fraction of xb rounded to 1/256 (ties up), a corner's
    weight as corner_weights gives it, the sum exact and rounded once to float32."""
    sizes = texels.shape[2], texels.shape[1], texels.shape[0]
    bits = coordinate_bits(sizes[0], sizes[1])
    axes = [axis(x, sizes[d], effective(modes[d], normalized), normalized, linear, bits) for d, x in enumerate(coords)]
    zero = np.zeros(len(coords[0]), np.int64)
    while len(axes) < 3:
        axes.append((zero, zero, zero))
    if not linear:
        return read(texels, border, [a[0] for a in axes])
    total = 0.0
    for corner, weight in enumerate(corner_weights([a[2] for a in axes[:len(coords)]])):
        idx = [axes[d][1] if d < len(coords) and (corner >> d) & 1 else axes[d][0] for d in range(3)]
        total = total + weight[:, None] * read(texels, border, idx).astype(np.float64)
    return (total / 256).astype(F32)


def plane(p_upper, q_upper):
    """Two axes' four corners' weights in 1/256 (p lower and q lower, p upper, q upper, both): the
    lower corner's the product rounded ties up, the others the rest of their row and column (an
    H100's 2-D fetches)."""
    lp, lq = 256 - p_upper, 256 - q_upper
    w00 = (lp * lq + 128) >> 8
    return [w00, lq - w00, lp - w00, 256 - lq - lp + w00]


def corner_weights(upper):
    """The 2^dims corners' weights in 1/256 from each axis's upper weight, corner bit d for axis d's
    upper texel: in 2-D plane()'s; in 3-D the plane of x and z, each of its corners then split
    along y, the lower texel's share rounded ties up (of the rules tried, the closest to an
    H100's: test_trilinear_weights_are_closest_to_an_h100s)."""
    if len(upper) == 1:
        return [256 - upper[0], upper[0]]
    if len(upper) == 2:
        return plane(upper[0], upper[1])
    w = [None] * 8
    for c, wxz in enumerate(plane(upper[0], upper[2])):
        at = (c & 1) | (c & 2) << 1
        w[at] = (wxz * (256 - upper[1]) + 128) >> 8
        w[at | 2] = wxz - w[at]
    return w


def exact_bilinear(texels, x, y, modes):
    """Linear filtering of unnormalized coordinates in float64 with exact weights (no 9 bits)."""
    h, w = texels.shape[1:3]
    bx, by = x.astype(np.float64) - 0.5, y.astype(np.float64) - 0.5
    i, j = np.floor(bx).astype(np.int64), np.floor(by).astype(np.int64)
    a, b = bx - i, by - j
    out = 0
    for di, dj, wt in ((0, 0, (1 - a) * (1 - b)), (1, 0, a * (1 - b)), (0, 1, (1 - a) * b), (1, 1, a * b)):
        idx = (place(modes[0], i + di, w), place(modes[1], j + dj, h), np.zeros_like(i))
        out = out + wt[:, None] * read(texels.astype(np.float64), (0, 0, 0, 0), idx)
    return out


# ---- helpers: textures from NumPy -----------------------------------------------------------

def float_array(data):
    """A float CUDA array holding `data` (depth?, height?, width), and its texels as the model's
    (d, h, w, 1)."""
    data = np.asarray(data, F32)
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    arr = tex.CUDAarray(ch, *(list(data.shape)[::-1] + [0] * (3 - data.ndim)))
    arr.copy_from(data)
    return arr, data.reshape((1,) * (3 - data.ndim) + data.shape + (1,))


def float_texture(rng, shape):
    """A float texture of `shape` (depth?, height?, width) with random texels (float_array)."""
    return float_array(rng.standard_normal(shape))


def texture(arr, modes, filter_mode, normalized, read_mode=tex.cudaReadModeElementType, border=None):
    return tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeArray, cuArr=arr),
                             tex.TextureDescriptor(modes, filter_mode, read_mode, borderColors=border,
                                                   normalizedCoords=normalized))


def coordinates(rng, n, size, normalized):
    """Random coordinates over the texture and well past its edges, with texel centres and
    edges (k + 0.5 and k exactly, where point filtering and the half-texel offset turn)."""
    lo, hi = -1.5 * size, 2.5 * size
    x = rng.uniform(lo, hi, n)
    x[: n // 4] = np.round(x[: n // 4])
    x[n // 4: n // 2] = np.round(x[n // 4: n // 2]) + 0.5
    return (x / size if normalized else x).astype(F32)


SHAPES_2D = [(3, 5), (1, 7), (6, 1), (1, 1), (9, 13)]   # (height, width): odd, one row, one column, one texel


@pytest.mark.parametrize("mode", [CLAMP, BORDER, WRAP, MIRROR], ids=MODE_NAMES.get)
@pytest.mark.parametrize("normalized", [False, True], ids=["texels", "normalized"])
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_point_filtering_is_the_guides_texel_bit_for_bit(mod, mode, normalized, shape, rng):
    arr, texels = float_texture(rng, shape)
    border = (rng.standard_normal(), 0, 0, 0)
    t = texture(arr, (mode, mode), tex.cudaFilterModePoint, normalized, border=border)
    n = 600
    x, y = coordinates(rng, n, shape[1], normalized), coordinates(rng, n, shape[0], normalized)
    got = launch(mod, "sample2", t, (x, y), np.zeros(n, F32))
    want = model(texels, (x, y), (mode, mode), False, normalized, border)[:, 0]
    np.testing.assert_array_equal(got.view(np.uint32), want.astype(F32).view(np.uint32))


@pytest.mark.parametrize("mode", [CLAMP, BORDER, WRAP, MIRROR], ids=MODE_NAMES.get)
@pytest.mark.parametrize("normalized", [False, True], ids=["texels", "normalized"])
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_linear_filtering_is_the_9_bit_weights_formula_bit_for_bit(mod, mode, normalized, shape, rng):
    arr, texels = float_texture(rng, shape)
    t = texture(arr, (mode, mode), tex.cudaFilterModeLinear, normalized)
    n = 600
    x, y = coordinates(rng, n, shape[1], normalized), coordinates(rng, n, shape[0], normalized)
    got = launch(mod, "sample2", t, (x, y), np.zeros(n, F32))
    want = model(texels, (x, y), (mode, mode), True, normalized)[:, 0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    if not normalized and mode != BORDER:
        # and near the exact interpolation: a weight off by at most 1/512 of the neighbours' span
        exact = exact_bilinear(texels, x, y, (effective(mode, False),) * 2)[:, 0]
        span = np.abs(texels).max() * 2
        np.testing.assert_allclose(got, exact, rtol=0, atol=span / 512 * 2 + 1e-5)


def test_linear_weights_take_256_steps_not_the_float_fraction(mod, rng):
    """Between texels 0.0 and 1.0 the result is the weight itself: multiples of 1/256, where a
    float interpolation would give the coordinate's fraction."""
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    arr = tex.CUDAarray(ch, 2)
    arr.copy_from(np.array([0.0, 1.0], F32))
    t = texture(arr, (CLAMP,), tex.cudaFilterModeLinear, False)
    x = (0.5 + rng.uniform(0, 1, 500)).astype(F32)
    got = launch(mod, "sample1", t, (x,), np.zeros(500, F32))
    np.testing.assert_array_equal(got * 256, np.floor((x - F32(0.5)) * 256 + 0.5))
    assert np.abs(got - (x - 0.5)).max() > 1e-4   # a float lerp it is not


def test_linear_filtering_gives_what_a_gpu_gave(mod):
    """A GPU's tex1D of a 2-texel texture [1, 2], normalized coordinates, clamped, linear, at the
    keys k/20, as measured and posted on NVIDIA's developer forum (thread "tex1D accuracy"): the
    weights round to the nearest 1/256 (0.3 gives 1.1015625, where truncation gives 1.09765625)."""
    measured = [1, 1, 1, 1, 1, 1, 1.1015625, 1.19921875, 1.30078125, 1.3984375, 1.5, 1.6015625, 1.69921875,
                1.80078125, 1.8984375, 2, 2, 2, 2, 2]
    arr = tex.CUDAarray(tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat), 2)
    arr.copy_from(np.array([1, 2], F32))
    t = texture(arr, (CLAMP,), tex.cudaFilterModeLinear, True)
    keys = np.array([k / 20 for k in range(20)], F32)
    got = launch(mod, "sample1", t, (keys,), np.zeros(20, F32))
    assert got.tolist() == measured


H100_NORMALIZED = measurements.read(ROOT / "tests" / "data" / "texture-normalized-h100.json")
H100_SIZES = measurements.read(ROOT / "tests" / "data" / "texture-sizes-h100.json")
MODE_BY_NAME = {name: mode for mode, name in MODE_NAMES.items()}


def _decoded(record, *keys):
    """A recorded run's arrays of 32-bit words (base64, little-endian)."""
    return [np.frombuffer(base64.b64decode(record.extra[k]), "<u4") for k in keys]


def h100_1d_fetches(mod, record, border=None):
    """(x, the CPU runtime's fetches' bits, the H100's) of a record of tex1D<float> at normalized
    coordinates from a texture of record.config["size"] texels, texel i holding i."""
    n, mode, filt = (record.config[k] for k in ("size", "address_mode", "filter_mode"))
    x, want = _decoded(record, "x", "fetched")
    arr, _ = float_array(np.arange(n))
    filter_mode = tex.cudaFilterModeLinear if filt == "linear" else tex.cudaFilterModePoint
    got = launch(mod, "sample1", texture(arr, (MODE_BY_NAME[mode],), filter_mode, True, border=border),
                 (x.view(F32),), np.zeros(len(x), F32))
    return x.view(F32), got.view(np.uint32), want


def test_normalized_coordinates_fetch_what_an_h100_fetched(mod):
    """2,000 fetches an H100 made (tests/data/texture-normalized-h100.json): a 1-D texture whose texel
    i holds i, sizes 3 to 10,000, every addressing mode, point and linear, most within 10^-5 texel
    of where the texel or the weight turns. The CPU runtime returns the same bits for each, where
    scaling the float coordinate by the size (the Guide's formula in float32) misses 147 of the 500
    point fetches of clamp and wrap."""
    float_formula_misses = 0
    border = (H100_NORMALIZED.meta.extra["border_color"],) * 4
    for record in H100_NORMALIZED.records:
        n, mode, filt = (record.config[k] for k in ("size", "address_mode", "filter_mode"))
        x, got, want = h100_1d_fetches(mod, record, border)
        assert (got == want).all(), (n, mode, filt, x[got != want][:5], got[got != want][:5].view(F32))
        if filt == "point" and mode in ("clamp", "wrap"):
            scaled = ((x - np.floor(x) if mode == "wrap" else np.clip(x, 0, 1)) * F32(n)).astype(F32)
            float_formula_misses += int((np.minimum(np.floor(scaled), n - 1) != want.view(F32)).sum())
    assert float_formula_misses > 50


def test_a_texture_keeps_the_bits_its_width_and_height_ask_for_as_an_h100_does(mod):
    """tests/data/texture-sizes-h100.json: 1-D textures of 8,191 to 131,071 texels (linear filtering
    up to 65,537), where an H100 keeps 21, 22 and 23 fractional bits of a normalized coordinate
    (40 of each record's 50 fetches are ones a bit more or less would fetch elsewhere), and 2-D
    textures of 13 x 10,000 and 10,000 x 13, whose short side keeps the long side's 22 bits: each
    fetch bit for bit."""
    for record in H100_SIZES.select(kernel="tex1D<float>"):
        x, got, want = h100_1d_fetches(mod, record)
        assert (got == want).all(), (record.config, x[got != want][:5])
    for record in H100_SIZES.select(kernel="tex2D<float>"):
        h, w = record.config["height"], record.config["width"]
        x, y, want = _decoded(record, "x", "y", "fetched")
        arr, _ = float_array(np.arange(h * w).reshape(h, w))
        got = launch(mod, "sample2", texture(arr, (CLAMP, CLAMP), tex.cudaFilterModePoint, True),
                     (x.view(F32), y.view(F32)), np.zeros(len(x), F32))
        assert (got.view(np.uint32) == want).all(), (h, w)


def test_trilinear_weights_are_closest_to_an_h100s(mod):
    """1,000 of an H100's trilinear fetches (tests/data/texture-sizes-h100.json: a 9 x 7 x 5
    texture of random texels, texel coordinates). The runtime weighs the corners as the model's
    corner_weights does (the x-z plane, then y): 80% of its fetches are the H100's bit for bit,
    and the rest one unit of weight (1/256 of two texels' difference) away. Splitting the 2-D
    weights along z instead, the rule before, gives about 63%."""
    record, = H100_SIZES.select(kernel="tex3D<float>")
    d, h, w = (record.config[k] for k in ("depth", "height", "width"))
    values, x, y, z, want = _decoded(record, "texels", "x", "y", "z", "fetched")
    arr, texels = float_array(values.view(F32).reshape(d, h, w))
    xyz = [c.view(F32) for c in (x, y, z)]
    got = launch(mod, "sample3", texture(arr, (CLAMP,) * 3, tex.cudaFilterModeLinear, False), xyz,
                 np.zeros(len(x), F32))
    np.testing.assert_array_equal(got, model(texels, xyz, (CLAMP,) * 3, True, False)[:, 0])
    same = (got.view(np.uint32) == want).mean()
    assert 0.75 < same < 0.9, same
    spread = float(texels.max() - texels.min())
    assert np.abs(got - want.view(F32)).max() <= spread / 256 * (1 + 2.0 ** -10)


@pytest.mark.parametrize("linear", [False, True], ids=["point", "linear"])
def test_1d_and_3d_textures(mod, linear, rng):
    filt = tex.cudaFilterModeLinear if linear else tex.cudaFilterModePoint
    arr1, texels1 = float_texture(rng, (11,))
    x = coordinates(rng, 300, 11, False)
    got = launch(mod, "sample1", texture(arr1, (CLAMP,), filt, False), (x,), np.zeros(300, F32))
    np.testing.assert_array_equal(got, model(texels1, (x,), (CLAMP,), linear, False)[:, 0])
    arr3, texels3 = float_texture(rng, (3, 4, 5))
    modes = (WRAP, MIRROR, CLAMP)
    xyz = [coordinates(rng, 300, s, True) for s in (5, 4, 3)]
    got = launch(mod, "sample3", texture(arr3, modes, filt, True), xyz, np.zeros(300, F32))
    np.testing.assert_array_equal(got, model(texels3, xyz, modes, linear, True)[:, 0])


def test_lod_fetches_read_the_one_level(mod, rng):
    arr, texels = float_texture(rng, (1, 9))
    t = texture(arr, (CLAMP, CLAMP), tex.cudaFilterModeLinear, False)
    x, y = coordinates(rng, 200, 9, False), np.zeros(200, F32)
    got = launch(mod, "lod", t, (x, y), np.zeros(200, F32))
    np.testing.assert_array_equal(got, model(texels, (x, y), (CLAMP, CLAMP), True, False)[:, 0])


@pytest.mark.parametrize("bits,kind,dtype", [(8, tex.cudaChannelFormatKindUnsigned, np.uint8),
                                             (8, tex.cudaChannelFormatKindSigned, np.int8),
                                             (16, tex.cudaChannelFormatKindUnsigned, np.uint16),
                                             (16, tex.cudaChannelFormatKindSigned, np.int16)])
def test_normalized_float_read_mode(mod, bits, kind, dtype, rng):
    """8- and 16-bit integers read as v / (2^bits - 1) unsigned, max(v / (2^(bits-1) - 1), -1)
    signed (the most negative value reads -1.0), then filtered as floats."""
    info = np.iinfo(dtype)
    data = rng.integers(info.min, int(info.max) + 1, (4, 7)).astype(dtype)
    data[0, :2] = info.min, info.max
    arr = tex.CUDAarray(tex.ChannelFormatDescriptor(bits, 0, 0, 0, kind), 7, 4)
    arr.copy_from(data)
    as_float = (data.astype(F32) / F32(info.max)).astype(F32)
    as_float = np.maximum(as_float, F32(-1)).reshape(1, 4, 7, 1)
    assert as_float.min() >= -1 and (info.min == 0 or as_float[0, 0, 0, 0] == -1.0)
    x, y = coordinates(rng, 400, 7, False), coordinates(rng, 400, 4, False)
    for filt, linear in ((tex.cudaFilterModePoint, False), (tex.cudaFilterModeLinear, True)):
        t = texture(arr, (CLAMP, CLAMP), filt, False, tex.cudaReadModeNormalizedFloat)
        got = launch(mod, "sample2", t, (x, y), np.zeros(400, F32))
        np.testing.assert_array_equal(got, model(as_float, (x, y), (CLAMP, CLAMP), linear, False)[:, 0])


def test_half_textures_read_their_halves_as_floats(mod, rng):
    data = (rng.standard_normal((4, 9)) * 100).astype(np.float16)
    data[0, :3] = [np.float16(6e-8), -np.inf, np.float16(-0.0)]   # a subnormal, an infinity, a negative zero
    arr = tex.CUDAarray(tex.ChannelFormatDescriptor(16, 0, 0, 0, tex.cudaChannelFormatKindFloat), 9, 4)
    arr.copy_from(data)
    texels = data.astype(F32).reshape(1, 4, 9, 1)
    x, y = coordinates(rng, 300, 9, False), coordinates(rng, 300, 4, False)
    got = launch(mod, "sample2", texture(arr, (CLAMP, CLAMP), tex.cudaFilterModePoint, False), (x, y),
                 np.zeros(300, F32))
    np.testing.assert_array_equal(got.view(np.uint32), model(texels, (x, y), (CLAMP,) * 2, False, False)[:, 0]
                                  .view(np.uint32))


@pytest.mark.parametrize("kernel,bits,kind,channels,dtype,out_dtype", [
    ("sample2_float4", 32, tex.cudaChannelFormatKindFloat, 4, np.float32, np.float32),
    ("sample2_float2", 32, tex.cudaChannelFormatKindFloat, 2, np.float32, np.float32),
    ("sample2_int4", 32, tex.cudaChannelFormatKindSigned, 4, np.int32, np.int32),
    ("sample2_uchar4", 8, tex.cudaChannelFormatKindUnsigned, 4, np.uint8, np.uint8),
    ("sample2_short2", 16, tex.cudaChannelFormatKindSigned, 2, np.int16, np.int16),
    ("sample2_unsigned", 32, tex.cudaChannelFormatKindUnsigned, 1, np.uint32, np.uint32),
    ("sample2_uint4", 32, tex.cudaChannelFormatKindUnsigned, 4, np.uint32, np.uint32),
    ("sample2_char", 8, tex.cudaChannelFormatKindSigned, 1, np.int8, np.int8),
])
def test_element_types_read_their_texels(mod, kernel, bits, kind, channels, dtype, out_dtype, rng):
    h, w = 5, 3
    if np.dtype(dtype).kind == "f":
        data = rng.standard_normal((h, w * channels)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, int(info.max) + 1, (h, w * channels)).astype(dtype)
    desc = tex.ChannelFormatDescriptor(*([bits] * channels + [0] * (4 - channels)), kind)
    arr = tex.CUDAarray(desc, w, h)
    arr.copy_from(data)
    mode = (BORDER, CLAMP)
    t = texture(arr, mode, tex.cudaFilterModePoint, False)
    n = 300
    x, y = coordinates(rng, n, w, False), coordinates(rng, n, h, False)
    got = launch(mod, kernel, t, (x, y), np.zeros(n * channels, out_dtype), n).reshape(n, channels)
    want = model(data.reshape(1, h, w, channels), (x, y), mode, False, False)
    np.testing.assert_array_equal(got, want.astype(out_dtype))


def test_tex1Dfetch_reads_linear_memory_by_index_and_zeros_outside(mod, rng):
    n = 13
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    data = rng.standard_normal(n + 5).astype(F32)   # the texture covers its first n
    # filter and addressing modes are ignored for linear memory, as CUDA ignores them
    t = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeLinear, arr=data, chDesc=ch, sizeInBytes=4 * n),
                          tex.TextureDescriptor((WRAP,), tex.cudaFilterModeLinear, normalizedCoords=True))
    idx = np.arange(-4, n + 4, dtype=np.int32)
    got = launch(mod, "fetch", t, (idx,), np.zeros(len(idx), F32))
    np.testing.assert_array_equal(got, np.where((idx >= 0) & (idx < n), data[np.clip(idx, 0, n - 1)], 0))
    pairs = rng.integers(-2**31, 2**31, 2 * n).astype(np.int32)
    t2 = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeLinear, arr=pairs,
                                                  chDesc=tex.ChannelFormatDescriptor(32, 32, 0, 0, 0),
                                                  sizeInBytes=pairs.nbytes), tex.TextureDescriptor())
    got = launch(mod, "fetch_int2", t2, (idx,), np.zeros(2 * len(idx), np.int32), len(idx)).reshape(-1, 2)
    inside = (idx >= 0) & (idx < n)
    np.testing.assert_array_equal(got[inside], pairs.reshape(-1, 2)[idx[inside]])
    assert not got[~inside].any()
    chars = rng.integers(-128, 128, n).astype(np.int8)
    t3 = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeLinear, arr=chars,
                                                  chDesc=tex.ChannelFormatDescriptor(8, 0, 0, 0, 0),
                                                  sizeInBytes=n), tex.TextureDescriptor())
    got = launch(mod, "fetch_char", t3, (idx,), np.zeros(len(idx), np.int8))
    np.testing.assert_array_equal(got, np.where(inside, chars[np.clip(idx, 0, n - 1)], 0))


def test_pitch2d_memory(mod, rng):
    h, w, pitch = 5, 7, 64   # rows 64 bytes apart, 28 of them texels
    rows = rng.standard_normal((h, pitch // 4)).astype(F32)
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    t = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypePitch2D, arr=rows, chDesc=ch, width=w,
                                                 height=h, pitchInBytes=pitch),
                          tex.TextureDescriptor((CLAMP, CLAMP), tex.cudaFilterModeLinear))
    x, y = coordinates(rng, 300, w, False), coordinates(rng, 300, h, False)
    got = launch(mod, "sample2", t, (x, y), np.zeros(300, F32))
    want = model(rows[:, :w].reshape(1, h, w, 1), (x, y), (CLAMP, CLAMP), True, False)[:, 0]
    np.testing.assert_array_equal(got, want)


def test_checked_mode_runs_texture_fetches(rng):
    arr, texels = float_texture(rng, (4, 6))
    t = texture(arr, (MIRROR, WRAP), tex.cudaFilterModeLinear, True)
    k = cudacheck.RawModule(KERNELS, backend="cpu", check=True).get_function("sample2")
    x, y = coordinates(rng, 200, 6, True), coordinates(rng, 200, 4, True)
    out = np.zeros(200, F32)
    k(2, 128, (t, x, y, out, np.int32(200)))
    np.testing.assert_array_equal(out, model(texels, (x, y), (MIRROR, WRAP), True, True)[:, 0])


def test_a_texture_object_that_is_not_one_is_reported_with_its_line(mod):
    line = KERNELS.splitlines().index("    if (i < n) out[i] = tex2D<float>(t, x[i], y[i]);") + 1
    with pytest.raises(cudacheck.KernelAssertionError,
                       match=rf"cudaCreateTextureObject did not return.*`sample2` at line {line}\b"):
        mod.get_function("sample2")(1, 1, (np.uint64(0), np.zeros(1, F32), np.zeros(1, F32), np.zeros(1, F32),
                                           np.int32(1)))


def test_cuda_arrays_take_cupys_shapes(rng):
    """CuPy's CUDAarray takes (depth, height, channels * width) without the absent dimensions:
    so does the mirror, so that code that runs here runs there."""
    arr = tex.CUDAarray(tex.ChannelFormatDescriptor(8, 8, 8, 8, tex.cudaChannelFormatKindUnsigned), 5, 3)
    data = rng.integers(0, 256, (3, 20)).astype(np.uint8)
    arr.copy_from(data)
    out = np.zeros((3, 20), np.uint8)
    arr.copy_to(out)
    np.testing.assert_array_equal(out, data)
    with pytest.raises(ValueError, match=r"shape \(3, 20\).*got shape \(3, 5, 4\)"):
        arr.copy_from(data.reshape(3, 5, 4))
    with pytest.raises(ValueError, match="of uint8.*of int8"):
        arr.copy_from(data.astype(np.int8))


@pytest.mark.parametrize("make,match", [
    (lambda: tex.ChannelFormatDescriptor(32, 32, 32, 0, tex.cudaChannelFormatKindFloat),
     "cudaErrorInvalidChannelDescriptor"),
    (lambda: tex.ChannelFormatDescriptor(8, 0, 0, 0, tex.cudaChannelFormatKindFloat),
     "cudaErrorInvalidChannelDescriptor"),
    (lambda: tex.TextureDescriptor((7,)), "addressModes.*cudaErrorInvalidValue"),
    (lambda: texture(tex.CUDAarray(tex.ChannelFormatDescriptor(32, 0, 0, 0, 0), 4), (CLAMP,),
                     tex.cudaFilterModeLinear, False), "cudaFilterModeLinear filters floats"),
    (lambda: texture(tex.CUDAarray(tex.ChannelFormatDescriptor(32, 0, 0, 0, 1), 4), (CLAMP,),
                     tex.cudaFilterModePoint, False, tex.cudaReadModeNormalizedFloat), "not 32-bit"),
    (lambda: tex.ResourceDescriptor(tex.cudaResourceTypePitch2D, arr=np.zeros(64, F32),
                                    chDesc=tex.ChannelFormatDescriptor(32, 0, 0, 0, 2), width=5, height=2,
                                    pitchInBytes=20), "multiple of 32"),
])
def test_a_bad_descriptor_is_refused_with_cudas_error(make, match):
    with pytest.raises(cudacheck.TextureError, match=match):
        make()


PROGRAM = r'''
#include <cstdio>
// Resizes an image through a texture, bilinear, normalized coordinates: what a GPU's
// texture unit is for.
__global__ void resize(cudaTextureObject_t image, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(image, (x + 0.5f) / w, (y + 0.5f) / h);
}
// A 3-point stencil over a pitched image's rows, clamped at the edges by the texture.
__global__ void stencil(cudaTextureObject_t image, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(image, x - 0.5f, y + 0.5f) + tex2D<float>(image, x + 0.5f, y + 0.5f) +
                         tex2D<float>(image, x + 1.5f, y + 0.5f);
}
int main() {
    int W, H, OW, OH;
    if (scanf("%d %d %d %d", &W, &H, &OW, &OH) != 4) return 1;
    float* img = (float*)malloc(W * H * sizeof(float));
    for (int i = 0; i < W * H; ++i) scanf("%a", &img[i]);
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    cudaMallocArray(&arr, &ch, W, H);
    cudaMemcpy2DToArray(arr, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeMirror;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) return 2;
    float *d_out, *d_pitched;
    size_t pitch;
    cudaMalloc(&d_out, OW * OH * sizeof(float));
    cudaMallocPitch(&d_pitched, &pitch, W * sizeof(float), H);
    cudaMemcpy2D(d_pitched, pitch, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice);
    dim3 block(8, 8);
    resize<<<dim3((OW + 7) / 8, (OH + 7) / 8), block>>>(tex, d_out, OW, OH);
    float* out = (float*)malloc(OW * OH * sizeof(float));
    cudaMemcpy(out, d_out, OW * OH * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < OW * OH; ++i) printf("%a\n", out[i]);

    cudaResourceDesc pres = {};
    pres.resType = cudaResourceTypePitch2D;
    pres.res.pitch2D.devPtr = d_pitched;
    pres.res.pitch2D.desc = ch;
    pres.res.pitch2D.width = W;
    pres.res.pitch2D.height = H;
    pres.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc pd = {};
    pd.addressMode[0] = pd.addressMode[1] = cudaAddressModeClamp;
    pd.filterMode = cudaFilterModePoint;
    cudaTextureObject_t ptex;
    if (cudaCreateTextureObject(&ptex, &pres, &pd, NULL) != cudaSuccess) return 3;
    float* d_st;
    cudaMalloc(&d_st, W * H * sizeof(float));
    stencil<<<dim3((W + 7) / 8, (H + 7) / 8), block>>>(ptex, d_st, W, H);
    float* st = (float*)malloc(W * H * sizeof(float));
    cudaMemcpy(st, d_st, W * H * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < W * H; ++i) printf("%a\n", st[i]);
    float back[2];   // the array's first two texels, copied back out of it
    cudaMemcpy2DFromArray(back, 2 * sizeof(float), arr, 0, 0, 2 * sizeof(float), 1, cudaMemcpyDeviceToHost);
    printf("%a\n%a\n", back[0], back[1]);
    cudaDestroyTextureObject(tex);
    cudaDestroyTextureObject(ptex);
    cudaFreeArray(arr);
    cudaFree(d_out);
    cudaFree(d_pitched);
    cudaFree(d_st);
    free(img); free(out); free(st);
    return 0;
}
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_whole_program_resizes_and_filters_through_textures(check, rng):
    w, h, ow, oh = 7, 5, 11, 9
    img = rng.standard_normal((h, w)).astype(F32)
    stdin = f"{w} {h} {ow} {oh}\n" + " ".join(float(v).hex() for v in img.ravel())
    result = cudacheck.run_program(PROGRAM, backend="cpu", check=check, stdin=stdin)
    assert result.exit_code == 0, str(result)
    assert not result.warnings
    values = np.array([float.fromhex(v) for v in result.stdout.split()], F32)
    resized, stencil, back = values[:ow * oh], values[ow * oh:ow * oh + w * h], values[-2:]
    gx, gy = np.meshgrid(np.arange(ow), np.arange(oh))
    x = ((gx.ravel() + F32(0.5)).astype(F32) / F32(ow)).astype(F32)
    y = ((gy.ravel() + F32(0.5)).astype(F32) / F32(oh)).astype(F32)
    texels = img.reshape(1, h, w, 1)
    np.testing.assert_array_equal(resized, model(texels, (x, y), (MIRROR, CLAMP), True, True)[:, 0])
    padded = np.pad(img, ((0, 0), (1, 1)), mode="edge")
    want = ((padded[:, :-2] + padded[:, 1:-1]).astype(F32) + padded[:, 2:]).astype(F32)
    np.testing.assert_array_equal(stencil.reshape(h, w), want)
    np.testing.assert_array_equal(back, img[0, :2])


VOLUME_PROGRAM = r'''
#include <cstdio>
// Samples a volume at given points through a 3-D texture: trilinear, normalized coordinates.
__global__ void probe(cudaTextureObject_t vol, const float* p, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(vol, p[3 * i], p[3 * i + 1], p[3 * i + 2]);
}
int main() {
    int W, H, D, n;
    if (scanf("%d %d %d %d", &W, &H, &D, &n) != 4) return 1;
    float* v = (float*)malloc(W * H * D * sizeof(float));
    float* p = (float*)malloc(3 * n * sizeof(float));
    for (int i = 0; i < W * H * D; ++i) scanf("%a", &v[i]);
    for (int i = 0; i < 3 * n; ++i) scanf("%a", &p[i]);
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    cudaMalloc3DArray(&arr, &ch, make_cudaExtent(W, H, D));
    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr(v, W * sizeof(float), W, H);
    in.dstArray = arr;
    in.extent = make_cudaExtent(W, H, D);
    in.kind = cudaMemcpyHostToDevice;
    printf("%s\n", cudaGetErrorName(cudaMemcpy3D(&in)));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeWrap;
    td.addressMode[1] = cudaAddressModeMirror;
    td.addressMode[2] = cudaAddressModeBorder;
    td.filterMode = cudaFilterModeLinear;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex;
    cudaCreateTextureObject(&tex, &res, &td, NULL);
    float *d_p, *d_out;
    cudaMalloc(&d_p, 3 * n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_p, p, 3 * n * sizeof(float), cudaMemcpyHostToDevice);
    probe<<<(n + 63) / 64, 64>>>(tex, d_p, d_out, n);
    float* out = (float*)malloc(n * sizeof(float));
    cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) printf("%a\n", out[i]);
    // the last slice's second row back out of the array, and a copy that leaves it
    float row[64];
    cudaMemcpy3DParms back = {};
    back.srcArray = arr;
    back.srcPos = make_cudaPos(0, 1, D - 1);
    back.dstPtr = make_cudaPitchedPtr(row, W * sizeof(float), W, 1);
    back.extent = make_cudaExtent(W, 1, 1);
    back.kind = cudaMemcpyDeviceToHost;
    printf("%s\n", cudaGetErrorName(cudaMemcpy3D(&back)));
    for (int i = 0; i < W; ++i) printf("%a\n", row[i]);
    back.srcPos = make_cudaPos(1, 1, D - 1);
    printf("%s\n", cudaGetErrorName(cudaMemcpy3D(&back)));
    cudaDestroyTextureObject(tex);
    cudaFreeArray(arr);
    cudaFree(d_p);
    cudaFree(d_out);
    free(v); free(p); free(out);
    return 0;
}
'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_whole_program_samples_a_3d_array_through_tex3D(check, rng):
    w, h, d, n = 5, 4, 3, 300
    vol = rng.standard_normal((d, h, w)).astype(F32)
    xyz = [coordinates(rng, n, s, True) for s in (w, h, d)]
    points = np.stack(xyz, axis=1)
    stdin = f"{w} {h} {d} {n}\n" + " ".join(float(v).hex() for v in [*vol.ravel(), *points.ravel()])
    result = cudacheck.run_program(VOLUME_PROGRAM, backend="cpu", check=check, stdin=stdin)
    assert result.exit_code == 0 and not result.warnings, str(result)
    lines = result.stdout.split()
    assert lines[0] == "cudaSuccess" and lines[n + 1] == "cudaSuccess" and lines[-1] == "cudaErrorInvalidValue"
    got = np.array([float.fromhex(v) for v in lines[1:n + 1]], F32)
    modes = (WRAP, MIRROR, BORDER)
    np.testing.assert_array_equal(got, model(vol[..., None], xyz, modes, True, True)[:, 0])
    np.testing.assert_array_equal(np.array([float.fromhex(v) for v in lines[n + 2:n + 2 + w]], F32), vol[d - 1, 1])


ERRORS_PROGRAM = r'''
#include <cstdio>
int main() {
    cudaArray_t arr;
    cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
    printf("%s\n", cudaGetErrorName(cudaMallocArray(&arr, &three, 4, 4)));
    cudaChannelFormatDesc ints = cudaCreateChannelDesc<int>();
    cudaMallocArray(&arr, &ints, 4, 4);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.filterMode = cudaFilterModeLinear;                  // an int texture read as ints cannot filter
    cudaTextureObject_t t;
    printf("%s\n", cudaGetErrorName(cudaCreateTextureObject(&t, &res, &td, NULL)));
    td.filterMode = cudaFilterModePoint;
    td.addressMode[0] = (cudaTextureAddressMode)9;
    printf("%s\n", cudaGetErrorName(cudaCreateTextureObject(&t, &res, &td, NULL)));
    int host[16] = {0};
    printf("%s\n", cudaGetErrorName(cudaMemcpy2DToArray(arr, 8, 0, host, 16, 16, 4, cudaMemcpyHostToDevice)));
    float* d;
    size_t pitch;
    cudaMallocPitch(&d, &pitch, 20, 3);
    cudaResourceDesc p = {};
    p.resType = cudaResourceTypePitch2D;
    p.res.pitch2D.devPtr = d;
    p.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    p.res.pitch2D.width = 5;
    p.res.pitch2D.height = 3;
    p.res.pitch2D.pitchInBytes = 20;                       // not a multiple of texturePitchAlignment
    td.addressMode[0] = cudaAddressModeClamp;
    printf("%s\n", cudaGetErrorName(cudaCreateTextureObject(&t, &p, &td, NULL)));
    p.res.pitch2D.pitchInBytes = pitch;
    printf("%s %d\n", cudaGetErrorName(cudaCreateTextureObject(&t, &p, &td, NULL)), (int)(pitch % 32));
    // the deprecated linear copies: 6 ints from row 1, column 1 (byte 4) on, running into row 2
    int six[6] = {1, 2, 3, 4, 5, 6}, all[16];
    cudaMemcpyToArray(arr, 4, 1, six, sizeof six, cudaMemcpyHostToDevice);
    cudaMemcpyFromArray(all, arr, 0, 0, sizeof all, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 16; ++i) printf("%d ", all[i]);
    printf("\n%s\n", cudaGetErrorName(cudaMemcpyToArray(arr, 4, 3, six, sizeof six, cudaMemcpyHostToDevice)));
    cudaChannelFormatDesc got;
    cudaGetChannelDesc(&got, arr);
    printf("%d %d %d\n", got.x, got.y, (int)got.f);
    cudaDestroyTextureObject(t);
    cudaFreeArray(arr);
    cudaFree(d);
    return 0;
}
'''


def test_bad_descriptors_in_a_program_return_cudas_error_codes():
    result = cudacheck.run_program(ERRORS_PROGRAM, backend="cpu")
    assert result.stdout.split("\n")[:9] == [
        "cudaErrorInvalidChannelDescriptor", "cudaErrorInvalidFilterSetting", "cudaErrorInvalidValue",
        "cudaErrorInvalidValue", "cudaErrorInvalidValue", "cudaSuccess 0",
        "0 0 0 0 0 1 2 3 4 5 6 0 0 0 0 0 ", "cudaErrorInvalidValue", "32 0 0"], result.stdout


@pytest.mark.parametrize("code,name", [
    ('texture<float, 1, cudaReadModeElementType> ref;\n'
     'extern "C" __global__ void k(float* out) { out[threadIdx.x] = tex1Dfetch(ref, threadIdx.x); }', "texture"),
    ('extern "C" __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }\n'
     'int main() { float* d; cudaMalloc(&d, 64); cudaBindTexture(0, 0, d, 64); return 0; }', "cudaBindTexture"),
])
def test_texture_references_are_refused_naming_texture_objects(code, name):
    with pytest.raises(cudacheck.CompileError) as e:
        if "main" in code:
            cudacheck.run_program(code, backend="cpu")
        else:
            cudacheck.RawModule(code, backend="cpu").get_function("k")
    msg = str(e.value)
    assert f"`{name}`" in msg and "CUDA 12 removed" in msg and "cudaTextureObject_t" in msg
    assert "cudaCreateTextureObject" in msg and re.search(r"tex2D<T>", msg)
    assert not isinstance(e.value, cudacheck.UnsupportedFeatureError)


IN_PLACE = r'''
extern "C" __global__ void add_one(cudaTextureObject_t t, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i) + 1.0f;
}'''


def test_a_kernel_writing_what_its_texture_reads_is_reported_in_checked_mode(rng):
    """The Guide leaves a fetch of memory the same launch writes undefined: checked mode names
    it; writing other memory is fine, and a plain run runs."""
    data = rng.standard_normal(37).astype(F32)
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    t = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeLinear, arr=data, chDesc=ch,
                                                 sizeInBytes=data.nbytes), tex.TextureDescriptor())
    checked = cudacheck.RawKernel(IN_PLACE, "add_one", backend="cpu", check=True)
    other = np.zeros_like(data)
    checked(1, 64, (t, other, np.int32(37)))
    np.testing.assert_array_equal(other, data + F32(1))
    with pytest.raises(cudacheck.TextureWriteError, match=r"`add_one` wrote the memory that its texture object `t`"):
        checked(1, 64, (t, data, np.int32(37)))
    plain = data.copy()
    t_plain = tex.TextureObject(tex.ResourceDescriptor(tex.cudaResourceTypeLinear, arr=plain, chDesc=ch,
                                                       sizeInBytes=plain.nbytes), tex.TextureDescriptor())
    cudacheck.RawKernel(IN_PLACE, "add_one", backend="cpu")(1, 64, (t_plain, plain, np.int32(37)))
    np.testing.assert_array_equal(plain, data + F32(1))


def test_a_program_writing_what_its_texture_reads_is_reported_in_checked_mode():
    program = r'''#include <cstdio>
__global__ void add_one(cudaTextureObject_t t, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i) + 1.0f;
}
int main() {
    const int n = 40;
    float* d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(float));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = n * sizeof(float);
    cudaTextureDesc td = {};
    cudaTextureObject_t t;
    cudaCreateTextureObject(&t, &res, &td, NULL);
    add_one<<<1, 64>>>(t, d, n);
    float h[n];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%g\n", h[n - 1]);
    cudaDestroyTextureObject(t);
    cudaFree(d);
    return 0;
}'''
    assert cudacheck.run_program(program, backend="cpu").stdout == "1\n"
    with pytest.raises(cudacheck.TextureWriteError, match=r"`add_one` wrote the memory that its texture object `t`"):
        cudacheck.run_program(program, backend="cpu", check=True)


# ---- on a GPU: the same model, the GPU's own results (the claims above, checked there) -----

@pytest.mark.gpu
@pytest.mark.parametrize("linear", [False, True], ids=["point", "linear"])
@pytest.mark.parametrize("mode,normalized", [(CLAMP, False), (BORDER, False), (WRAP, False), (WRAP, True),
                                             (MIRROR, True), (CLAMP, True), (BORDER, True)],
                         ids=lambda v: MODE_NAMES.get(v, str(v)))
def test_the_gpu_fetches_what_the_model_computes(mode, normalized, linear, rng):
    """The same cudacheck.texture code on the GPU backend (CuPy's own TextureObject), against the
    model, which is what the CPU runtime computes: point filtering bit for bit; linear filtering
    with the model's weights, its bits in most fetches and within a few ulps of the largest
    texel in all (an H100 filters some sums otherwise: logs/2026-12-07-texture-filtering.md)."""
    import cupy
    shape = (9, 13)
    arr, texels = float_texture(rng, shape)
    t = texture(arr, (mode, mode), tex.cudaFilterModeLinear if linear else tex.cudaFilterModePoint, normalized)
    n = 4000
    x, y = coordinates(rng, n, shape[1], normalized), coordinates(rng, n, shape[0], normalized)
    out = cupy.zeros(n, F32)
    k = cudacheck.RawModule(KERNELS, backend="gpu").get_function("sample2")
    k((n + 127) // 128, 128, (t, cupy.asarray(x), cupy.asarray(y), out, np.int32(n)), sync=True)
    want = model(texels, (x, y), (mode, mode), linear, normalized)[:, 0]
    got = cupy.asnumpy(out)
    if not linear:
        np.testing.assert_array_equal(got.view(np.uint32), want.astype(F32).view(np.uint32))
        return
    assert (got.view(np.uint32) == want.view(np.uint32)).mean() > 0.85
    np.testing.assert_allclose(got, want, rtol=0, atol=np.abs(texels).max() * 2.0 ** -20)


def printed_floats(stdout):
    """A program's lines: the floats it printed with %a, and the rest of its lines as they are."""
    lines = stdout.splitlines()
    is_float = [re.fullmatch(r"-?(0x[0-9a-f.]+p[-+]\d+|inf|nan)", line) is not None for line in lines]
    return (np.array([float.fromhex(line) for line, f in zip(lines, is_float) if f], np.float64),
            [line for line, f in zip(lines, is_float) if not f])


@pytest.mark.gpu(nvcc=True)
def test_the_programs_on_a_gpu_print_what_the_cpu_runtime_prints(rng):
    """The programs' every line but their linearly filtered floats as the CPU runtime prints them;
    those floats as the fetches above. Bilinear: most bit for bit, all within 4 * 2^-20 (the texels
    are normal values; a GPU sums a few percent of linear fetches an ulp or a few otherwise).
    Trilinear (the volume): three in four bit for bit, all within a unit of weight, 1/256 of the
    texels' spread (test_trilinear_weights_are_closest_to_an_h100s: the GPU's 3-D weights are not
    yet the runtime's)."""
    image = "7 5 11 9\n" + " ".join(float(v).hex() for v in rng.standard_normal(35).astype(F32))
    points = np.stack([coordinates(rng, 500, s, True) for s in (5, 4, 3)], axis=1)
    texels = rng.standard_normal(60).astype(F32)
    volume = "5 4 3 500\n" + " ".join(float(v).hex() for v in [*texels, *points.ravel()])
    trilinear = float(texels.max() - texels.min()) / 256 * (1 + 2.0 ** -10)
    cases = ((PROGRAM, image, 0.8, 4 * 2.0 ** -20), (VOLUME_PROGRAM, volume, 0.75, trilinear),
             (ERRORS_PROGRAM, None, 1, 0))
    for program, stdin, share, bound in cases:
        gpu = cudacheck.run_program(program, backend="gpu", stdin=stdin)
        cpu = cudacheck.run_program(program, backend="cpu", stdin=stdin)
        assert gpu.exit_code == cpu.exit_code == 0
        (got, got_rest), (want, want_rest) = printed_floats(gpu.stdout), printed_floats(cpu.stdout)
        assert got_rest == want_rest and got.shape == want.shape
        if got.size:
            assert (got == want).mean() > share
            np.testing.assert_allclose(got, want, rtol=0, atol=bound)


def test_a_channel_format_reads_back_as_cupys_does():
    """ChannelFormatDescriptor.get_channel_format: CuPy's dict of the four widths and the kind."""
    desc = tex.ChannelFormatDescriptor(16, 16, 0, 0, tex.cudaChannelFormatKindSigned)
    assert desc.get_channel_format() == {"x": 16, "y": 16, "z": 0, "w": 0, "f": tex.cudaChannelFormatKindSigned}
