"""C++ in device code (src/cpp_*.cu): C++ linkage, nested namespaces, templates with several
parameters and defaults, __launch_bounds__ of a macro expression, structs by pointer and an
__align__(16) struct, typedef'd pointers, array-syntax parameters, references to shared
elements, auto copies, sizeof(s[0]) in index arithmetic, lambdas, recursion, register
tiles and a dynamically indexed local array, reference-returning helpers, operator
overloading, const_cast writes, one array passed three times, and overlapping views."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


N = (1, 7, 128, 300, 1000)

# Structs passed by pointer travel as NumPy structured arrays laid out like the C structs.
PARTICLE = np.dtype([("pos", "<f4", (3,)), ("vel", "<f4", (3,)), ("mass", "<f4"), ("charge", "<f4")])   # 32 bytes
VEC4 = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("w", "<f4")])   # __align__(16)
CPLX = np.dtype([("re", "<f4"), ("im", "<f4")])


def _chunks(x, b):
    """x zero-padded to a multiple of b, as rows of b."""
    return np.concatenate([x, np.zeros(-len(x) % b, x.dtype)]).reshape(-1, b)


# ---------------------------------------------------------------- linkage, namespaces
def _link_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), _f32(rng, n), np.zeros(n, np.float32), np.zeros(n, np.int32),
                                             np.float32(rng.uniform(-2, 2)), np.int32(n)))


def _link_ref(args, n):
    return {2: 2 * (float(args[4]) * args[0].astype(np.float64) + args[1]), 3: 2 * np.arange(n)}


def _ns_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (rng.integers(0, 256, n).astype(np.uint8), np.zeros(n, np.uint8),
                                             np.uint8(rng.integers(50, 200)), np.int32(n)))


def _ns_ref(args, n):
    v = 255 - args[0].astype(np.int64)
    return {1: np.where(v > int(args[2]), v, 0)}


# ---------------------------------------------------------------- template
def _rev_setup(dtype, block):
    def setup(rng, n):
        x = _f32(rng, n) if dtype == np.float32 else rng.integers(-10**6, 10**6, n).astype(dtype)
        return Launch((_cdiv(n, block),), (block,), (x, np.zeros(n, dtype), np.int32(n)))
    return setup


def _rev_ref(block, negate):
    def reference(args, n):
        x = args[0]
        out = np.concatenate([x[s:s + block][::-1] for s in range(0, n, block)])
        return {1: -out if negate else out}
    return reference


# ---------------------------------------------------------------- launch bounds
def _rank1_setup(rng, s):
    m, n = s
    return Launch((_cdiv(n, 32), _cdiv(m, 32)), (64,), (_f32(rng, m), _f32(rng, n), _f32(rng, s), np.int32(m),
                                                       np.int32(n), np.float32(rng.uniform(-2, 2))))


def _rank1_ref(args, s):
    return {2: args[2] + float(args[5]) * np.outer(args[0].astype(np.float64), args[1].astype(np.float64))}


# ---------------------------------------------------------------- structs
def _aos_setup(rng, n):
    p = np.zeros(n, PARTICLE)
    p["pos"], p["vel"] = _f32(rng, (n, 3)), _f32(rng, (n, 3))
    p["mass"], p["charge"] = rng.uniform(0.5, 2.0, n), rng.standard_normal(n)
    return Launch((_cdiv(n, 64),), (64,), (p, np.float32(0.3), np.float32(-0.2), np.float32(0.7), np.float32(0.05),
                                           np.int32(n)))


def _aos_ref(args, n):
    p = args[0]
    e = np.array([float(args[1]), float(args[2]), float(args[3])])
    dt = float(args[4])
    vel = p["vel"].astype(np.float64) + (p["charge"].astype(np.float64) / p["mass"] * dt)[:, None] * e
    out = p.copy()
    out["vel"], out["pos"] = vel, p["pos"] + vel * dt
    return {0: out}


def _vec4_setup(rng, n):
    v = np.zeros(n, VEC4)
    for f in "xyzw":
        v[f] = rng.standard_normal(n)
    return Launch((_cdiv(n, 128),), (128,), (v, np.zeros(n, VEC4), np.int32(n)))


def _vec4_ref(args, n):
    v = args[0]
    ln = np.sqrt(sum(v[f].astype(np.float64) ** 2 for f in "xyz"))
    out = np.zeros(n, VEC4)
    for f in "xyz":
        out[f] = v[f] / ln
    out["w"] = ln
    return {1: out}


# ---------------------------------------------------------------- typedefs, array params
def _pack_setup(rng, n):
    nwords = -(-n // 32)
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, n), np.zeros(nwords, np.uint32), _f32(rng, n), np.float32(0.75),
                                           np.float32(rng.uniform(-0.5, 0.5)), np.int32(n), np.int32(nwords)))


def _pack_ref(args, n):
    bits = np.packbits(_chunks(args[0] > args[4], 32), axis=1, bitorder="little").view("<u4").ravel()
    return {1: bits, 2: args[2] + 0.75 * args[0].astype(np.float64)}


def _perm_setup(rng, n):
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, n), rng.permutation(n).astype(np.int32), np.zeros(n, np.float32),
                                           np.int32(n)))


def _perm_ref(args, n):
    out = np.zeros(n, np.float32)
    out[args[1]] = args[0]
    return {2: out}


# ---------------------------------------------------------------- shared references, auto, sizeof
def _pairs_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), np.zeros(n, np.float32), np.zeros(n, np.float32),
                                             np.int32(n)))


def _pairs_ref(args, n):
    xp = _chunks(args[0].astype(np.float64), 128)
    s = xp.copy()
    s[:, 1:] += xp[:, :-1]
    return {1: s.ravel()[:n], 2: s[:, ::-1].ravel()[:n]}


def _auto_setup(rng, n):
    return Launch((_cdiv(n, 256),), (256,), (rng.integers(-1000, 1000, n).astype(np.int32), np.zeros(n, np.int32),
                                             np.int32(n)))


def _group4_setup(rng, n):
    return Launch((_cdiv(n, 512),), (128,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(n)), shared_mem=128 * 16)


def _group4_ref(args, n):
    g = _chunks(args[0].astype(np.float64), 4)
    return {1: (g.sum(1, keepdims=True) - g).ravel()[:n]}


# ---------------------------------------------------------------- lambda, recursion
def _lambda_setup(rng, n):
    per, threads = 3, 64 * _cdiv(_cdiv(n, 3), 64)
    return Launch((threads // 64,), (64,), (_f32(rng, n) * 2, np.zeros(n, np.float32), np.zeros(threads, np.int32),
                                            np.float32(-1.0), np.float32(1.5), np.int32(n), np.int32(per)))


def _lambda_ref(args, n):
    x, lo, hi, per = args[0].astype(np.float64), float(args[3]), float(args[4]), int(args[6])
    out = (x < lo) | (x > hi)
    hits = np.zeros(len(args[2]) * per, np.int64)
    hits[:n] = out
    return {1: 2 * np.clip(x, lo, hi), 2: hits.reshape(-1, per).sum(1)}


def _search_setup(rng, n):
    m = int(rng.integers(1, 200))
    srt = np.sort(rng.integers(-50, 50, m).astype(np.float32))      # duplicates on purpose
    keys = np.where(rng.random(n) < 0.5, srt[rng.integers(0, m, n)], rng.uniform(-60, 60, n)).astype(np.float32)
    return Launch((_cdiv(n, 128),), (128,), (srt, np.int32(m), keys, np.zeros(n, np.int32),
                                             rng.integers(0, 20, n).astype(np.int32), np.zeros(n, np.uint64),
                                             np.int32(n)))


def _search_ref(args, n):
    return {3: np.searchsorted(args[0], args[2], side="left"),
            5: args[4].astype(np.uint64) ** (np.arange(n) % 13).astype(np.uint64)}


# ---------------------------------------------------------------- register tile, ring buffer
def _tile4_setup(rng, s):
    h, w = s
    return Launch((_cdiv(w // 4, 8), _cdiv(h // 4, 8)), (8, 8), (_f32(rng, s), np.zeros(s, np.float32), np.int32(h),
                                                                 np.int32(w)))


def _tile4_ref(args, s):
    h, w = s
    t = args[0].astype(np.float64).reshape(h // 4, 4, w // 4, 4)
    out = t - t.mean(3, keepdims=True) - t.mean(1, keepdims=True) + t.mean((1, 3), keepdims=True)
    return {1: out.reshape(h, w)}


def _ring_setup(rng, s):
    T, n = s
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, s), np.zeros(s, np.float32), np.int32(T), np.int32(n)))


def _ring_ref(args, s):
    T, n = s
    cs = np.cumsum(args[0].astype(np.float64), 0)
    win = cs.copy()
    win[5:] -= cs[:-5]
    return {1: win / np.minimum(np.arange(1, T + 1), 5)[:, None]}


# ---------------------------------------------------------------- reference return, operators
def _rot_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(n),
                                             np.int32(rng.integers(-300, 300))))


def _rot_ref(args, n):
    k = int(args[3])
    return {1: np.concatenate([np.roll(args[0][s:s + 128], k) for s in range(0, n, 128)])}


def _cplx_array(rng, n):
    z = np.zeros(n, CPLX)
    z["re"], z["im"] = rng.standard_normal(n), rng.standard_normal(n)
    return z


def _cmul_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_cplx_array(rng, n), _cplx_array(rng, n), _cplx_array(rng, n),
                                             np.int32(n)))


def _cplx(a):
    return a["re"].astype(np.float64) + 1j * a["im"]


def _cmul_ref(args, n):
    r = _cplx(args[2]) + _cplx(args[0]) * np.conj(_cplx(args[1]))
    out = np.zeros(n, CPLX)
    out["re"], out["im"] = r.real, r.imag
    return {2: out}


# ---------------------------------------------------------------- aliasing
def _cc_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), np.array([rng.uniform(0.5, 3)], np.float32), np.int32(n)))


def _same_setup(rng, n):
    x = _f32(rng, n)
    return Launch((_cdiv(n, 128),), (128,), (x, x, x, np.float32(rng.uniform(-2, 2)), np.int32(n)))


def _views_setup(rng, n):
    x = _f32(rng, n + 1)
    return Launch((1,), (256,), (x[:-1], x[1:], np.int32(n)))


def _views_ref(args, n):
    x = np.concatenate([args[0], args[1][-1:]]).astype(np.float64)   # the one array both views share
    new = x.copy()
    new[:-1] = x[1:] - x[:-1]
    return {0: new[:-1], 1: new[1:]}


CASES = [
    Case("cpp_cxx_linkage", "cpp_linkage", "scale_add", _link_setup, _link_ref, N, name_expressions=("scale_add",),
         rtol=1e-6, atol=1e-6,
         style="C++ linkage kernel (mangled name via name_expressions), overloaded device helpers"),
    Case("cpp_nested_namespace", "cpp_namespace", "imgproc::v2::invert_threshold", _ns_setup, _ns_ref, N,
         name_expressions=("imgproc::v2::invert_threshold",),
         style="kernel in nested namespaces, helpers in a detail namespace, unsigned char scalar"),
    Case("cpp_template_defaults", "cpp_template_reverse", "block_reverse<float>", _rev_setup(np.float32, 128),
         _rev_ref(128, False), N, name_expressions=("block_reverse<float>",),
         style="template <typename T, int BLOCK = 128, bool NEGATE = false>, defaults used",
         bugs=(Bug("barrier_missing", (("    __syncthreads();\n", ""),),
                   "SharedMemoryRaceError", 300, block=(0, 0, 0), array="s",
                   what="No barrier: threads read mirrored elements that other threads store in the same interval."),)),
    Case("cpp_template_all_args", "cpp_template_reverse", "block_reverse<int, 64, true>", _rev_setup(np.int32, 64),
         _rev_ref(64, True), N, name_expressions=("block_reverse<int, 64, true>",),
         style="the same template with every parameter given (int, 64 threads, negated)"),
    Case("cpp_launch_bounds_expr", "cpp_launch_bounds", "rank1_regtile", _rank1_setup, _rank1_ref,
         ((1, 1), (5, 9), (32, 32), (40, 50), (70, 33)), rtol=1e-5, atol=1e-5,
         style="__launch_bounds__((BM * BN) / (TM * TN), 1) with macros, register tiles ru[TM], rv[TN], acc[TM][TN]",
         bugs=(Bug("stage_guard_inclusive", (("    if (tid < BM) us[tid]", "    if (tid <= BM) us[tid]"),),
                   "OutOfBoundsError", (40, 50), thread=(32, 0, 0), block=(0, 0, 0), array="us", index=(32,),
                   what="`<=` when staging u: thread BM writes one past the shared array."),)),
    Case("cpp_aos_particles", "cpp_aos", "push_particles", _aos_setup, _aos_ref, N, rtol=1e-5, atol=1e-5,
         style="array of structs (float3 members) by pointer, updated through a Particle& in a device function"),
    Case("cpp_align16_struct", "cpp_align16", "normalize_vec4", _vec4_setup, _vec4_ref, N, rtol=1e-5, atol=1e-6,
         style="__align__(16) struct of four floats loaded and stored whole"),
    Case("cpp_typedef_pointers", "cpp_typedef", "typedef_pack", _pack_setup, _pack_ref, N, rtol=1e-6, atol=1e-6,
         style="student habit: typedef float real; typedef unsigned int uint; pointers passed to __device__ helpers",
         bugs=(Bug("last_word_unguarded", (("if (start + b < n && x[start + b] > thr)", "if (x[start + b] > thr)"),),
                   "OutOfBoundsError", 1000, thread=(31, 0, 0), block=(0, 0, 0), array="x", index=(1000,),
                   what="The last, partial word is packed without the length test: it reads past x."),)),
    Case("cpp_array_syntax_params", "cpp_array_params", "scatter_perm", _perm_setup, _perm_ref, N,
         style="array-syntax parameters (const float src[], const int perm[], float dst[])",
         bugs=(Bug("guard_missing", (("    if (i < n) dst[perm[i]] = src[i];", "    dst[perm[i]] = src[i];"),),
                   "OutOfBoundsError", 100, thread=(36, 0, 0), block=(1, 0, 0), index=(100,),
                   what="No guard: the partial last block reads src[n] and perm[n]."),)),
    Case("cpp_shared_reference", "cpp_shared_ref", "pair_sums_ref", _pairs_setup, _pairs_ref, N, rtol=1e-6, atol=1e-6,
         style="float& acc = s[threadIdx.x]; acc += v; after a hand-off to s[tid + 1]",
         bugs=(Bug("handoff_unguarded", (("    if (t + 1 < B) s[t + 1] = v;", "    s[t + 1] = v;"),),
                   "OutOfBoundsError", 300, thread=(127, 0, 0), block=(0, 0, 0), array="s", index=(128,),
                   what="s[tid + 1] is written with no guard: the block's last thread writes past s."),)),
    Case("cpp_auto_copy", "cpp_auto_copy", "auto_keeps_old", _auto_setup,
         lambda a, n: {1: 10004 * a[0].astype(np.int64)}, N,
         style="auto v = s[i] (a copy) then s[i] overwritten; auto& and decltype"),
    Case("cpp_sizeof_index", "cpp_sizeof_index", "others_in_group4", _group4_setup, _group4_ref, N,
         rtol=1e-6, atol=1e-6,
         style="sizeof(float4) / sizeof(s[0]) in index arithmetic, extern __shared__ float s[]",
         bugs=(Bug("sizeof_wrong_element", (("sizeof(float4) / sizeof(s[0])", "sizeof(float4) / sizeof(char)"),),
                   "OutOfBoundsError", 1000, thread=(0, 0, 0), block=(0, 0, 0), array="s", index=(512,),
                   what="sizeof(char) where sizeof(s[0]) was meant: "
                        "16 slots per thread overflow the dynamic array."),)),
    Case("cpp_device_lambdas", "cpp_lambda", "lambda_clamp_count", _lambda_setup, _lambda_ref, N, rtol=1e-6, atol=1e-6,
         style="lambdas in device code: [&] capture counting into a local, a generic auto lambda"),
    Case("cpp_recursion_search_pow", "cpp_recursion", "search_and_pow", _search_setup, _search_ref, N,
         style="recursive __device__ functions: lower-bound binary search, exponentiation by squaring"),
    Case("cpp_register_tile_4x4", "cpp_regtile", "tile4_center", _tile4_setup, _tile4_ref,
         ((4, 4), (8, 12), (36, 20), (64, 68)), rtol=1e-5, atol=1e-5,
         style="register tile float acc[4][4] indexed by unrolled constants"),
    Case("cpp_local_ring_buffer", "cpp_ring", "moving_average", _ring_setup, _ring_ref,
         ((1, 1), (4, 7), (12, 50), (40, 130)), rtol=1e-4, atol=1e-5,
         style="a local array indexed dynamically (ring buffer window[t % WIN])",
         bugs=(Bug("ring_index_modulus_wrong",
                   (("        window[t % WIN] = v;", "        window[t % (WIN + 1)] = v;"),),
                   "OutOfBoundsError", (12, 50), block=(0, 0, 0), array="window", index=(5,),
                   what="The store's modulus is WIN + 1: at t = 5 it writes past the local window."),)),
    Case("cpp_ref_returning_helper", "cpp_ref_return", "rotate_chunks", _rot_setup, _rot_ref, N,
         style="__device__ float& wrap_at(...) used as an lvalue and an rvalue on shared memory"),
    Case("cpp_complex_operators", "cpp_complex_ops", "cmul_accumulate", _cmul_setup, _cmul_ref, N, rtol=1e-5, atol=1e-6,
         style="struct Cplx with operator*, operator+, operator+= overloads"),
    Case("cpp_const_cast_write", "cpp_const_cast", "normalize_through_const", _cc_setup,
         lambda a, n: {0: a[0].astype(np.float64) / float(a[1][0])}, N, rtol=1e-6, atol=1e-6,
         style="const_cast<float*> of a const float* parameter, written through"),
    Case("cpp_same_array_thrice", "cpp_same_array", "add_scaled", _same_setup,
         lambda a, n: {0: a[0].astype(np.float64) * (1 + float(a[3]))}, N, rtol=1e-6, atol=1e-6,
         style="in-place kernel given one array as output and both inputs"),
    Case("cpp_overlapping_views", "cpp_overlap_views", "forward_diff_views", _views_setup, _views_ref,
         (1, 2, 255, 700, 1024), rtol=1e-6, atol=1e-6,
         style="overlapping views x[:-1] (dst) and x[1:] (src) of one NumPy array: one memory on the GPU"),
]
