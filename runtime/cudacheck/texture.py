"""Texture objects from Python, as CuPy's cupy.cuda.texture makes them: a kernel takes a
`cudaTextureObject_t` and reads it with tex1Dfetch<T>, tex1D<T>, tex2D<T> or tex3D<T>.

    from cudacheck import texture as tex
    ch = tex.ChannelFormatDescriptor(32, 0, 0, 0, tex.cudaChannelFormatKindFloat)
    arr = tex.CUDAarray(ch, width, height)
    arr.copy_from(image)                                  # a NumPy array of width x height floats
    res = tex.ResourceDescriptor(tex.cudaResourceTypeArray, cuArr=arr)
    desc = tex.TextureDescriptor((tex.cudaAddressModeClamp,) * 2, tex.cudaFilterModeLinear,
                                 tex.cudaReadModeElementType)
    kernel(grid, block, (tex.TextureObject(res, desc), out, width, height))

The classes and constants have CuPy's names and arguments, and the objects hold their texels in
NumPy arrays, so the same code runs on both backends: on the CPU runtime a TextureObject is a
kc::CpuTexture (src/kc_abi.h) whose address is the kernel's cudaTextureObject_t, and each launch
maps its texels as it maps an array argument (cpu/forked_launch.py); on the GPU backend the
launch passes CuPy's own TextureObject, made from these descriptors (a CUDA array's texels
copied to the GPU at the object's first GPU launch and after each copy_from, linear and pitched
memory's at each launch). A descriptor CUDA
refuses is a TextureError naming the field and CUDA's error (cudaErrorInvalidValue ...), where
CuPy raises CUDARuntimeError.
"""
import ctypes

import numpy as np

from .errors import KernelError

# cupy.cuda.runtime's constants (the CUDA runtime's enums).
cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned, cudaChannelFormatKindFloat, cudaChannelFormatKindNone = \
    range(4)
cudaResourceTypeArray, cudaResourceTypeMipmappedArray, cudaResourceTypeLinear, cudaResourceTypePitch2D = range(4)
cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror, cudaAddressModeBorder = range(4)
cudaFilterModePoint, cudaFilterModeLinear = range(2)
cudaReadModeElementType, cudaReadModeNormalizedFloat = range(2)

# An H100's limits (as kc_host_texture.cpp holds a whole program's textures to them).
TEXTURE_ALIGNMENT = 512
TEXTURE_PITCH_ALIGNMENT = 32
MAX_TEXTURE_1D_LINEAR = 1 << 28
MAX_TEXTURE_SIDE = 131072


class TextureError(KernelError, ValueError):
    """A texture descriptor CUDA refuses: the message names the field and CUDA's error code."""


def _refuse(what, code="cudaErrorInvalidValue"):
    raise TextureError(f"{what} ({code}, as cudaCreateTextureObject or cudaMallocArray returns it on a GPU)")


