"""The GPU's approximate instructions, as tables measured on an H100, for the CPU runtime.

nvcc and NVRTC compile rsqrtf to PTX's rsqrt.approx (and, under --use_fast_math, sqrtf to
sqrt.approx), expf and tanhf to a few exact float
operations around ex2.approx and rcp.approx, and __sinf, __cosf and __sincosf (which cuRAND's
normal distributions use) to sin.approx and cos.approx; the special-function unit that runs
those instructions is not documented to the bit, so the CPU runtime looks their results up.
Each table was measured on every input it covers (scripts/record_gpu_math_tables.py), and the
structure that lets one table serve every input was checked on all inputs there:

* ex2.approx.ftz(x) depends only on x's sign and |x| truncated to 23 fractional bits:
  2^i * T+[f] for x >= 0 and 2^-i * T-[f] for x < 0, where |x| * 2^23 = i * 2^23 + f;
* rcp.approx.ftz(m * 2^e) = rcp(m) * 2^-e, for m in [1, 2);
* rsqrt.approx(m * 4^e) = rsqrt(m) * 2^-e and sqrt.approx(m * 4^e) = sqrt(m) * 2^e, for m in
  [1, 4); without .ftz a subnormal x gives the rule's result for x 2^24, scaled by 2^12 (2^-12);
* sin.approx(x) multiplies x by 1/(2 pi) rounded toward zero (t, in turns) and reads the
  fraction of |t| in 25 fixed-point bits, truncated: T. Its quadrant T >> 23 picks a quarter
  wave Q[r], r = T mod 2^23, mirrored as 2^23 - 1 - r in odd quadrants, negated in the lower
  half-turn and for x of negative sign; cos.approx is sin.approx at T + 2^23, unsigned.

* lg2.approx(2^e (1 + m 2^-23)) is T0[m] for e = 0, T1[m] for e = -1 (the GPU's results on
  [1, 2) and [1/2, 1)), and otherwise e + L[m] rounded toward zero, L[m] = T0[m] where that is
  below 1/2 and 1 + T1[m] where not, one unit lower in its bit pattern for the m of a set that
  depends only on the result's binade (LG2_CLASSES: e's binade for e > 0, that of -e - 1 for
  e < 0); a subnormal x gives lg2.approx(x 2^24) - 24 rounded to nearest
  (scripts/record_gpu_lg2_table.py checks all of it on every float).

ex2, rcp, rsqrt and sqrt: each entry is stored as its difference from a reference the C++ side
computes the same way (kc_gpu_math.h: 1/x, 1/sqrt(x) and sqrt(x) rounded from double; a double
Taylor series for 2^f), in 4 bits, packed two to a byte; DATA is that, lzma-compressed. tables()
decodes it once per process. The quarter wave, whose errors are absolute (2^-21.5) and so
not a few units in the last place of its small values, is stored as the differences of
consecutive entries' bit patterns (int32), lzma-compressed (SIN_DATA); sine() sums them once
per process. lg2's two binades are stored as the differences of consecutive entries' bit
patterns and its sets as bitmaps, lzma-compressed (LG2_DATA); lg2() decodes them once per
process. install() hands a kernel's library the tables its code uses.
"""
import ctypes
import lzma
import mmap
from functools import lru_cache
from importlib import resources

import numpy as np

from . import system

