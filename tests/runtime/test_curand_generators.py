"""cuRAND's MRG32k3a and Sobol device generators on the CPU runtime, against independent Python
models of the published algorithms (tests/support/curand_model.py) on fresh random seeds,
subsequences, offsets and scramble constants; the GPU-marked tests run the same kernels through
CuPy and hold the CPU runtime to the GPU bit for bit."""
import statistics
from math import cos, exp, log, pi, sin, sqrt

import numpy as np
import pytest

import cudacheck
from tests.support import curand_model as model

MRG = r'''
#include <curand_kernel.h>
extern "C" __global__ void mrg(const unsigned long long* a, unsigned* st, unsigned* u, float* f, double* d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned long long* p = a + 4 * i;
    curandStateMRG32k3a_t s;
    curand_init(p[0], p[1], p[2], &s);
    for (int k = 0; k < 3; ++k) { st[6 * i + k] = s.s1[k]; st[6 * i + 3 + k] = s.s2[k]; }
    for (int k = 0; k < 4; ++k) u[8 * i + k] = curand(&s);
    f[8 * i + 0] = curand_uniform(&s);
    d[8 * i + 0] = curand_uniform_double(&s);
    skipahead(p[3], &s);
    u[8 * i + 4] = curand(&s);
    skipahead_subsequence(p[3] >> 40, &s);
    u[8 * i + 5] = curand(&s);
    skipahead_sequence(p[3] >> 50, &s);
    u[8 * i + 6] = curand(&s);
    f[8 * i + 1] = curand_normal(&s);
    f[8 * i + 2] = curand_normal(&s);
    float2 g = curand_normal2(&s);
    f[8 * i + 3] = g.x; f[8 * i + 4] = g.y;
    f[8 * i + 5] = curand_log_normal(&s, 0.5f, 2.0f);
    f[8 * i + 6] = curand_normal(&s);
    d[8 * i + 1] = curand_normal_double(&s);
    d[8 * i + 2] = curand_normal_double(&s);
    double2 h = curand_normal2_double(&s);
    d[8 * i + 3] = h.x; d[8 * i + 4] = h.y;
    d[8 * i + 5] = curand_log_normal_double(&s, 0.5, 2.0);
    u[8 * i + 7] = curand(&s);
}
'''

SOBOL = r'''
#include <curand_kernel.h>
extern "C" __global__ void sobol(unsigned* v32, unsigned long long* v64, const unsigned long long* a, unsigned* u,
                                 unsigned long long* l, float* f, double* d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned long long* p = a + 3 * i;
    int dim = i % 4;
    curandStateSobol32_t s;
    curand_init(v32 + 32 * dim, (unsigned)p[0], &s);
    curandStateScrambledSobol32_t t;
    curand_init(v32 + 32 * dim, (unsigned)p[1], (unsigned)p[0], &t);
    curandStateSobol64_t x;
    curand_init(v64 + 64 * dim, p[0], &x);
    curandStateScrambledSobol64_t y;
    curand_init(v64 + 64 * dim, p[1], p[0], &y);
    for (int k = 0; k < 3; ++k) u[6 * i + k] = curand(&s);
    u[6 * i + 3] = curand(&t);
    l[4 * i + 0] = curand(&x);
    l[4 * i + 1] = curand(&x);
    l[4 * i + 2] = curand(&y);
    skipahead((unsigned)p[2], &s);
    u[6 * i + 4] = curand(&s);
    skipahead(p[2], &y);
    l[4 * i + 3] = curand(&y);
    u[6 * i + 5] = curand(&t);
    f[4 * i + 0] = curand_uniform(&s);
    f[4 * i + 1] = curand_uniform(&x);
    f[4 * i + 2] = curand_normal(&t);
    f[4 * i + 3] = curand_log_normal(&y, 0.5f, 2.0f);
    d[4 * i + 0] = curand_uniform_double(&t);
    d[4 * i + 1] = curand_uniform_double(&y);
    d[4 * i + 2] = curand_normal_double(&s);
    d[4 * i + 3] = curand_normal_double(&x);
}
'''


