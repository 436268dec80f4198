"""C++ styles (src/team_cpp.cu): kernels with C++ linkage, in namespaces, templates,
structs, typedefs, references, lambdas, recursion, functors, overlapping views."""
import math

import numpy as np

from .case import Bug, Case, Launch

N = (1, 9, 128, 777)


def _grid(n, b=128):
    return (max(1, -(-n // b)),)


PARTICLE = np.dtype({"names": ["pos", "mass", "vel", "id"], "formats": [("<f4", (3,)), "<f4", ("<f4", (3,)), "<i4"],
                     "offsets": [0, 12, 16, 28], "itemsize": 32})


def _particles(rng, n):
    p = np.zeros(n, PARTICLE)
    p["pos"], p["vel"], p["mass"] = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.random(n)
    return Launch(_grid(n), (128,), (p, 0.5, n))


def _particles_ref(args, n):
    p = args[0].copy()
    p["pos"] = p["pos"] + np.float32(0.5) * p["vel"]
    p["id"] = np.arange(n)
    return {0: p}


def _mandelbrot_ref(args, s):
    """The kernel's float32 arithmetic, op for op (the GPU run compiles with --fmad=false)."""
    h, w = s
    f = np.float32
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    cre = f(-2.0) + f(2.5) * x.astype(f) / f(w)
    cim = f(-1.25) + f(2.5) * y.astype(f) / f(h)
    zre, zim, k = np.zeros(s, f), np.zeros(s, f), np.zeros(s, np.int64)
    for _ in range(50):
        live = zre * zre + zim * zim <= f(4.0)
        nre = zre * zre - zim * zim + cre
        nim = zre * zim + zim * zre + cim
        zre, zim = np.where(live, nre, zre), np.where(live, nim, zim)
        k += live
    return {0: k}


def _scale(dtype, clamp):
    def setup(rng, n):
        x = (rng.standard_normal(n) * 10).astype(dtype)
        return Launch(_grid(n, 64 if dtype == np.float64 else 128), (64 if dtype == np.float64 else 128,),
                      (x, np.zeros(n, dtype), dtype(-1.5) if clamp else dtype(3), n))

    def reference(args, n):
        v = args[0].astype(np.float64) * float(args[2])
        return {1: np.maximum(v, 0) if clamp else v}
    return setup, reference


def _tile(rng, s):
    r, c = s
    return Launch((-(-c // 32), -(-r // 64)), (128,), (np.zeros(s, np.float32), r, c))


def _tile_ref(args, s):
    r, c = s
    rows, cols = np.meshgrid(np.arange(r), np.arange(c), indexing="ij")
    return {0: (rows % 4) * 4 + cols % 4 + (rows // 4 * 4) + (cols // 4 * 4)}


def _typedef(rng, n):
    return Launch(_grid(n), (128,), (rng.integers(0, 1000, n).astype(np.uint32), np.zeros(8, np.uint32),
                                     np.zeros(n, np.float32), 0.5, n))


def _views(rng, n):
    x = rng.integers(-100, 100, n + 1).astype(np.int32)
    return Launch((1,), (max(32, n),), (x[:-1], x[1:], n))


def _views_ref(args, n):
    src = args[0]
    full = np.concatenate([src, [0]])          # args[1] is src shifted by one; its last element is ignored
    expected = full.copy()
    expected[1:n + 1] = src + 1
    return {0: expected[:n], 1: expected[1:n + 1]}


def _const_cast(rng, n):
    return Launch(_grid(n), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(1, np.float32), n))


CASES = [
    Case("particles_step", "team_cpp", "physics::step", _particles, _particles_ref, N,
         style="AoS struct with float3 members and __align__(16), C++ linkage in a namespace"),
    Case("scale_clamp_default", "team_cpp", "scale_clamp<float>", *_scale(np.float32, False), N,
         name_expressions=("scale_clamp<float>",), style="template with several parameters, defaults used"),
    Case("scale_clamp_double", "team_cpp", "scale_clamp<double, 64, true>", *_scale(np.float64, True), N,
         name_expressions=("scale_clamp<double, 64, true>",), style="template with every parameter given",
         bugs=(Bug("guard_off_by_one",
                   (("    if (i < n) {\n        T v = in[i] * s;", "    if (i <= n) {\n        T v = in[i] * s;"),),
                   "OutOfBoundsError", 100, block=(1, 0, 0), thread=(36, 0, 0), array="in", index=(100,),
                   what="`<=` in the guard of a template kernel: element n is read."),)),
    Case("tile_fill", "team_cpp", "tile_fill", _tile, _tile_ref, ((1, 1), (64, 32), (70, 45)),
         style="__launch_bounds__((BM * BN) / (TM * TN), 1), register tile acc[TM][TN]"),
    Case("typedef_helpers", "team_cpp", "typedef_helpers", _typedef,
         lambda a, n: {1: np.bincount(a[0] % 8, minlength=8), 2: 0.5 * a[0].astype(np.float64)}, N,
         style="typedef'd pointers (uint*, real*) passed to device helpers",
         bugs=(Bug("bin_unmasked",
                   (("        bump(&counts[keys[i] % 8], 1u);", "        bump(&counts[keys[i] % 9], 1u);"),),
                   "OutOfBoundsError", 200, array="counts", index=(8,),
                   what="% 9 where there are 8 counters: key values 8 mod 9 fall past the array."),)),
    Case("array_syntax", "team_cpp", "array_syntax",
         lambda rng, n: Launch(_grid(n), (128,), (rng.integers(0, n, n).astype(np.int32),
                                                  rng.standard_normal(n).astype(np.float32),
                                                  np.zeros(n, np.float32), n)),
         lambda a, n: {2: 2 * a[1][a[0]]}, N, style="array-syntax parameters (const int idx[], float vals[])",
         bugs=(Bug("index_unchecked",
                   (("    if (i < n) out[i] = vals[idx[i]] * 2.0f;", "    out[i] = vals[idx[i]] * 2.0f;"),),
                   "OutOfBoundsError", 9, block=(0, 0, 0), thread=(9, 0, 0), array="idx", index=(9,),
                   what="The guard is gone: thread 9 of a 9-element launch reads idx[9]."),)),
    Case("shared_refs", "team_cpp", "shared_refs",
         lambda rng, n: Launch(_grid(n), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                                  n)),
         lambda a, n: {1: (lambda x: np.concatenate([np.roll(x[s:s + 128], 1) + x[s:s + 128] + 5
                                                     for s in range(0, len(x), 128)])[:n])(
             np.concatenate([a[0], np.zeros(-n % 128, np.float32)]).astype(np.float64))},
         N, rtol=1e-6, atol=1e-6, style="float& bound to a shared element, auto copy, sizeof(s[0])",
         bugs=(Bug("copy_before_neighbour_stored",
                   (("    mine = (i < n) ? in[i] : 0.0f;\n    __syncthreads();",
                     "    mine = (i < n) ? in[i] : 0.0f;"),),
                   "SharedMemoryRaceError", 128, block=(0, 0, 0), array="s",
                   what="The neighbour's element is copied before the neighbour stored it."),)),
    Case("with_lambda", "team_cpp", "with_lambda",
         lambda rng, n: Launch(_grid(n), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                                  4.0, n)),
         lambda a, n: {1: np.where(a[0] > 0, 4 * a[0].astype(np.float64), a[0] / 4.0)}, N,
         style="a lambda in device code"),
    Case("recursion", "team_cpp", "recursion",
         lambda rng, n: Launch(_grid(n), (128,), (rng.integers(1, 10000, n).astype(np.int32),
                                                  rng.integers(1, 10000, n).astype(np.int32),
                                                  np.zeros(n, np.int32), np.zeros(n, np.uint64), n)),
         lambda a, n: {2: np.array([math.gcd(int(x), int(y)) for x, y in zip(a[0], a[1])]),
                       3: np.array([math.factorial(int(x) % 15) for x in a[0]], dtype=np.uint64)}, N,
         style="recursive __device__ functions (gcd, factorial)"),
    Case("mandelbrot", "team_cpp", "mandelbrot",
         lambda rng, s: Launch((-(-s[1] // 16), -(-s[0] // 8)), (16, 8), (np.zeros(s, np.int32), s[1], s[0], 50)),
         _mandelbrot_ref, ((1, 1), (10, 20), (40, 33)), options=("--fmad=false",),
         style="a struct with operator overloads (complex arithmetic)"),
    Case("local_histogram", "team_cpp", "local_histogram",
         lambda rng, n: Launch((2,), (32,), (rng.integers(0, 256, n).astype(np.uint8), np.zeros(8, np.int32),
                                             -(-n // 64) or 1, n)),
         lambda a, n: {1: np.bincount(a[0] & 7, minlength=8)}, N, style="a per-thread local array of counters",
         bugs=(Bug("local_bin_overrun", (("counts[in[start + j] & 7]++;", "counts[in[start + j] & 15]++;"),),
                   "OutOfBoundsError", 128, block=(0, 0, 0), array="counts",
                   what="& 15 on an array of 8 counters: a local array indexed past its end."),)),
    Case("inplace_twice", "team_cpp", "inplace_twice",
         lambda rng, n: (lambda x: Launch(_grid(n), (128,), (x, x, n)))(rng.standard_normal(n).astype(np.float32)),
         lambda a, n: {0: a[0].astype(np.float64) ** 2 + 1}, N, rtol=1e-6,
         style="in-place kernel given one array twice"),
    Case("shift_views", "team_cpp", "shift_views", _views, _views_ref, (1, 9, 128, 700),
         style="overlapping views x[:-1] and x[1:] of one array: one memory"),
    Case("through_const_cast", "team_cpp", "through_const_cast", _const_cast,
         lambda a, n: {0: 2 * a[0].astype(np.float64), 1: np.array([n])}, N,
         style="a write through const_cast of a const float* parameter"),
    Case("functor", "team_cpp", "functor",
         lambda rng, n: Launch(_grid(n), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                                  n)),
         lambda a, n: {1: a[0].astype(np.float64) ** 4}, N, rtol=1e-5, style="a template taking a functor"),
    Case("ref_returning", "team_cpp", "ref_returning",
         lambda rng, n: Launch(_grid(n), (128,), (rng.standard_normal(n).astype(np.float32),
                                                  rng.standard_normal(n).astype(np.float32), n)),
         lambda a, n: {0: a[0] + np.where(np.arange(n) % 2 == 0, 10, 0),
                       1: a[1] + np.where(np.arange(n) % 2 == 1, 10, 0)}, N,
         rtol=1e-6, style="a __device__ function returning a reference"),
]
