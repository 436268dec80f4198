"""Tensor maps: how the Hopper kernels (kernels/hopper.cu) name the matrices they load tiles of.

On a GPU of compute capability 9.0 or newer, the tensor memory accelerator (TMA) copies a
tile of a matrix into shared memory in one instruction; the instruction names a tensor map
and the tile's corner, and the map holds the rest: the matrix's address, sizes and row
pitch, the tile's ("box's") shape, how the box is laid out in shared memory (the swizzle),
and what a load reads outside the matrix (zeros). The CUDA driver encodes a map
(cuTensorMapEncodeTiled) into 128 opaque bytes, which a kernel takes by value, as a
`const __grid_constant__` parameter of a 128-byte struct aligned to 64 bytes:

    import cudacheck
    map_m = cudacheck.tensor_map_2d(M, box_rows=128, box_cols=64, element="bf16")
    kernel(grid, block, (map_m, map_n, P, m, k, n), shared_mem=...)

tensor_map_2d returns a TensorMap: a NumPy array of one 128-byte element (TENSOR_MAP_DTYPE),
which CuPy passes by value (for a one-element NumPy array the driver copies the size of the
kernel's parameter, 128 bytes, from the array's data; the copy on the host needs no
alignment of its own, and is 64-byte aligned all the same). The map holds the matrix's
address, not its data: it is valid while the matrix lives, and the TensorMap keeps a
reference to the matrix (its `source`) so that the matrix lives at least as long.

The TMA needs every row of the matrix to start on a multiple of 16 bytes: for 16-bit
elements, a row length that is a multiple of 8. pad_rows(a) returns a view of a padded copy
whose rows do (a pitched copy, as cudaMallocPitch makes): the map covers the view's columns
only, and loads past them read zeros, not the padding.

On the CPU runtime (backend="cpu") the map of a NumPy array holds the same description in
the runtime's own layout (kc_abi.h: CpuTensorMap), and each launch that passes it maps its
source array as it maps an array argument, writing the mapped address into the map's copy
(cpu/forked_launch.py): the runtime's TMA copy (cpu/src/kc_async.cpp) reads the matrix there.

Every error is a TensorMapError that says what is wrong: neither a CuPy nor a NumPy array, no
GPU or driver, a driver without tensor maps, a GPU older than compute capability 9.0, rows
not aligned, or a box the TMA cannot copy.
"""
import ctypes
import ctypes.util
from functools import lru_cache

import numpy as np

from .errors import KernelError

# CUtensorMapDataType (cuda.h), and each type's size in bytes.
ELEMENTS = {"uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4), "uint64": (4, 8),
            "int64": (5, 8), "fp16": (6, 2), "fp32": (7, 4), "fp64": (8, 8), "bf16": (9, 2),
            "fp32_ftz": (10, 4), "tf32": (11, 4), "tf32_ftz": (12, 4)}
# The element an array's dtype names when `element` is not given. NumPy has no bfloat16: BF16
# data travels as uint16 bits, so say element="bf16" for it. The TMA copies bits, so signed
# 8- and 16-bit integers go as the unsigned types of their size (zero fill is all-zero bits).
FROM_DTYPE = {"float16": "fp16", "float32": "fp32", "float64": "fp64", "uint8": "uint8", "int8": "uint8",
              "uint16": "uint16", "int16": "uint16", "uint32": "uint32", "int32": "int32",
              "uint64": "uint64", "int64": "int64"}
INTERLEAVE_NONE = 0                                     # CUtensorMapInterleave
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}                  # CUtensorMapSwizzle: bytes -> enum
L2_PROMOTION = {0: 0, 64: 1, 128: 2, 256: 3}            # CUtensorMapL2promotion: bytes -> enum
OOB_FILL = {"zero": 0, "nan": 1}                        # CUtensorMapFloatOOBfill: NONE (zeros), NAN_REQUEST_ZERO_FMA
TENSOR_MAP_BYTES = 128
TENSOR_MAP_ALIGN = 64
# One element of 128 bytes, as the kernel's `struct alignas(64) TensorMap { unsigned long long opaque[16]; }`.
TENSOR_MAP_DTYPE = np.dtype({"names": ["opaque"], "formats": [(np.uint64, (16,))]})
MAX_BOX = 256                                           # the most elements of a box in each dimension
CUDA_SUCCESS = 0