class ChannelFormatDescriptor:
    """A texel's format: the bits of channels x, y, z, w (1, 2 or 4 channels of 8, 16 or 32 bits
    each; a float one of 16 or 32) and their kind (cudaChannelFormatKind*)."""

    def __init__(self, x, y, z, w, f):
        self.x, self.y, self.z, self.w, self.f = int(x), int(y), int(z), int(w), int(f)
        bits = [b for b in (self.x, self.y, self.z, self.w) if b]
        if (self.x not in (8, 16, 32) or any(b != self.x for b in bits) or len(bits) == 3
                or bits != [self.x, self.y, self.z, self.w][:len(bits)]):
            _refuse(f"channel format ({x}, {y}, {z}, {w}): a texel has 1, 2 or 4 channels of one width, 8, 16 or "
                    "32 bits, listed from x on", "cudaErrorInvalidChannelDescriptor")
        if self.f not in (cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned, cudaChannelFormatKindFloat) or \
                (self.f == cudaChannelFormatKindFloat and self.x == 8):
            _refuse(f"channel kind {f} with {x}-bit channels: the kinds are cudaChannelFormatKindSigned, Unsigned "
                    "and Float (16 or 32 bits)", "cudaErrorInvalidChannelDescriptor")
        self.channels = len(bits)
        self.dtype = np.dtype({cudaChannelFormatKindSigned: "i", cudaChannelFormatKindUnsigned: "u",
                               cudaChannelFormatKindFloat: "f"}[self.f] + str(self.x // 8))
        self.texel_bytes = self.channels * self.x // 8

    def get_channel_format(self):
        return {"x": self.x, "y": self.y, "z": self.z, "w": self.w, "f": self.f}


def _texels(desc, array, shape, what):
    """`array` (NumPy) checked as CuPy checks it: the CUDA array's shape, (depth, height,
    channels * width) less its absent dimensions, and the channels' dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what} takes a NumPy array, not {type(array).__name__} (cupy.asnumpy(x) copies one)")
    if array.shape != shape or array.dtype != desc.dtype:
        raise ValueError(f"{what}: the CUDA array takes an array of shape {shape} (depth, height, channels * width, "
                         f"without the dimensions it lacks) of {desc.dtype}, as CuPy's does, but got shape "
                         f"{array.shape} of {array.dtype}")
    return array


class CUDAarray:
    """A CUDA array of width x height x depth texels (height and depth 0 for fewer dimensions),
    its texels in a NumPy array (`data`) until a GPU launch copies them to CuPy's CUDAarray."""

    def __init__(self, desc, width, height=0, depth=0, flags=0):
        if not isinstance(desc, ChannelFormatDescriptor):
            raise TypeError("desc must be a cudacheck.texture.ChannelFormatDescriptor")
        if width <= 0 or height < 0 or depth < 0 or (depth and not height) or \
                max(width, height, depth) > MAX_TEXTURE_SIDE:
            _refuse(f"a CUDA array of {width} x {height} x {depth} texels: the width is 1 to {MAX_TEXTURE_SIDE}, "
                    "a height and depth 0 (absent) or as many")
        self.desc, self.width, self.height, self.depth, self.flags = desc, int(width), int(height), int(depth), flags
        self.ndim = 1 + bool(height) + bool(depth)
        self.shape = tuple(n for n in (self.depth, self.height) if n) + (self.width * desc.channels,)
        self.data = np.zeros(self.shape, desc.dtype)
        self.version = 0   # advanced by each copy_from: a GPU copy older than it is made again

    def copy_from(self, in_arr, stream=None):
        self.data[...] = _texels(self.desc, in_arr, self.shape, "CUDAarray.copy_from")
        self.version += 1

    def copy_to(self, out_arr, stream=None):
        _texels(self.desc, out_arr, self.shape, "CUDAarray.copy_to")[...] = self.data


class ResourceDescriptor:
    """What a texture reads: a CUDAarray (cuArr), linear memory (arr, with chDesc and
    sizeInBytes) or pitched 2-D memory (arr, chDesc, width, height, pitchInBytes)."""

    def __init__(self, restype, cuArr=None, arr=None, chDesc=None, sizeInBytes=0, width=0, height=0,
                 pitchInBytes=0):
        self.restype, self.cuArr, self.arr, self.chDesc = restype, cuArr, arr, chDesc
        self.sizeInBytes, self.width, self.height, self.pitchInBytes = sizeInBytes, width, height, pitchInBytes
        if restype == cudaResourceTypeArray:
            if not isinstance(cuArr, CUDAarray):
                _refuse("a cudaResourceTypeArray resource needs cuArr, a cudacheck.texture.CUDAarray")
            return
        if restype not in (cudaResourceTypeLinear, cudaResourceTypePitch2D):
            _refuse(f"resource type {restype}: the CPU runtime takes cudaResourceTypeArray, Linear and Pitch2D "
                    "(mipmapped arrays are not provided)")
        if not isinstance(chDesc, ChannelFormatDescriptor):
            _refuse("a linear or pitch2D resource needs chDesc, a ChannelFormatDescriptor of its texels")
        if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
            _refuse("a linear or pitch2D resource needs arr, a C-contiguous NumPy array of its texels")
        if restype == cudaResourceTypeLinear:
            texels = sizeInBytes // chDesc.texel_bytes
            if not 0 < texels <= MAX_TEXTURE_1D_LINEAR or sizeInBytes > arr.nbytes:
                _refuse(f"sizeInBytes {sizeInBytes}: a linear resource holds 1 to {MAX_TEXTURE_1D_LINEAR} texels "
                        f"of {chDesc.texel_bytes} bytes, within arr's {arr.nbytes} bytes")
            return
        if not (0 < width <= MAX_TEXTURE_SIDE and 0 < height <= MAX_TEXTURE_SIDE) or \
                pitchInBytes % TEXTURE_PITCH_ALIGNMENT or pitchInBytes < width * chDesc.texel_bytes or \
                pitchInBytes * (height - 1) + width * chDesc.texel_bytes > arr.nbytes:
            _refuse(f"a pitch2D resource of {width} x {height} texels, pitch {pitchInBytes} bytes: the pitch is a "
                    f"multiple of {TEXTURE_PITCH_ALIGNMENT} bytes (texturePitchAlignment) at least a row's "
                    f"{width * chDesc.texel_bytes} bytes, and arr ({arr.nbytes} bytes) holds every row")


class TextureDescriptor:
    """How a texture is read: addressModes (one per dimension, cudaAddressMode*), filterMode,
    readMode, borderColors (four floats) and normalizedCoords, as CuPy's."""

    def __init__(self, addressModes=None, filterMode=0, readMode=0, sRGB=None, borderColors=None,
                 normalizedCoords=None, maxAnisotropy=None):
        modes = tuple(addressModes or ())
        if len(modes) > 3 or any(m not in range(4) for m in modes):
            _refuse(f"addressModes {addressModes}: up to three of cudaAddressModeWrap, Clamp, Mirror and Border")
        if filterMode not in (cudaFilterModePoint, cudaFilterModeLinear):
            _refuse(f"filterMode {filterMode}: cudaFilterModePoint or cudaFilterModeLinear")
        if readMode not in (cudaReadModeElementType, cudaReadModeNormalizedFloat):
            _refuse(f"readMode {readMode}: cudaReadModeElementType or cudaReadModeNormalizedFloat")
        self.addressModes = modes + (cudaAddressModeWrap,) * (3 - len(modes))   # CUDA's zero: wrap
        self.filterMode, self.readMode, self.sRGB, self.maxAnisotropy = filterMode, readMode, sRGB, maxAnisotropy
        self.borderColors = tuple(borderColors or (0.0, 0.0, 0.0, 0.0))
        self.normalizedCoords = bool(normalizedCoords)


class TextureObject:
    """A texture object: `ptr` is the kernel's cudaTextureObject_t on the CPU runtime (the address
    of its kc::CpuTexture), and passing the object to a kernel passes it."""

    def __init__(self, ResDesc, TexDesc):
        from .cpu.abi import TEXTURE_MAGIC, CpuTexture
        if not isinstance(ResDesc, ResourceDescriptor) or not isinstance(TexDesc, TextureDescriptor):
            raise TypeError("TextureObject(ResDesc, TexDesc) takes a cudacheck.texture.ResourceDescriptor and a "
                            "cudacheck.texture.TextureDescriptor")
        self.ResDesc, self.TexDesc = ResDesc, TexDesc
        res, d = ResDesc, TexDesc
        fmt = res.cuArr.desc if res.restype == cudaResourceTypeArray else res.chDesc
        integer = fmt.f != cudaChannelFormatKindFloat
        normalized_read = d.readMode == cudaReadModeNormalizedFloat and integer
        if normalized_read and fmt.x == 32:
            _refuse("cudaReadModeNormalizedFloat reads 8- and 16-bit integers as floats, not 32-bit ones")
        linear_memory = res.restype == cudaResourceTypeLinear
        if d.filterMode == cudaFilterModeLinear and integer and not normalized_read and not linear_memory:
            _refuse("cudaFilterModeLinear filters floats: an integer texture needs cudaReadModeNormalizedFloat "
                    "(8- and 16-bit integers) or cudaFilterModePoint")
        t = CpuTexture(magic=TEXTURE_MAGIC, channels=fmt.channels, channel_bits=fmt.x, channel_kind=fmt.f,
                       read_normalized=normalized_read)
        if res.restype == cudaResourceTypeArray:
            a = res.cuArr
            self.source = a.data
            t.width, t.height, t.depth = a.width, max(1, a.height), max(1, a.depth)
            t.pitch = a.width * fmt.texel_bytes
            t.slice_pitch = t.pitch * t.height
        else:
            self.source = res.arr
            t.width = res.sizeInBytes // fmt.texel_bytes if linear_memory else res.width
            t.height, t.depth = (1 if linear_memory else res.height), 1
            t.pitch = res.sizeInBytes if linear_memory else res.pitchInBytes
        if linear_memory:   # CUDA ignores filtering and addressing here: tex1Dfetch reads by index
            t.address_mode[:] = [cudaAddressModeBorder] * 3
        else:
            t.address_mode[:] = list(d.addressModes)
            t.filter_mode, t.normalized_coords = d.filterMode, d.normalizedCoords
            t.border_color[:] = [float(c) for c in d.borderColors]
        self._cpu = t
        self.ptr = ctypes.addressof(t)
        self._gpu = None   # (CuPy's TextureObject, the CUDAarray's version it copied, what it holds)

    def bind(self, address):
        """The CPU runtime's launch: the texels are at `address` in this launch's mapping."""
        self._cpu.data = address

    def cupy_object(self):
        """CuPy's TextureObject of these descriptors (the GPU backend's launch passes it). A CUDA
        array's texels are copied to the GPU at the first call and after each copy_from; linear
        and pitched memory, a NumPy array the caller may change between launches as the CPU
        runtime reads it at each, at every call."""
        res = self.ResDesc
        version = res.cuArr.version if res.restype == cudaResourceTypeArray else None
        if self._gpu is None or version is None or self._gpu[1] != version:
            made, held = _cupy_texture(self)
            self._gpu = (made, version, held)
        return self._gpu[0]


def _cupy_texture(obj):
    """(CuPy's TextureObject, what it needs kept alive) for a TextureObject."""
    import cupy
    from cupy.cuda import texture as ct
    res, d = obj.ResDesc, obj.TexDesc

    def channels(c):
        return ct.ChannelFormatDescriptor(c.x, c.y, c.z, c.w, c.f)
    if res.restype == cudaResourceTypeArray:
        a = res.cuArr
        held = ct.CUDAarray(channels(a.desc), a.width, a.height, a.depth, a.flags)
        held.copy_from(cupy.asarray(a.data))
        cres = ct.ResourceDescriptor(res.restype, cuArr=held)
    else:
        held = cupy.asarray(res.arr)
        cres = ct.ResourceDescriptor(res.restype, arr=held, chDesc=channels(res.chDesc), sizeInBytes=res.sizeInBytes,
                                     width=res.width, height=res.height, pitchInBytes=res.pitchInBytes)
    ctex = ct.TextureDescriptor(d.addressModes, d.filterMode, d.readMode, borderColors=d.borderColors,
                                normalizedCoords=int(d.normalizedCoords))
    return ct.TextureObject(cres, ctex), held
