"""wgmma.mma_async with A from registers (the "RS" form) and the TF32 type on the CPU runtime
(frontend/ptx_async.py, cpu/src/kc_async.cpp): one warpgroup's small kernels load A's
fragment from global memory into its four .b32 registers (or A into shared memory: the SS
form), B into shared memory K-major (no swizzle, and the 128-byte swizzle) with ordinary
stores, and accumulate several k steps; plain and checked, against float64 NumPy of the
inputs as the tensor core takes them (TF32: truncated to 10 mantissa bits, kc_async.cpp's
tf32(); bf16 and f16: exact). Refusals of the forms PTX does not have. And the same kernels on
a GPU of compute capability 9.0 (sm_90a) through CuPy, against the CPU runtime: the check of
the fragment layouts and of the TF32 conversion on an H100:

    pytest -q -m gpu tests/runtime/test_wgmma_registers.py -s

(-s shows which of truncation and round-to-nearest the GPU's TF32 conversion matches.)"""
import numpy as np
import pytest

import cudacheck

U = 2.0 ** -24            # float32's unit roundoff
ROW = 128                 # bytes of k per row of an operand in shared memory (4 steps of k)
TYPES = {                 # PTX type: (C element type, bytes, K of one wgmma)
    "tf32": ("unsigned", 4, 8),
    "bf16": ("unsigned short", 2, 16),
    "f16": ("unsigned short", 2, 16),
}

COMMON = r"""
// Element (row, kt) of a K-major operand whose rows hold 128 bytes of k (128 / ES values), in
// shared memory 1,024-byte aligned, as wgmma's canonical layouts put it:
//   128-byte swizzle: row r at 128 r (8 rows a 1,024-byte group: SBO 1,024), k contiguous, the
//     16-byte chunk XORed with r % 8; step s of k starts 32 s bytes into the rows;
//   no swizzle: core matrices of 8 rows x 16 bytes (128 bytes), the one next in k 128 bytes on
//     (LBO 128), the next 8 rows 1,024 bytes on (SBO 1,024); step s starts 256 s bytes on.
__device__ unsigned kmajor(int row, int kt, int es, int swz) {
    if (swz) {
        unsigned off = row * 128 + kt * es;
        return off ^ (((off >> 7) & 7) << 4);
    }
    int per = 16 / es;
    return (row / 8) * 1024 + (kt / per) * 128 + (row % 8) * 16 + (kt % per) * es;
}
__device__ unsigned long long descriptor(unsigned addr, int swz) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(128 >> 4) << 16
         | (unsigned long long)(1024 >> 4) << 32 | (swz ? 1ull << 62 : 0ull);
}
"""

# {name} {E} {ES} {K} {KT} {N} {H} (N/2) {TYPE} {ASM} {OPERANDS} {FETCH}
KERNEL = r"""
extern "C" __global__ void {name}(const {E}* A, const {E}* B, float* D, int steps, int swz, int keep, float init) {{
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned char* s = (unsigned char*)__cvta_shared_to_generic(base);
    const int N = {N}, KT = {KT}, t = threadIdx.x, w = t / 32, l = t % 32, r = 16 * w + l / 4;
    // B (KT x N, row-major in global memory) as N rows of k at base; A (64 x KT) at base + 128 N
    for (int i = t; i < N * KT; i += 128)
        *({E}*)(s + kmajor(i / KT, i % KT, {ES}, swz)) = B[(i % KT) * N + i / KT];
    for (int i = t; i < 64 * KT; i += 128)
        *({E}*)(s + 128 * N + kmajor(i / KT, i % KT, {ES}, swz)) = A[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[{H}];
    for (int i = 0; i < {H}; ++i) d[i] = init;
    for (int st = 0; st < steps; ++st) {{
        unsigned step = swz ? 32 * st : 256 * st;
        unsigned long long da = descriptor(base + 128 * N + step, swz), db = descriptor(base + step, swz);
        unsigned a[4];   // this thread's fragment of A's step st (the PTX ISA's register layout)
        for (int j = 0; j < 4; ++j) {{
{FETCH}
        }}
        int sd = st > 0 || keep;
        for (int i = 0; i < {H}; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{P}, 0; {ASM}; }}"
                     : {OUTPUTS}
                     : {OPERANDS}, "r"(sd));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        for (int i = 0; i < {H}; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
        (void)da;
    }}
    for (int j = 0; j < N / 8; ++j)
        for (int h = 0; h < 4; ++h)
            D[(r + 8 * (h / 2)) * N + 8 * j + 2 * (l % 4) + h % 2] = d[4 * j + h];
}}
"""
FETCH = {
    "tf32": "            a[j] = A[(r + 8 * (j % 2)) * KT + {K} * st + l % 4 + 4 * (j / 2)];",
    "16": ("            const {E}* p = A + (r + 8 * (j % 2)) * KT + {K} * st + 2 * (l % 4) + 8 * (j / 2);\n"
           "            a[j] = (unsigned)p[0] | (unsigned)p[1] << 16;"),
}