class TensorMapError(KernelError, ValueError):
    """A tensor map that cannot be made: the message says why and what to do."""


class TensorMap(np.ndarray):
    """A tensor map's 128 bytes, as a NumPy array of one element that CuPy passes to a kernel
    by value. `source` is the matrix it maps (kept alive by this reference); `box` the box as
    (rows, columns); `element`, `swizzle` as encoded."""

    def __array_finalize__(self, obj):
        for name in ("source", "box", "element", "swizzle"):
            setattr(self, name, getattr(obj, name, None))


@lru_cache(maxsize=1)
def _driver():
    """libcuda with its entry points typed; raises TensorMapError without a driver."""
    names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    lib, problems = None, []
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            problems.append(str(e))
    if lib is None:
        raise TensorMapError("cannot load the CUDA driver (libcuda.so.1): " + "; ".join(problems)
                             + ". Tensor maps need an NVIDIA GPU and its driver on this machine.")
    lib.cuInit.argtypes, lib.cuInit.restype = [ctypes.c_uint], ctypes.c_int
    lib.cuDriverGetVersion.argtypes, lib.cuDriverGetVersion.restype = [ctypes.POINTER(ctypes.c_int)], ctypes.c_int
    lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuGetErrorName.restype = ctypes.c_int
    try:
        encode = lib.cuTensorMapEncodeTiled
    except AttributeError:
        raise TensorMapError(f"this CUDA driver (for CUDA {_driver_version(lib)}) has no cuTensorMapEncodeTiled: "
                             "tensor maps came with the drivers of CUDA 12.0; update the NVIDIA driver") from None
    u64p, u32p = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
    encode.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p, u32p, u32p,
                       ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    encode.restype = ctypes.c_int
    result = lib.cuInit(0)
    if result != CUDA_SUCCESS:
        raise TensorMapError(f"the CUDA driver does not start (cuInit: {_error_name(lib, result)}): "
                             "no usable NVIDIA GPU here")
    return lib


def _driver_version(lib):
    v = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(v)) != CUDA_SUCCESS:
        return "unknown"
    return f"{v.value // 1000}.{v.value % 1000 // 10}"


def _error_name(lib, code):
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(code, ctypes.byref(name)) == CUDA_SUCCESS and name.value:
        return f"{name.value.decode()} ({code})"
    return f"CUresult {code}"


def _is_cupy(array):
    return type(array).__module__.split(".")[0] == "cupy" and hasattr(getattr(array, "data", None), "ptr")


def _check_device(array):
    """A TMA exists from compute capability 9.0 (Hopper) on."""
    try:
        cc = int(array.device.compute_capability)
    except Exception:  # noqa: BLE001 - no device to ask: the driver call will say
        return
    if cc < 90:
        raise TensorMapError(f"tensor maps need a GPU of compute capability 9.0 or newer (an H100 or H200); "
                             f"this array is on a GPU of compute capability {cc // 10}.{cc % 10}")


def _element(array, element):
    name = FROM_DTYPE.get(array.dtype.name) if element is None else element
    if name is None:
        raise TensorMapError(f"no tensor-map element type for dtype {array.dtype}; say which with element= "
                             f"(one of {', '.join(ELEMENTS)})")
    if name not in ELEMENTS:
        raise TensorMapError(f"unknown element {name!r}: one of {', '.join(ELEMENTS)}")
    code, size = ELEMENTS[name]
    if size != array.dtype.itemsize:
        raise TensorMapError(f"element {name!r} is {size} bytes, but the array's dtype {array.dtype} is "
                             f"{array.dtype.itemsize}")
    return name, code, size