def _words(rng, n, bits=64):
    """Random words of every magnitude (a random number of leading zero bits), 0 among them."""
    w = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    w >>= rng.integers(64 - bits, 64, n).astype(np.uint64)
    w[0] = 0
    return w


def _launch(source, name, args, n, backend="cpu", check=False):
    if backend == "gpu":
        import cupy
        dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        cudacheck.RawKernel(source, name, backend="gpu")(((n + 31) // 32,), (32,), tuple(dev))
        return [cupy.asnumpy(d) for a, d in zip(args, dev) if isinstance(a, np.ndarray)]
    cudacheck.RawKernel(source, name, backend="cpu", check=check)(((n + 31) // 32,), (32,), tuple(args))
    return [a for a in args if isinstance(a, np.ndarray)]


def _mrg_args(rng, n, subsequence_bits=64):
    a = np.stack([_words(rng, n), _words(rng, n, subsequence_bits), _words(rng, n), _words(rng, n)], axis=1)
    a[1, :3] = (1, 0, 0)   # seed 1 at the start of its sequence: the seeding alone
    return (a.ravel(), np.zeros(6 * n, np.uint32), np.zeros(8 * n, np.uint32), np.zeros(8 * n, np.float32),
            np.zeros(8 * n, np.float64), np.int32(n))


def _box_muller(u, v):
    """A Box-Muller pair in float64 from two uniform values (v the angle in turns)."""
    r = sqrt(-2.0 * log(u))
    return r * sin(2 * pi * v), r * cos(2 * pi * v)


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_mrg32k3a_matches_the_published_algorithm(rng, check):
    """curand_init's seeding, subsequence (2^76 steps) and offset; curand, curand_uniform(_double),
    skipahead, skipahead_subsequence, skipahead_sequence (2^127 steps) bit for bit with the model;
    the normal and log-normal ones Box-Muller on the generator's own uniform values, within
    float and double rounding of the model's float64."""
    n = 40
    a, st, u, f, d = _launch(MRG, "mrg", _mrg_args(rng, n), n, check=check)
    a = a.reshape(n, 4)
    for i in range(n):
        seed, sub, off, skip = (int(v) for v in a[i])
        g = model.MRG32k3a(seed, sub, off)
        assert st[6 * i:6 * i + 6].tolist() == g.s1 + g.s2, f"state after curand_init{(seed, sub, off)}"
        z = g.raw(6)
        assert u[8 * i:8 * i + 4].tolist() == [model.mrg_bits(v) for v in z[:4]]
        assert f[8 * i] == np.float32(model.mrg_uniform_double(z[4]))
        assert d[8 * i] == model.mrg_uniform_double(z[5])
        g.skip(skip)
        assert u[8 * i + 4] == model.mrg_bits(g.next_z())
        g.skip((skip >> 40) * model.SUBSEQUENCE)
        assert u[8 * i + 5] == model.mrg_bits(g.next_z())
        g.skip((skip >> 50) * model.SEQUENCE)
        assert u[8 * i + 6] == model.mrg_bits(g.next_z())
        uni = [float(np.float32(model.mrg_uniform_double(v))) for v in g.raw(8)]
        pairs = [_box_muller(uni[k], uni[k + 1]) for k in (0, 2, 4, 6)]
        lognormal = exp(0.5 + 2.0 * pairs[2][0])
        want = [pairs[0][0], pairs[0][1], *pairs[1], lognormal, pairs[3][0]]
        np.testing.assert_allclose(f[8 * i + 1:8 * i + 7], want, rtol=2e-5, atol=2e-5)
        unid = [model.mrg_uniform_double(v) for v in g.raw(6)]
        pairs = [_box_muller(unid[k], unid[k + 1]) for k in (0, 2, 4)]
        want = [pairs[0][0], pairs[0][1], *pairs[1], exp(0.5 + 2.0 * pairs[2][0])]
        np.testing.assert_allclose(d[8 * i + 1:8 * i + 6], want, rtol=1e-12, atol=1e-12)
        assert u[8 * i + 7] == model.mrg_bits(g.next_z())


def test_mrg32k3a_seed_zero_is_lecuyers_default_stream():
    """Seed 0 leaves every word 12345, the default seed of L'Ecuyer's reference implementation
    (RngStreams), whose first uniform value is published as 0.1270111220: the recurrences'
    orientation, independent of the model (cuRAND scales by 1 / m1 where RngStreams scales by
    1 / (m1 + 1): a relative 2.3e-10 apart)."""
    src = r'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(double* out) {
        curandStateMRG32k3a_t s;
        curand_init(0, 0, 0, &s);
        out[0] = curand_uniform_double(&s);
    }'''
    out = np.zeros(1)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (out,))
    assert abs(out[0] - 0.1270111220) < 1e-10


def test_mrg32k3a_skipahead_is_as_many_steps(rng):
    """skipahead(n) lands where n calls of curand do, across the bits of n (the jump table's
    powers), and a subsequence is 2^76 steps: skipahead_subsequence(1) after curand_init(seed,
    0, 0) is curand_init(seed, 1, 0)."""
    src = r'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(const unsigned long long* seed, const int* steps, unsigned* out, int n) {
        int i = threadIdx.x;
        if (i >= n) return;
        curandStateMRG32k3a_t a, b, c;
        curand_init(seed[i], 0, 0, &a);
        b = a;
        for (int k = 0; k < steps[i]; ++k) curand(&a);
        skipahead((unsigned long long)steps[i], &b);
        out[3 * i] = curand(&a);
        out[3 * i + 1] = curand(&b);
        curand_init(seed[i], 1, 0, &a);
        curand_init(seed[i], 0, 0, &c);
        skipahead_subsequence(1, &c);
        out[3 * i + 2] = curand(&a) ^ curand(&c);
    }'''
    n = 16
    seed, steps = _words(rng, n), rng.integers(0, 3000, n).astype(np.int32)
    out = np.zeros(3 * n, np.uint32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (32,), (seed, steps, out, np.int32(n)))
    out = out.reshape(n, 3)
    assert np.array_equal(out[:, 0], out[:, 1]) and not out[:, 2].any()
    assert len(set(out[:, 0].tolist())) == n


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_sobol_generators_match_gray_code_sobol(rng, check):
    """Sobol32, ScrambledSobol32, Sobol64 and ScrambledSobol64 with Joe and Kuo's direction
    vectors (dimensions 1 to 4), random offsets and scramble constants: curand and skipahead bit
    for bit with the model, the uniform values exactly the documented mappings, the normal ones
    the inverse normal distribution at the uniform value (within float and double rounding)."""
    n = 40
    v32 = np.array([model.direction_vectors(j, 32) for j in range(4)], np.uint32).ravel()
    v64 = np.array([model.direction_vectors(j, 64) for j in range(4)], np.uint64).ravel()
    a = np.stack([_words(rng, n, 40), _words(rng, n), _words(rng, n, 36)], axis=1)
    args = (v32, v64, a.ravel(), np.zeros(6 * n, np.uint32), np.zeros(4 * n, np.uint64), np.zeros(4 * n, np.float32),
            np.zeros(4 * n, np.float64), np.int32(n))
    *_, u, u64, f, d = _launch(SOBOL, "sobol", args, n, check=check)
    icdf = statistics.NormalDist().inv_cdf
    for i in range(n):
        off, scramble, skip = (int(v) for v in a[i])
        o32, c32 = off & 0xFFFFFFFF, scramble & 0xFFFFFFFF
        w32, w64 = model.direction_vectors(i % 4, 32), model.direction_vectors(i % 4, 64)
        at = lambda k, o32=o32: (o32 + k) & 0xFFFFFFFF   # noqa: E731  (a 32-bit state's index wraps)
        s = [model.sobol(w32, at(k)) for k in range(3)]
        after = at(3 + skip)
        s += [model.sobol(w32, after), model.sobol(w32, (after + 1) & 0xFFFFFFFF)]
        t = [model.sobol(w32, at(k), c32) for k in range(4)]
        x = [model.sobol(w64, off + k) for k in range(3)]
        y = [model.sobol(w64, off, scramble), model.sobol(w64, off + 1 + skip, scramble),
             model.sobol(w64, off + 2 + skip, scramble), model.sobol(w64, off + 3 + skip, scramble)]
        assert u[6 * i:6 * i + 6].tolist() == [s[0], s[1], s[2], t[0], s[3], t[1]], f"offset {off}"
        assert u64[4 * i:4 * i + 4].tolist() == [x[0], x[1], y[0], y[1]]
        assert f[4 * i] == model.uniform32_float(s[4])
        assert f[4 * i + 1] == model.uniform32_float(x[2] >> 32)
        np.testing.assert_allclose(f[4 * i + 2], icdf(model.uniform32(t[2])), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(f[4 * i + 3], exp(0.5 + 2.0 * icdf(model.uniform32(y[2] >> 32))), rtol=1e-5)
        assert d[4 * i] == model.uniform32_double(t[3])
        assert d[4 * i + 1] == model.uniform64_double(y[3])
        np.testing.assert_allclose(d[4 * i + 2], icdf(model.uniform32(model.sobol(w32, (after + 2) & 0xFFFFFFFF))),
                                   rtol=1e-13)
        np.testing.assert_allclose(d[4 * i + 3], icdf(model.uniform64_double(model.sobol(w64, off + 3))),
                                   rtol=1e-13)


def test_sobol_first_dimension_is_the_van_der_corput_sequence():
    """With the first dimension's vectors (2^31, 2^30, ...), point i is i's Gray code bit-reversed:
    0, 1/2, 3/4, 1/4, 3/8, ... in units of 2^-32."""
    src = r'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(unsigned* v, unsigned* out) {
        curandStateSobol32_t s;
        curand_init(v, 0u, &s);
        for (int k = 0; k < 8; ++k) out[k] = curand(&s);
    }'''
    v = np.array(model.direction_vectors(0, 32), np.uint32)
    out = np.zeros(8, np.uint32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (v, out))
    assert (out / 2.0 ** 32).tolist() == [0, 0.5, 0.75, 0.25, 0.375, 0.875, 0.625, 0.125]


def test_sobol_has_no_box_muller_pair():
    """cuRAND defines no curand_normal2 for a quasi-random state (two draws are two points of
    one dimension, not independent values): NVRTC refuses it, and so does the CPU runtime."""
    src = r'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(unsigned* v, float* out) {
        curandStateSobol32_t s;
        curand_init(v, 0u, &s);
        out[0] = curand_normal2(&s).x;
    }'''
    with pytest.raises(cudacheck.CompileError, match="curand_normal2"):
        cudacheck.RawModule(src, backend="cpu").compile()


def test_sobol32_index_wraps_to_the_first_point(rng):
    """A 32-bit state's index wraps: the point after 2^32 - 1 is point 0, as skipahead's is."""
    src = r'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(unsigned* v, unsigned c, unsigned* out) {
        curandStateScrambledSobol32_t s;
        curand_init(v, c, 0xFFFFFFFEu, &s);
        for (int k = 0; k < 3; ++k) out[k] = curand(&s);
    }'''
    dim, c = int(rng.integers(0, 8)), int(rng.integers(0, 2 ** 32))
    w = model.direction_vectors(dim, 32)
    out = np.zeros(3, np.uint32)
    cudacheck.RawKernel(src, "k", backend="cpu")((1,), (1,), (np.array(w, np.uint32), np.uint32(c), out))
    assert out.tolist() == [model.sobol(w, i, c) for i in (2 ** 32 - 2, 2 ** 32 - 1, 0)]


@pytest.mark.parametrize("state,init", [
    ("curandStateMRG32k3a_t", "curand_init(7, 0, 0, &st[0])"),
    ("curandStateScrambledSobol32_t", "curand_init(v, 5u, 0u, &st[0])"),
])
def test_a_state_shared_by_threads_is_a_race(state, init):
    """A kernel whose threads draw from one state in global memory (each curand reads and
    writes it) is a GlobalMemoryRaceError in checked mode, as with the other generators."""
    src = f'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(unsigned* v, {state}* st, unsigned* out) {{
        if (threadIdx.x == 0 && blockIdx.x == 0) {init};
        __syncthreads();
        for (int k = 0; k <= threadIdx.x % 3; ++k) out[threadIdx.x] = curand(&st[0]);
    }}'''
    v = np.array(model.direction_vectors(1, 32), np.uint32)
    states = np.zeros(48 * 140, np.uint8)   # a whole number of either state (48 and 140 bytes)
    with pytest.raises(cudacheck.GlobalMemoryRaceError):
        cudacheck.RawKernel(src, "k", backend="cpu", check=True)((1,), (64,), (v, states, np.zeros(64, np.uint32)))


@pytest.mark.parametrize("body", [
    "out[threadIdx.x] = curand(st);",                               # GPUVerify's MTGP32 cases
    "out[threadIdx.x] = curand(&st[blockIdx.x]);",
    "out[threadIdx.x] = curand_normal_double(st + 1) > 0.0;",
])
def test_mtgp32_is_refused_by_name(body):
    """MTGP32's state and parameter tables come from the host library (curand_mtgp32_host.h),
    which the CPU runtime does not provide: a kernel that draws from one is refused, naming the
    generators that are provided, and the module's other kernels still run."""
    src = f'''
    #include <curand_kernel.h>
    extern "C" __global__ void k(curandStateMtgp32_t* st, unsigned* out) {{ {body} }}
    extern "C" __global__ void other(unsigned* out) {{ out[threadIdx.x] = 7; }}'''
    mod = cudacheck.RawModule(src, backend="cpu")
    with pytest.raises(cudacheck.UnsupportedFeatureError, match="MTGP32.*MRG32k3a.*Sobol"):
        mod.get_function("k")
    out = np.zeros(4, np.uint32)
    mod.get_function("other")((1,), (4,), (out,))
    assert out.tolist() == [7] * 4


# ---- the same kernels on a GPU -----------------------------------------------------------------

@pytest.mark.gpu
def test_mrg32k3a_on_the_gpu_is_the_cpu_runtimes(rng):
    """Every output bit for bit, the double normal ones (CUDA's log and sincospi for the C
    library's) within 1e-13. Subsequences below 2^45: an H100 (CUDA 13.0) left the state all
    zeros for curand_init's subsequences of 2^51.4 and more (runtime/README.md, Limitations)."""
    n = 64
    args = _mrg_args(rng, n, subsequence_bits=45)
    cpu = _launch(MRG, "mrg", tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args), n)
    gpu = _launch(MRG, "mrg", args, n, backend="gpu")
    for name, c, g in zip(["state", "curand", "float"], cpu[1:4], gpu[1:4]):
        assert np.array_equal(c, g), f"{name}: {np.flatnonzero(c != g)[:8]}"
    cd, gd = cpu[4].reshape(n, 8), gpu[4].reshape(n, 8)
    assert np.array_equal(cd[:, 0], gd[:, 0])
    np.testing.assert_allclose(cd, gd, rtol=1e-13, atol=1e-15)


@pytest.mark.gpu
def test_sobol_on_the_gpu_is_the_cpu_runtimes(rng):
    """curand, skipahead and the uniform values bit for bit; the normal ones (the GPU's
    erfcinvf and erfcinv, correctly rounded ones here) within a few ulps (an H100 differed by up
    to 3 float and 11 double ulps, the latter in a log-normal value). A log-normal value
    exp(0.5 + 2z) carries its normal z's difference twice over, relative to itself: an H100's
    differed from the runtime's by 1.009e-6 of 83 (seed 89187515500351810034280198132180492342),
    about 3 ulps of its z, where a bound of 5e-7 of the value allows about 2."""
    n = 64
    v32 = np.array([model.direction_vectors(j, 32) for j in range(4)], np.uint32).ravel()
    v64 = np.array([model.direction_vectors(j, 64) for j in range(4)], np.uint64).ravel()
    a = np.stack([_words(rng, n, 40), _words(rng, n), _words(rng, n, 36)], axis=1).ravel()
    make = lambda: (v32, v64, a, np.zeros(6 * n, np.uint32), np.zeros(4 * n, np.uint64),  # noqa: E731
                    np.zeros(4 * n, np.float32), np.zeros(4 * n, np.float64), np.int32(n))
    *_, cu, cl, cf, cd = _launch(SOBOL, "sobol", make(), n)
    *_, gu, gl, gf, gd = _launch(SOBOL, "sobol", make(), n, backend="gpu")
    assert np.array_equal(cu, gu) and np.array_equal(cl, gl)
    cf, gf, cd, gd = cf.reshape(n, 4), gf.reshape(n, 4), cd.reshape(n, 4), gd.reshape(n, 4)
    assert np.array_equal(cf[:, :2], gf[:, :2]) and np.array_equal(cd[:, :2], gd[:, :2])
    np.testing.assert_allclose(cf[:, 2], gf[:, 2], rtol=5e-7, atol=1e-7)
    z = np.float32((np.log(gf[:, 3].astype(np.float64)) - 0.5) / 2)   # the normal value of each log-normal one
    bound = np.abs(gf[:, 3]) * 2 * 4 * np.spacing(np.abs(z)).astype(np.float64) + 2 * np.spacing(gf[:, 3])
    assert np.all(np.abs(cf[:, 3].astype(np.float64) - gf[:, 3]) <= bound), (cf[:, 3], gf[:, 3])
    np.testing.assert_allclose(cd[:, 2:], gd[:, 2:], rtol=1e-14, atol=1e-15)


@pytest.mark.gpu(nvcc=True)
def test_joe_kuo_vectors_are_the_host_librarys():
    """The model's direction vectors for dimensions 0 to 7 are the ones a GPU program gets from
    the host library (curandGetDirectionVectors32 and 64, Joe and Kuo's set 6), so that the
    tests above drive the Sobol states as a cuRAND program does."""
    program = r'''
    #include <curand.h>
    #include <cstdio>
    int main() {
        unsigned int (*v32)[32];
        unsigned long long (*v64)[64];
        curandGetDirectionVectors32(&v32, CURAND_DIRECTION_VECTORS_32_JOEKUO6);
        curandGetDirectionVectors64(&v64, CURAND_DIRECTION_VECTORS_64_JOEKUO6);
        for (int d = 0; d < 8; ++d) {
            for (int k = 0; k < 32; ++k) printf("%u ", v32[d][k]);
            for (int k = 0; k < 64; ++k) printf("%llu ", v64[d][k]);
            printf("\n");
        }
    }'''
    run = cudacheck.run_program(program, backend="gpu", options=("-lcurand",))
    assert run.exit_code == 0, run.stderr
    for d, line in enumerate(run.stdout.split("\n")[:8]):
        words = [int(w) for w in line.split()]
        assert words[:32] == model.direction_vectors(d, 32), f"dimension {d}, 32 bits"
        assert words[32:] == model.direction_vectors(d, 64), f"dimension {d}, 64 bits"