def kernel(name, ptype, n, form, scale_a=1):
    """The CUDA source of one kernel: D (64 x n) = sum over `steps` wgmma of A (64 x K) B (K x n)
    (+ init where keep), A of `form` "rs" (registers) or "ss" (shared memory)."""
    e, es, k = TYPES[ptype]
    h = n // 2
    d = ", ".join(f"%{i}" for i in range(h))
    trans = "" if ptype == "tf32" else ", 0" if form == "rs" else ", 0, 0"
    if form == "rs":
        a, ops = f"{{%{h}, %{h + 1}, %{h + 2}, %{h + 3}}}", '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)'
        b, p = f"%{h + 4}", h + 5
    else:
        a, ops, b, p = f"%{h}", '"l"(da), "l"(db)', f"%{h + 1}", h + 2
    asm = (f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptype}.{ptype} {{{d}}}, {a}, {b}, p, {scale_a}, 1"
           f"{trans}")
    fetch = FETCH["tf32" if ptype == "tf32" else "16"].format(E=e, K=k)
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(h))
    return KERNEL.format(name=name, E=e, ES=es, K=k, KT=ROW // es, N=n, H=h, ASM=asm, P=p, OUTPUTS=outputs,
                         OPERANDS=ops, FETCH=fetch)


CASES = {   # name: (type, N, form, imm-scale-a)
    "rs_tf32_n8": ("tf32", 8, "rs", 1),
    "rs_tf32_n64": ("tf32", 64, "rs", 1),
    "rs_tf32_n256": ("tf32", 256, "rs", 1),
    "rs_bf16_n64": ("bf16", 64, "rs", 1),
    "rs_f16_n32": ("f16", 32, "rs", -1),
    "ss_tf32_n64": ("tf32", 64, "ss", 1),
    "ss_tf32_n16": ("tf32", 16, "ss", -1),
}
SOURCE = COMMON + "".join(kernel(name, *case) for name, case in CASES.items())


# ---- the inputs as the tensor core takes them ---------------------------------------------------
def tf32_truncated(x):
    """float32 -> the TF32 value by truncation (the low 13 mantissa bits dropped): the CPU runtime's."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def tf32_nearest(x):
    """float32 -> TF32 rounded to nearest, ties to even (finite values): the alternative model."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32)


def inputs(rng, ptype, n, steps):
    """(A as the kernel takes it (64 x KT), B (KT x n), A and B as float32 values of the type):
    uniform in [-1, 1) with the k columns past `steps` steps zero."""
    kt, k = ROW // TYPES[ptype][1], TYPES[ptype][2]
    a, b = rng.uniform(-1, 1, (64, kt)).astype(np.float32), rng.uniform(-1, 1, (kt, n)).astype(np.float32)
    a[:, steps * k:] = 0
    b[steps * k:, :] = 0
    return encoded(a, b, ptype)


