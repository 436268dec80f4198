"""Kernel arguments, checked against the kernel's parsed signature before a launch.

CuPy passes whatever it is given: a float64 array to a `float*` parameter runs and
returns garbage. Here it is an ArgumentError that says which argument and how to fix it.
"""
from numbers import Number

import numpy as np

from .errors import ArgumentError
from .tensormap import TensorMap
from .texture import TextureObject


def _describe(value):
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"{type(value).__module__.split('.')[0]} array of {value.dtype}, shape {value.shape}"
    return f"{type(value).__name__} {value!r}"


def convert_scalar(param, value, where):
    """A Python number or NumPy scalar as the NumPy scalar of the parameter's type."""
    dtype = param.dtype
    if dtype is None:
        raise ArgumentError(f"{where}: the launcher cannot pass a `{param.base}` by value; "
                            "pass its fields as separate scalar parameters")
    if dtype.names:   # a struct by value: a NumPy structured scalar of its layout, as CuPy takes it
        if isinstance(value, (np.void, np.ndarray)) and value.dtype == dtype and getattr(value, "ndim", 0) == 0:
            return np.array(value, dtype=dtype)[()]
        got = f"a value of {value.dtype}" if isinstance(value, (np.void, np.ndarray)) else _describe(value)
        raise ArgumentError(f"{where} is a struct {param.base} passed by value, laid out as {dtype}, but got {got}; "
                            f"pass a NumPy structured scalar of that dtype: numpy.zeros((), dtype)[()] with its "
                            f"fields set (the dtype is the kernel's signature.params[i].dtype)")
    if hasattr(value, "shape") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, Number) or hasattr(value, "shape"):
        raise ArgumentError(f"{where} is a scalar {param.base}, but got {_describe(value)}")
    if dtype.kind in "iu":
        if isinstance(value, float) and not value.is_integer():
            raise ArgumentError(f"{where} is an integer, but got {value!r}")
        value = int(value)
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise ArgumentError(f"{where} is a {param.base}, which holds {info.min}..{info.max}; {value} does not fit")
    elif dtype.kind == "b":
        value = bool(value)
    elif isinstance(value, complex):
        raise ArgumentError(f"{where} is a real {param.base}, but got the complex {value!r}")
    return dtype.type(value)


# What else a pointer to a 16-bit floating-point type takes, bit for bit: a __half array's
# bits as uint16, and a bfloat16 dtype (ml_dtypes') for __nv_bfloat16, whose bits are uint16.
_ALSO = {"__half": ("uint16",), "__half2": ("uint16",), "__nv_bfloat16": ("bfloat16",),
         "__nv_bfloat162": ("bfloat16",)}


def _same_bits(base, dtype):
    return dtype.name in _ALSO.get(base, ()) and dtype.itemsize == 2


def texture_argument(param, value, where, array_type):
    """A cudacheck.texture.TextureObject as a `cudaTextureObject_t` parameter takes it: on the
    CPU runtime its handle (the launch maps its texels: cpu/forked_launch.py), on the GPU
    CuPy's own TextureObject of the same descriptors."""
    if param.dtype is None or param.dtype.kind not in "iu" or param.dtype.itemsize != 8:
        raise ArgumentError(f"{where} is a {param.base}, but got a texture object; a kernel takes one as a "
                            "`cudaTextureObject_t` parameter")
    if array_type is np.ndarray:
        return np.uint64(value.ptr)
    return value.cupy_object()


def check_arguments(kernel, args, array_type, array_hint):
    """Check `args` against `kernel.params`; return them with scalars converted.

    array_type is the array class this backend takes (numpy.ndarray or cupy.ndarray);
    array_hint says how to make one, for the message when another kind is passed.
    """
    if not isinstance(args, (tuple, list)):
        raise ArgumentError(f"{kernel.name}: args must be a tuple of arguments, not {_describe(args)}")
    sig = ", ".join(p.text for p in kernel.params)
    if len(args) != len(kernel.params):
        raise ArgumentError(f"{kernel.name}({sig}) takes {len(kernel.params)} arguments, but {len(args)} were given")
    out = []
    for i, (param, value) in enumerate(zip(kernel.params, args)):
        where = f"argument {i} (`{param.text}`) of {kernel.name}"
        if not param.pointer and isinstance(value, TextureObject):
            out.append(texture_argument(param, value, where, array_type))
            continue
        if not param.pointer:
            source = getattr(value, "source", None) if isinstance(value, TensorMap) else None
            if source is not None and not isinstance(source, array_type):
                lib = array_type.__module__.split(".")[0]
                raise ArgumentError(f"{where} is the tensor map of a {type(source).__module__.split('.')[0]} array, "
                                    f"but this backend takes {lib} arrays: make the map of a {lib} array "
                                    "(cudacheck.tensor_map_2d maps a CuPy array for backend='gpu', a NumPy array for "
                                    "backend='cpu')")
            out.append(convert_scalar(param, value, where))
            continue
        if not hasattr(value, "dtype") or not hasattr(value, "shape"):
            raise ArgumentError(f"{where} is a pointer, so it needs an array, but got {_describe(value)}")
        if not isinstance(value, array_type):
            raise ArgumentError(f"{where}: this backend takes {array_type.__module__.split('.')[0]} arrays, "
                                f"but got a {_describe(value)}; {array_hint}")
        dtype = param.dtype
        raw_struct = (dtype is not None and dtype.names and value.dtype == np.uint8
                      and value.nbytes % dtype.itemsize == 0)
        if raw_struct:   # CuPy has no structured dtypes: a struct array travels as its bytes
            dtype = None
        if dtype is not None and dtype.names and value.dtype != dtype:
            raise ArgumentError(
                f"{where} points to struct {param.base}, {dtype.itemsize} bytes laid out as {dtype}, but got an array "
                f"of {value.dtype}; make an array of that dtype ({kernel.name}'s signature.params[{i}].dtype), or "
                f"pass its bytes (.view(numpy.uint8); on the GPU a CuPy uint8 array)")
        if dtype is not None and value.dtype != dtype and not _same_bits(param.base, value.dtype):
            lib = 'numpy' if array_type is np.ndarray else 'cupy'
            fix = f"convert it with .astype({lib}.{dtype})"
            if param.base in ("__nv_bfloat16", "__nv_bfloat162"):
                fix = ("pass the bfloat16 values' bits as uint16 (a float32's upper 16 bits, rounded to nearest even), "
                       "or an array of a bfloat16 dtype (ml_dtypes.bfloat16)")
            elif param.base in ("__half", "__half2"):
                fix = f"convert it with .astype({lib}.float16) (or pass the halves' bits as uint16)"
            raise ArgumentError(f"{where} points to {param.base} ({dtype}), but got an array of {value.dtype}; {fix}")
        if param.lanes > 1 and value.size % param.lanes:
            raise ArgumentError(f"{where} reads {param.base} ({param.lanes} {dtype} at a time), but the array has "
                                f"{value.size} elements, not a multiple of {param.lanes}")
        if not value.flags.c_contiguous:
            raise ArgumentError(f"{where}: the kernel indexes raw memory, so the array must be C-contiguous; "
                                "pass an ascontiguousarray() copy")
        if not param.const and not getattr(value.flags, "writeable", True):  # CuPy arrays are always writable
            raise ArgumentError(f"{where} may be written by the kernel, but the array is read-only")
        out.append(value)
    return out