def tensor_map_2d(array, box_rows, box_cols, *, element=None, swizzle=128, l2_promotion=256, oob_fill="zero"):
    """The tensor map of a 2-D array (rows x columns, each row contiguous, rows
    `array.strides[0]` bytes apart) whose loads copy boxes of box_rows x box_cols elements,
    the box's corner given in the kernel as (column, row). The driver takes dimensions
    innermost first: sizes (columns, rows), the row pitch in bytes, box (box_cols, box_rows),
    element strides (1, 1).

    A CuPy array gets the driver's map, for backend="gpu"; a NumPy array gets the CPU
    runtime's (its layout: kc_abi.h's CpuTensorMap), for backend="cpu", checked by the same
    rules. Each backend refuses the other's maps (arguments.check_arguments).

    element: the element type (a key of ELEMENTS: "bf16", "fp16", "fp32", ...); by default the
    array's dtype names it (uint16 data is "uint16": say "bf16" for BF16 bits).
    swizzle: 0, 32, 64 or 128 bytes; with a swizzle a box row (box_cols elements) is at most
    that many bytes. l2_promotion: 0, 64, 128 or 256 bytes. oob_fill: "zero" (elements
    outside the array load as zeros) or "nan" (as NaN, floating-point elements only)."""
    on_cpu = isinstance(array, np.ndarray)
    if not on_cpu and not _is_cupy(array):
        raise TensorMapError(f"a tensor map needs a CuPy array (backend='gpu') or a NumPy array (backend='cpu'); "
                             f"got {type(array).__module__}.{type(array).__name__}")
    if array.ndim != 2:
        raise TensorMapError(f"tensor_map_2d maps a 2-D array; this one has shape {array.shape}")
    name, code, size = _element(array, element)
    rows, cols = array.shape
    row_pitch, col_step = array.strides
    address = array.ctypes.data if on_cpu else array.data.ptr
    if rows < 1 or cols < 1:
        raise TensorMapError(f"an empty array (shape {array.shape}) has no tensor map")
    if col_step != size:
        raise TensorMapError(f"the elements of a row must be contiguous (the column stride is {col_step} bytes, "
                             f"the element {size}): map a C-contiguous array, or a view of whole rows")
    if row_pitch <= 0 or row_pitch % 16 or row_pitch >= 2 ** 40:
        raise TensorMapError(f"rows are {row_pitch} bytes apart, and the TMA needs a positive multiple of 16 "
                             f"below 2^40 ({cols} columns of {size} bytes): pad the rows with "
                             f"cudacheck.pad_rows(array)")
    if row_pitch < cols * size:
        raise TensorMapError(f"rows {row_pitch} bytes apart overlap ({cols} columns of {size} bytes)")
    if address % 16:
        raise TensorMapError(f"the array starts at an address that is not a multiple of 16 bytes "
                             f"({address:#x}): the TMA needs one; map a fresh array or pad_rows(array)")
    box_rows, box_cols = int(box_rows), int(box_cols)
    for what, v in (("box_rows", box_rows), ("box_cols", box_cols)):
        if not 1 <= v <= MAX_BOX:
            raise TensorMapError(f"{what}={v}: a box has 1 to {MAX_BOX} elements in each dimension")
    if box_cols * size % 16:
        raise TensorMapError(f"a box row of {box_cols} elements is {box_cols * size} bytes: the TMA copies whole "
                             f"multiples of 16 bytes")
    if swizzle not in SWIZZLE:
        raise TensorMapError(f"swizzle={swizzle!r}: one of {', '.join(map(str, SWIZZLE))} (bytes)")
    if swizzle and box_cols * size > swizzle:
        raise TensorMapError(f"with the {swizzle}-byte swizzle a box row is at most {swizzle} bytes; "
                             f"{box_cols} elements of {size} bytes are {box_cols * size}")
    if l2_promotion not in L2_PROMOTION:
        raise TensorMapError(f"l2_promotion={l2_promotion!r}: one of {', '.join(map(str, L2_PROMOTION))} (bytes)")
    if oob_fill not in OOB_FILL:
        raise TensorMapError(f"oob_fill={oob_fill!r}: 'zero' or 'nan'")
    if oob_fill == "nan" and not name.startswith(("fp", "bf", "tf")):
        raise TensorMapError(f"oob_fill='nan' is for floating-point elements, not {name!r}")
    if on_cpu:
        raw = _encode_cpu(address, size, rows, cols, row_pitch, box_rows, box_cols, swizzle, oob_fill)
    else:
        raw = _encode_driver(array, code, name, rows, cols, row_pitch, box_rows, box_cols, swizzle, l2_promotion,
                             oob_fill)
    return _wrapped(raw, array, (box_rows, box_cols), name, swizzle)