def encoded(a, b, ptype):
    if ptype == "tf32":
        return a.view(np.uint32), b.view(np.uint32), tf32_truncated(a), tf32_truncated(b)
    if ptype == "bf16":   # round to nearest even onto bf16, then its bits
        def bits(x):
            u = x.view(np.uint32).astype(np.uint64)
            return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)
        ab, bb = bits(a), bits(b)
        return ab, bb, (ab.astype(np.uint32) << 16).view(np.float32), (bb.astype(np.uint32) << 16).view(np.float32)
    ah, bh = a.astype(np.float16), b.astype(np.float16)
    return ah.view(np.uint16), bh.view(np.uint16), ah.astype(np.float32), bh.astype(np.float32)


def launch(backend, name, A, B, steps, swz, keep, init, check=False):
    n = CASES[name][1]
    mod = module(backend, check)
    if backend == "gpu":
        import cupy
        A, B, D = cupy.asarray(A), cupy.asarray(B), cupy.zeros((64, n), cupy.float32)
    else:
        D = np.zeros((64, n), np.float32)
    mod.get_function(name)(1, 128, (A, B, D, np.int32(steps), np.int32(swz), np.int32(keep), np.float32(init)),
                           shared_mem=ROW * n + 64 * ROW + 1024)
    return D.get() if backend == "gpu" else D


_MODULES = {}


def module(backend, check=False):
    """SOURCE built once per backend and mode, for -arch=sm_90a (wgmma's target)."""
    if (backend, check) not in _MODULES:
        _MODULES[backend, check] = cudacheck.RawModule(SOURCE, backend=backend, options=("-arch=sm_90a",),
                                                       check=check)
    return _MODULES[backend, check]


def expected(name, Af, Bf, keep, init):
    """float64 of the product of the values the tensor core takes, with imm-scale-a, plus init
    where kept; and the bound on a float32 sum's error: 2 (k + 1) u (|A| |B| + |init|)."""
    scale_a = CASES[name][3]
    exact = scale_a * (Af.astype(np.float64) @ Bf.astype(np.float64)) + (init if keep else 0.0)
    size = np.abs(Af.astype(np.float64)) @ np.abs(Bf.astype(np.float64)) + (abs(init) if keep else 0.0)
    return exact, 2 * (Af.shape[1] + 1) * U * size


def assert_close(D, exact, bound, what):
    err = np.abs(D.astype(np.float64) - exact)
    bad = np.argwhere(err > bound)
    assert bad.size == 0, (f"{what}: {len(bad)} of {D.size} elements beyond the float32 bound, first at "
                           f"{tuple(bad[0])}: got {D[tuple(bad[0])]!r}, expected {exact[tuple(bad[0])]!r}")