# Package data of cudacheck (cpu/data/), read through importlib.resources, as installed from the wheel
DATA = resources.files("cudacheck").joinpath("cpu", "data", "gpu_math_tables.xz")
SIN_DATA = resources.files("cudacheck").joinpath("cpu", "data", "gpu_sin_table.xz")
LG2_DATA = resources.files("cudacheck").joinpath("cpu", "data", "gpu_lg2_table.xz")
SINE_ENTRIES = 1 << 23   # the quarter wave Q[r]
LG2_ENTRIES = 1 << 23    # T0[m], T1[m], and each set's bitmap over m
# lg2's result binades, in the order of their bitmaps (kc_gpu_math.h: lg2_approx): "p4" is
# [4, 8), "n4" (-8, -4].
LG2_CLASSES = ("p1", "p2", "p4", "p8", "p16", "p32", "p64", "n1", "n2", "n4", "n8", "n16", "n32", "n64")
# name, entries: in the order of kc_gpu_math.h's kc_gpu_math_tables[]
TABLES = (("ex2_pos", 1 << 23), ("ex2_neg", 1 << 23), ("rcp", 1 << 23), ("rsqrt", 1 << 24), ("sqrt", 1 << 24))
OFFSET = 8   # a stored nibble is the difference + 8
# The decoded sizes: TABLES' nibbles; the quarter wave's words; lg2's T0, T1 and bitmaps
TABLES_BYTES = sum(n // 2 for _, n in TABLES)
SINE_BYTES = SINE_ENTRIES * 4
LG2_BYTES = 8 * LG2_ENTRIES + len(LG2_CLASSES) * LG2_ENTRIES // 8
# 2^f = sum (f ln 2)^k / k!, k = 0..14, evaluated by Horner in double with plain multiplies
# and adds (no fused multiply-add) on both sides; within 1e-14 of 2^f on [0, 1].
_LN2 = 0.6931471805599453


def _taylor_coefficients():
    c, out = 1.0, []
    for k in range(15):
        out.append(c)
        c = c * _LN2 / (k + 1)
    return out


TAYLOR = tuple(_taylor_coefficients())


def reference(name, n):
    """The reference values, as float32 bit patterns (int64), that the C++ side computes
    for the n entries of table `name`."""
    i = np.arange(n, dtype=np.float64)
    if name in ("ex2_pos", "ex2_neg"):
        f = i * 2.0 ** -23 * (1.0 if name == "ex2_pos" else -1.0)
        p = np.full(n, TAYLOR[-1])
        for c in reversed(TAYLOR[:-1]):
            p = p * f + c
        v = p
    elif name == "rcp":
        v = 1.0 / (1.0 + i * 2.0 ** -23)
    else:
        root = np.sqrt(np.where(i < (1 << 23), 1.0 + i * 2.0 ** -23, 2.0 + (i - (1 << 23)) * 2.0 ** -22))
        v = 1.0 / root if name == "rsqrt" else root
    return v.astype(np.float32).view(np.int32).astype(np.int64)


def encode(measured):
    """{name: float32 array measured on the GPU} -> the bytes of DATA."""
    parts = []
    for name, n in TABLES:
        got = np.asarray(measured[name], dtype=np.float32)
        assert got.size == n, (name, got.size)
        delta = got.view(np.int32).astype(np.int64) - reference(name, n)
        if delta.min() < -OFFSET or delta.max() >= OFFSET:
            raise ValueError(f"{name}: a measured value is {delta.min()}..{delta.max()} units from the reference, "
                             "beyond what 4 bits hold")
        nib = (delta + OFFSET).astype(np.uint8)
        parts.append((nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes())
    return lzma.compress(b"".join(parts), preset=9)


def decode(name, blob):
    """The float32 table `name` from the decompressed data (for tests and checks)."""
    start = 0
    for other, n in TABLES:
        if other == name:
            packed = np.frombuffer(blob, np.uint8, n // 2, start)
            nib = np.empty(n, np.int64)
            nib[0::2], nib[1::2] = packed & 15, packed >> 4
            return (reference(name, n) + nib - OFFSET).astype(np.int32).view(np.float32)
        start += n // 2
    raise KeyError(name)


def encode_sine(quarter):
    """The quarter wave measured on the GPU (float32, SINE_ENTRIES) -> the bytes of SIN_DATA."""
    q = np.asarray(quarter, dtype=np.float32)
    assert q.size == SINE_ENTRIES, q.size
    steps = np.diff(q.view(np.int32).astype(np.int64), prepend=0).astype("<i4")
    return lzma.compress(steps.tobytes(), preset=9)


def decode_sine(data, out=None):
    """SIN_DATA's bytes -> the quarter wave, float32 (into the bytes `out` where given)."""
    words = _decompress_into(data, _bytes(out, SINE_BYTES)).view("<u4")
    return _running_sums(words).view(np.float32)


def encode_lg2(t0, t1, fixes):
    """T0 and T1 (float32 bit patterns, LG2_ENTRIES each) and each class's set (bool arrays, in
    LG2_CLASSES' order), as measured on a GPU -> the bytes of LG2_DATA."""
    assert len(fixes) == len(LG2_CLASSES)
    parts = [np.diff(np.asarray(t, np.uint32).astype(np.int64), prepend=0).astype("<i4").tobytes() for t in (t0, t1)]
    parts += [np.packbits(np.asarray(f, bool), bitorder="little").tobytes() for f in fixes]
    return lzma.compress(b"".join(parts), preset=9)


def decode_lg2(data, out=None):
    """LG2_DATA's bytes -> one uint32 array: T0, T1, then each class's bitmap (bit m of word
    m / 32), as kc_gpu_math.h reads it (into the bytes `out` where given). The steps of T0
    and T1 are summed where they lie; the bitmaps are as stored."""
    n = LG2_ENTRIES
    words = _decompress_into(data, _bytes(out, LG2_BYTES)).view("<u4")
    _running_sums(words[:n])
    _running_sums(words[n:2 * n])
    return words


def _bytes(out, nbytes):
    """`out` (a uint8 array of nbytes), or a new one."""
    if out is None:
        return np.empty(nbytes, np.uint8)
    assert out.dtype == np.uint8 and out.size == nbytes, (out.dtype, out.size, nbytes)
    return out


def _decompress_into(data, out):
    """lzma's decompression of `data`, written into the uint8 array `out`, which it fills: a
    megabyte at a time, so that no copy of the whole is made."""
    d, at = lzma.LZMADecompressor(), 0
    chunk = d.decompress(data, max_length=1 << 20)
    while True:
        out[at:at + len(chunk)] = np.frombuffer(chunk, np.uint8)
        at += len(chunk)
        if d.eof or not chunk:
            break
        chunk = d.decompress(b"", max_length=1 << 20)
    if not d.eof or at != out.size:
        raise ValueError(f"the table decompresses to {at} bytes, not {out.size}")
    return out


def _running_sums(words):
    """Each entry of the uint32 array `words` replaced, in place, by its sum with the entries
    before it, modulo 2^32 (a table stored as steps; int64 sums cut to 32 bits are the same
    bits), a block at a time."""
    carry = np.uint32(0)
    for lo in range(0, words.size, 1 << 20):
        block = words[lo:lo + (1 << 20)]
        np.cumsum(block, dtype=np.uint32, out=block)
        block += carry
        carry = block[-1]
    return words


# The decoded tables (138 MB) live in memory mapped MAP_SHARED, decoded there, then made
# read-only. Every launch forks this process, and a fork copies the page-table entry of each
# page of the process's own memory it has written (0.13 ms a MB on a 2-core virtual machine:
# logs/2026-12-07-suite-time-8.md), none of a shared mapping's: a worker maps the pages of a
# table as it reads them. Read-only, because a worker shares them: a kernel's stray write
# there faults (a crash, reported) instead of changing what later launches read.
def _shared(nbytes, fill):
    """fill(out) writes a table into the uint8 array `out` of nbytes, in a shared mapping that
    is then made read-only; returns a read-only memoryview of it (numpy arrays over it cannot
    be made writable)."""
    mapping = mmap.mmap(-1, nbytes)
    fill(np.frombuffer(mapping, np.uint8))
    view = memoryview(mapping).toreadonly()
    system.protect(np.frombuffer(view, np.uint8).ctypes.data, nbytes, system.PROT_READ)
    return view


@lru_cache(maxsize=None)
def lg2():
    """lg2.approx's table (decode_lg2's words), kept for the life of the process."""
    return np.frombuffer(_shared(LG2_BYTES, lambda out: decode_lg2(LG2_DATA.read_bytes(), out)), "<u4")


@lru_cache(maxsize=None)
def sine():
    """The quarter wave, kept for the life of the process."""
    return np.frombuffer(_shared(SINE_BYTES, lambda out: decode_sine(SIN_DATA.read_bytes(), out)), np.float32)


@lru_cache(maxsize=None)
def tables():
    """The decompressed tables: one uint8 array, kept for the life of the process."""
    return np.frombuffer(_shared(TABLES_BYTES, lambda out: _decompress_into(DATA.read_bytes(), out)), np.uint8)


def install(lib):
    """Give a kernel's library the tables its code uses: it then defines kc_gpu_math_tables
    (ex2, rcp, rsqrt, sqrt), kc_gpu_sine (the quarter wave) or kc_gpu_lg2; a library that uses none
    costs nothing."""
    try:
        slots = (ctypes.c_void_p * len(TABLES)).in_dll(lib, "kc_gpu_math_tables")
    except ValueError:
        slots = None
    if slots is not None:
        at = tables().ctypes.data
        for i, (_, n) in enumerate(TABLES):
            slots[i] = at
            at += n // 2
    for symbol, table in (("kc_gpu_sine", sine), ("kc_gpu_lg2", lg2)):
        try:
            slot = ctypes.c_void_p.in_dll(lib, symbol)
        except ValueError:
            continue
        slot.value = table().ctypes.data