def _wrapped(raw, array, box, name, swizzle):
    """A map's 128 bytes as a TensorMap, in a host buffer aligned as the kernel's struct is (CuPy
    does not need it), holding its source array."""
    host = np.zeros(TENSOR_MAP_BYTES + TENSOR_MAP_ALIGN, np.uint8)
    start = -host.ctypes.data % TENSOR_MAP_ALIGN
    host[start:start + TENSOR_MAP_BYTES] = np.frombuffer(raw, np.uint8)
    tmap = host[start:start + TENSOR_MAP_BYTES].view(TENSOR_MAP_DTYPE).reshape(()).view(TensorMap)
    tmap.source, tmap.box, tmap.element, tmap.swizzle = array, box, name, swizzle
    return tmap


def tensor_map_tiled(array, dims, strides, box, *, element_strides=None, element=None, swizzle=128, l2_promotion=256,
                     oob_fill="zero"):
    """The tensor map of 1 to 5 dimensions that the driver's cuTensorMapEncodeTiled makes, with its
    arguments: `dims` the tensor's sizes innermost first (elements), `strides` the bytes from one
    element to the next in dimensions 1 and up (rank - 1 of them), `box` the box's elements in
    each dimension, `element_strides` the step between the elements a copy takes in each
    dimension (1 to 8; by default all 1); no interleave. The tensor starts at the array's first
    element and must lie inside the array (a NumPy array for backend="cpu", CuPy for "gpu").
    As fast.cu maps a row-major matrix of W columns as 64-column slabs: dims (64, rows, W / 64),
    strides (2 W, 128), box (64, box rows, box columns / 64).

    With an element stride s in dimension d (d >= 1; the driver ignores dimension 0's), a copy
    takes ceil(box[d] / s) elements along d, every s-th from the corner, laid out next to each
    other in shared memory (CUDA Driver API, cuTensorMapEncodeTiled: to take N elements along d,
    box[d] is N * s); the transaction bytes are those of the elements taken."""
    on_cpu = isinstance(array, np.ndarray)
    if not on_cpu and not _is_cupy(array):
        raise TensorMapError(f"a tensor map needs a CuPy array (backend='gpu') or a NumPy array (backend='cpu'); "
                             f"got {type(array).__module__}.{type(array).__name__}")
    dims, strides, box = [int(d) for d in dims], [int(s) for s in strides], [int(b) for b in box]
    rank = len(dims)
    steps = [1] * rank if element_strides is None else [int(e) for e in element_strides]
    if not 1 <= rank <= 5 or len(box) != rank or len(strides) != rank - 1 or len(steps) != rank:
        raise TensorMapError(f"a map of rank 1 to 5 takes as many sizes, box sizes and element strides as its rank "
                             f"and one stride fewer; got {len(dims)} sizes, {len(strides)} strides, {len(box)} box "
                             f"sizes, {len(steps)} element strides")
    if any(not 1 <= e <= 8 for e in steps):
        raise TensorMapError(f"element strides {steps}: each 1 to 8, as the driver takes them (a copy takes every "
                             f"s-th element of the box along a dimension)")
    name, code, size = _element(array, element)
    address = array.ctypes.data if on_cpu else array.data.ptr
    if address % 16:
        raise TensorMapError(f"the array starts at an address that is not a multiple of 16 bytes ({address:#x}): "
                             f"the TMA needs one; map a fresh array")
    if any(not 1 <= d <= 2 ** 32 for d in dims) or any(not 1 <= b <= MAX_BOX for b in box):
        raise TensorMapError(f"sizes {dims} and box {box}: each size 1 to 2^32, each box size 1 to {MAX_BOX}")
    if any(s % 16 or not 0 <= s < 2 ** 40 for s in strides):
        raise TensorMapError(f"strides {strides} bytes: each a multiple of 16 below 2^40")
    if box[0] * size % 16 or (swizzle and box[0] * size > swizzle):
        raise TensorMapError(f"a box row of {box[0]} elements is {box[0] * size} bytes: a multiple of 16"
                             + (f", and at most {swizzle} with the {swizzle}-byte swizzle" if swizzle else ""))
    for what, value, table in (("swizzle", swizzle, SWIZZLE), ("l2_promotion", l2_promotion, L2_PROMOTION),
                               ("oob_fill", oob_fill, OOB_FILL)):
        if value not in table:
            raise TensorMapError(f"{what}={value!r}: one of {', '.join(map(str, table))}")
    end = dims[0] * size + sum((d - 1) * s for d, s in zip(dims[1:], strides))
    if end > array.nbytes:
        raise TensorMapError(f"the tensor reaches {end} bytes past the array's start, and the array has "
                             f"{array.nbytes}: map an array that holds all of it")
    if on_cpu:
        from .cpu import abi
        outer = [(dims[d], strides[d - 1], box[d]) if d < rank else (1, 0, 1) for d in range(2, 5)]
        m = abi.CpuTensorMap(magic=abi.TENSOR_MAP_MAGIC, element_size=size, address=address, cols=dims[0],
                             rows=dims[1] if rank > 1 else 1, row_pitch=strides[0] if rank > 1 else 0,
                             box_cols=box[0], box_rows=box[1] if rank > 1 else 1, swizzle=swizzle,
                             oob_nan=int(oob_fill == "nan"), rank=rank)
        for d, (n, s, b) in enumerate(outer):
            m.dims_outer[d], m.strides_outer[d], m.box_outer[d] = n, s, b
        for d, e in enumerate(steps[1:]):
            m.skip[d] = e - 1
        raw = bytes(m)
    else:
        _check_device(array)
        lib = _driver()
        buf = ctypes.create_string_buffer(TENSOR_MAP_BYTES + TENSOR_MAP_ALIGN)
        at = -(-ctypes.addressof(buf) // TENSOR_MAP_ALIGN) * TENSOR_MAP_ALIGN
        result = lib.cuTensorMapEncodeTiled(
            ctypes.c_void_p(at), code, rank, ctypes.c_void_p(address), (ctypes.c_uint64 * rank)(*dims),
            (ctypes.c_uint64 * max(1, rank - 1))(*strides), (ctypes.c_uint32 * rank)(*box),
            (ctypes.c_uint32 * rank)(*steps), INTERLEAVE_NONE, SWIZZLE[swizzle], L2_PROMOTION[l2_promotion],
            OOB_FILL[oob_fill])
        if result != CUDA_SUCCESS:
            raise TensorMapError(f"cuTensorMapEncodeTiled refused the map: {_error_name(lib, result)}; sizes {dims}, "
                                 f"strides {strides}, box {box}, element strides {steps}, element {name}, "
                                 f"swizzle {swizzle}")
        raw = ctypes.string_at(at, TENSOR_MAP_BYTES)
    return _wrapped(raw, array, tuple(box), name, swizzle)


def _encode_cpu(address, size, rows, cols, row_pitch, box_rows, box_cols, swizzle, oob_fill):
    """The CPU runtime's map (kc_abi.h: CpuTensorMap). `address` is the array's own: each
    launch writes the address the array has there in its place (cpu/forked_launch.py)."""
    from .cpu import abi  # the CPU runtime's layouts (libclang): read only where a map is made for it
    m = abi.CpuTensorMap(magic=abi.TENSOR_MAP_MAGIC, element_size=size, address=address, rows=rows, cols=cols,
                         row_pitch=row_pitch, box_rows=box_rows, box_cols=box_cols, swizzle=swizzle,
                         oob_nan=int(oob_fill == "nan"))
    return bytes(m)


def _encode_driver(array, code, name, rows, cols, row_pitch, box_rows, box_cols, swizzle, l2_promotion, oob_fill):
    """The driver's encoding (cuTensorMapEncodeTiled) of a CuPy array's map: its 128 bytes."""
    _check_device(array)
    lib = _driver()
    raw = ctypes.create_string_buffer(TENSOR_MAP_BYTES + TENSOR_MAP_ALIGN)   # the driver writes 64-byte aligned
    address = -(-ctypes.addressof(raw) // TENSOR_MAP_ALIGN) * TENSOR_MAP_ALIGN
    dims = (ctypes.c_uint64 * 2)(cols, rows)
    strides = (ctypes.c_uint64 * 1)(row_pitch)
    box = (ctypes.c_uint32 * 2)(box_cols, box_rows)
    element_strides = (ctypes.c_uint32 * 2)(1, 1)
    result = lib.cuTensorMapEncodeTiled(ctypes.c_void_p(address), code, 2, ctypes.c_void_p(array.data.ptr), dims,
                                        strides, box, element_strides, INTERLEAVE_NONE, SWIZZLE[swizzle],
                                        L2_PROMOTION[l2_promotion], OOB_FILL[oob_fill])
    if result != CUDA_SUCCESS:
        raise TensorMapError(f"cuTensorMapEncodeTiled refused the map: {_error_name(lib, result)}; element {name}, "
                             f"{rows} x {cols} elements, rows {row_pitch} bytes apart, box {box_rows} x {box_cols}, "
                             f"swizzle {swizzle}, address {array.data.ptr:#x}")
    return ctypes.string_at(address, TENSOR_MAP_BYTES)


def pad_rows(array, alignment=16):
    """The 2-D array with each row starting on a multiple of `alignment` bytes: a view of its
    columns in a zero-padded copy (or the array itself, where its rows already do). Its tensor
    map covers the columns only. A NumPy array stays NumPy (for backend="cpu"); anything else
    becomes a CuPy array."""
    if isinstance(array, np.ndarray):
        xp = np
    else:
        import cupy as xp
        array = xp.asarray(array)
    if array.ndim != 2:
        raise TensorMapError(f"pad_rows pads a 2-D array; this one has shape {array.shape}")
    rows, cols = array.shape
    size = array.dtype.itemsize
    if alignment % size:
        raise TensorMapError(f"rows cannot start every {alignment} bytes with {size}-byte elements")
    per = alignment // size
    pitch = -(-cols // per) * per
    address = array.ctypes.data if xp is np else array.data.ptr
    if array.strides == (pitch * size, size) and address % alignment == 0:
        return array
    padded = _aligned_zeros(xp, (rows, pitch), array.dtype, alignment)
    padded[:, :cols] = array
    return padded[:, :cols]


def _aligned_zeros(xp, shape, dtype, alignment):
    """Zeros whose start is a multiple of `alignment` bytes (CuPy's allocations always are;
    NumPy's only to 16 bytes, or less)."""
    if xp is not np:
        return xp.zeros(shape, dtype)
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes].view(dtype).reshape(shape)