# ---- on the CPU runtime ----------------------------------------------------------------------------
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("swz", [0, 1], ids=["no-swizzle", "swizzle128"])
@pytest.mark.parametrize("name", list(CASES))
def test_random_inputs_against_float64(name, swz, check, rng):
    ptype, n = CASES[name][:2]
    steps, keep, init = 4, 1, 0.5
    A, B, Af, Bf = inputs(rng, ptype, n, steps)
    D = launch("cpu", name, A, B, steps, swz, keep, init, check)
    exact, bound = expected(name, Af, Bf, keep, init)
    assert_close(D, exact, bound, f"{name}, swizzle {swz}")
    if ptype == "tf32":   # the truncation is visible: the unrounded inputs give another product
        assert not np.allclose(D, CASES[name][3] * (A.view(np.float32).astype(np.float64)
                                                    @ B.view(np.float32).astype(np.float64)) + init,
                               rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", ["rs_tf32_n64", "rs_bf16_n64"])
def test_scale_d_zero_discards_the_accumulator_and_fewer_steps(name, rng):
    ptype, n = CASES[name][:2]
    A, B, Af, Bf = inputs(rng, ptype, n, 2)
    D = launch("cpu", name, A, B, 2, 1, 0, 12345.0)
    exact, bound = expected(name, Af, Bf, 0, 0.0)
    assert_close(D, exact, bound, name)


def single_k(rng, ptype, n, k, low_bits=True):
    """A and B with only column / row k nonzero, so every product is exact and so is D; for tf32
    the values of A and B carry low 13 bits that truncation and round-to-nearest treat
    differently (bit 12 set, for the nearest rounding up), and some not."""
    kt = ROW // TYPES[ptype][1]
    a, b = np.zeros((64, kt), np.float32), np.zeros((kt, n), np.float32)
    a[:, k] = rng.uniform(0.5, 2, 64).astype(np.float32) * rng.choice([-1, 1], 64)
    b[k, :] = rng.uniform(0.5, 2, n).astype(np.float32) * rng.choice([-1, 1], n)
    if ptype == "tf32" and low_bits:
        for x in (a[:, k], b[k, :]):
            x.view(np.uint32)[:] = (x.view(np.uint32) & np.uint32(0xFFFFE000)) | rng.integers(0x1001, 0x2000, x.size,
                                                                                            dtype=np.uint32)
            x.view(np.uint32)[::5] &= np.uint32(0xFFFFE000)   # and some with none
    return a, b


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("name", ["rs_tf32_n8", "rs_tf32_n256", "ss_tf32_n16", "rs_bf16_n64", "rs_f16_n32"])
def test_a_single_nonzero_k_is_exact_bit_for_bit(name, check, rng):
    ptype, n = CASES[name][:2]
    kt = ROW // TYPES[ptype][1]
    k = int(rng.integers(0, kt))   # in any of the 4 steps, at any of its k
    a, b = single_k(rng, ptype, n, k)
    A, B, Af, Bf = encoded(a, b, ptype)
    D = launch("cpu", name, A, B, 4, int(rng.integers(0, 2)), 0, 0.0, check)
    exact = (CASES[name][3] * Af.astype(np.float64) @ Bf.astype(np.float64)).astype(np.float32)
    assert np.array_equal(D.view(np.uint32), exact.view(np.uint32)), f"{name}: k = {k}"
    if ptype == "tf32":
        nearest = (CASES[name][3] * tf32_nearest(a).astype(np.float64) @ tf32_nearest(b).astype(np.float64))
        assert not np.array_equal(D, nearest.astype(np.float32))   # the inputs tell the two models apart


# ---- refusals ----------------------------------------------------------------------------------------
REFUSED = {
    "tf32_with_trans": ('"wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"'
                        ' : F4 : "l"(0ull), "l"(0ull)', r"8 operands \(a \.tf32 wgmma has no imm-trans"),
    "tf32_rs_with_trans": ('"wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, '
                           '%8, 1, 1, 1, 0;" : F4 : R4, "l"(0ull)', r"7 operands \(a \.tf32 wgmma has no imm-trans"),
    "three_registers": ('"wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6}, %7, '
                        '1, 1, 1;" : F4 : "r"(1u), "r"(2u), "r"(3u), "l"(0ull)',
                        r"an A operand that is not 4 registers in braces"),
    "a_not_r": ('"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, '
                '1, 1, 1, 0;" : F4 : "r"(1u), "r"(2u), "r"(3u), "l"(4ull), "l"(0ull)', r"the A register `%7`"),
    "rs_trans_a": ('"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, '
                   '1, 1, 1, 0, 0;" : F4 : R4, "l"(0ull)', r"8 operands \(with A in registers there is no imm-trans-a"),
    "tf32_k16": ('"wgmma.mma_async.sync.aligned.m64n8k16.f32.tf32.tf32 {%0, %1, %2, %3}, %4, %5, 1, 1, 1;"'
                 ' : F4 : "l"(0ull), "l"(0ull)', r"instruction `wgmma\.mma_async\.sync\.aligned\.m64n8k16\.f32\.tf32"),
    "bf16_k8": ('"wgmma.mma_async.sync.aligned.m64n8k8.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"'
                ' : F4 : "l"(0ull), "l"(0ull)', r"instruction `wgmma\.mma_async\.sync\.aligned\.m64n8k8\.f32\.bf16"),
    "tf32_m64n12": ('"wgmma.mma_async.sync.aligned.m64n12k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5}, %6, %7, 1, 1, '
                    '1;" : F4, "+f"(d[4]), "+f"(d[5]) : "l"(0ull), "l"(0ull)', r"m64n12k8"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_forms_ptx_does_not_have_are_refused(case):
    asm, message = REFUSED[case]
    asm = asm.replace("F4", '"+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])')
    asm = asm.replace("R4", '"r"(1u), "r"(2u), "r"(3u), "r"(4u)')
    src = f'extern "C" __global__ void k(float* d) {{\n    asm volatile({asm});\n}}\n'
    assert "F4" not in src and "R4" not in src
    mod = cudacheck.RawModule(src, backend="cpu")
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=message):
        mod.get_function("k")


# ---- on a GPU (sm_90a: the H100, the H200) -----------------------------------------------------------------
def needs_sm90a():
    from tiling_course import magic
    why = magic.gpu_unfit(("-arch=sm_90a",))
    if why:
        pytest.skip(why)


def model_of(gpu, truncated, nearest):
    """Which TF32 conversion the GPU's exact result matches, in words."""
    t, r = np.array_equal(gpu, truncated), np.array_equal(gpu, nearest)
    return ("both truncation and round-to-nearest (the inputs do not tell them apart)" if t and r else
            "TRUNCATION (the CPU runtime's model)" if t else
            "ROUND-TO-NEAREST (switch kc_async.cpp's tf32() to it)" if r else "NEITHER truncation nor round-to-nearest")


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(CASES))
def test_gpu_matches_the_cpu_runtime(name, rng):
    """The identical kernels on the GPU and on the CPU runtime: bit for bit where one k is nonzero
    (every swizzle and step, the truncation visible in A and B); within the float32 bound of the
    exact product on random inputs (the GPU's order of a step's sums is its own)."""
    needs_sm90a()
    ptype, n, form, scale_a = CASES[name]
    kt = ROW // TYPES[ptype][1]
    for swz in (0, 1):
        # 1. one nonzero k in each step, at each of several k: tells every element's place apart
        for k in sorted({0, kt - 1, *rng.integers(0, kt, 6).tolist()}):
            a, b = single_k(rng, ptype, n, k)
            A, B, Af, Bf = encoded(a, b, ptype)
            gpu_d = launch("gpu", name, A, B, 4, swz, 0, 0.0)
            cpu_d = launch("cpu", name, A, B, 4, swz, 0, 0.0)
            where = f"{name}, swizzle {128 if swz else 0}, the one nonzero k = {k}"
            if ptype == "tf32":
                trunc = (scale_a * Af.astype(np.float64) @ Bf.astype(np.float64)).astype(np.float32)
                near = (scale_a * tf32_nearest(a).astype(np.float64) @ tf32_nearest(b).astype(np.float64)) \
                    .astype(np.float32)
                # the conversion of each operand alone: A's ({form}) with B's low bits cleared, and B's
                ta, tb = tf32_truncated(a), tf32_truncated(b)
                gpu_a = launch("gpu", name, A, tb.view(np.uint32), 4, swz, 0, 0.0)
                gpu_b = launch("gpu", name, ta.view(np.uint32), B, 4, swz, 0, 0.0)
                a_model = model_of(gpu_a, (scale_a * ta.astype(np.float64) @ tb).astype(np.float32),
                                   (scale_a * tf32_nearest(a).astype(np.float64) @ tb).astype(np.float32))
                b_model = model_of(gpu_b, (scale_a * ta.astype(np.float64) @ tb).astype(np.float32),
                                   (scale_a * ta.astype(np.float64) @ tf32_nearest(b)).astype(np.float32))
                report = (f"{where}: the GPU's TF32 conversion of A ({'registers' if form == 'rs' else 'shared'}) "
                          f"matches {a_model}; of B (shared) {b_model}; of both {model_of(gpu_d, trunc, near)}")
                print(report)
            else:
                report = where
            bad = np.argwhere(gpu_d.view(np.uint32) != cpu_d.view(np.uint32))
            assert bad.size == 0, (f"{report}\nGPU and CPU runtime differ at {len(bad)} of {gpu_d.size} elements, "
                                   f"first (row, column) {tuple(bad[0])}: GPU {gpu_d[tuple(bad[0])]!r}, "
                                   f"CPU {cpu_d[tuple(bad[0])]!r}; GPU nonzero at (row, column) "
                                   f"{np.argwhere(gpu_d != 0)[:4].tolist()}, CPU at "
                                   f"{np.argwhere(cpu_d != 0)[:4].tolist()} (a fragment or layout differs)")
        # 2. random inputs over 4 steps, accumulating onto init
        A, B, Af, Bf = inputs(rng, ptype, n, 4)
        gpu_d = launch("gpu", name, A, B, 4, swz, 1, 0.5)
        cpu_d = launch("cpu", name, A, B, 4, swz, 1, 0.5)
        exact, bound = expected(name, Af, Bf, 1, 0.5)
        assert_close(cpu_d, exact, bound, f"{name}, swizzle {swz}: the CPU runtime")
        assert_close(gpu_d, exact, bound, f"{name}, swizzle {swz}: the GPU (against the CPU runtime's model of "
                                          f"its inputs: TF32 by truncation)")
        assert_close(gpu_d, cpu_d.astype(np.float64), 2 * bound, f"{name}, swizzle {swz}: GPU against the CPU runtime")


# ---- the warpgroup's operands -------------------------------------------------------------------------
MISMATCH = r"""
extern "C" __global__ void k(float* D, int odd) {
    extern __shared__ unsigned char smem[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    for (int i = threadIdx.x; i < 256; i += 128) ((unsigned*)__cvta_shared_to_generic(base))[i] = 0x3f800000u;
    __syncthreads();
    // B's descriptor: one thread (of warp 2) passes another start when `odd`
    unsigned start = base + (odd && threadIdx.x == 77 ? 512 : 0);
    unsigned long long db = (unsigned long long)((start & 0x3FFFF) >> 4) | 8ull << 16 | 64ull << 32;
    unsigned a = __float_as_uint((float)threadIdx.x);   // each thread's own A registers
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 0, 1, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a), "r"(a), "r"(a), "r"(a), "l"(db));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int j = 0; j < 4; ++j) D[threadIdx.x * 4 + j] = d[j];
}
"""


def test_a_registers_differ_per_thread_but_b_descriptor_must_not():
    """Each thread's A registers are its own (thread t's four hold t: row r's k 0-3 hold the four
    threads of lane group r, each of them twice), B all ones: D's row r is the sum of A's row r."""
    f = cudacheck.RawModule(MISMATCH, backend="cpu").get_function("k")
    D = np.zeros((128, 4), np.float32)
    f(1, 128, (D, np.int32(0)), shared_mem=2048)
    t = np.arange(128)
    row_sum = 2.0 * (t - t % 4 + 1.5) * 4   # the threads 4 q .. 4 q + 3 of its quad, twice each
    assert np.array_equal(D, np.repeat(row_sum[:, None], 4, axis=1))
    with pytest.raises(cudacheck.InvalidOperandError, match="descriptor .* where another thread of its warpgroup"):
        f(1, 128, (D, np.int32(1)), shared_mem=2048)
