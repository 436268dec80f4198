"""Parts of the CUDA toolkit that older whole programs (Rodinia's) use, on the CPU runtime:
cudaFuncSetCacheConfig and cudaDeviceSetCacheConfig (a hint, checked as CUDA checks it),
cudaMemGetInfo (consistent with cudaGetDeviceProperties and the program's allocations), the
toolkit's <vector_types.h>, a launch written with spaced brackets (`k << < g, b >> > (args)`,
which nvcc reads as a launch), and a host variable named gridDim or blockDim, which shadows
the built-in as under nvcc. Each with the wrong variant that must still be refused."""
import numpy as np
import pytest

import cudacheck

SCALE = r"""
#include <cstdio>
__global__ void scale(float* v, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= a;
}
"""


def run(body, args=(), check=False):
    result = cudacheck.run_program(SCALE + body, backend="cpu", args=args, check=check)
    assert result.exit_code == 0, result.stderr
    return result.stdout


CACHE_CONFIG = r"""
void host_function() {}
int main() {
    const cudaFuncCache prefs[] = {cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1,
                                   cudaFuncCachePreferEqual};
    for (cudaFuncCache p : prefs) printf("%d ", (int)cudaFuncSetCacheConfig(scale, p));
    printf("| %d", (int)cudaFuncSetCacheConfig((const void*)host_function, cudaFuncCachePreferL1));
    printf(" %d", (int)cudaGetLastError());
    printf(" %d", (int)cudaFuncSetCacheConfig(scale, (cudaFuncCache)7));
    cudaFuncCache got;
    printf(" | %d", (int)cudaDeviceGetCacheConfig(&got));
    printf(" %d", (int)got);
    printf(" %d", (int)cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    cudaDeviceGetCacheConfig(&got);
    printf(" %d", (int)got);
    printf(" %d\n", (int)cudaDeviceSetCacheConfig((cudaFuncCache)4));
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_cache_config_is_a_checked_hint(check):
    out = run(CACHE_CONFIG, check=check)
    # cudaErrorInvalidResourceHandle (400, as an H200 with CUDA 13 answers) for what is not a
    # kernel, cudaErrorInvalidValue (1) for what is not a preference; the error is the last error
    # until read.
    assert out == "0 0 0 0 | 400 400 1 | 0 0 0 1 1\n"


def test_the_kernel_computes_the_same_whatever_its_cache_preference(rng):
    n = int(rng.integers(1, 5000))
    a = float(np.float32(rng.uniform(-3, 3)))
    out = run(r"""
#include <cstdlib>
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    float a = strtof(argv[2], 0);
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = (float)(i % 97) * 0.25f - 7.0f;
    float* d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaFuncSetCacheConfig(scale, cudaFuncCachePreferL1);
    scale<<<(n + 255) / 256, 256>>>(d, a, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%a\n", h[i]);
    return 0;
}
""", args=(n, repr(a)))
    got = np.array([float.fromhex(x) for x in out.split()], dtype=np.float32)
    want = (np.arange(n) % 97).astype(np.float32) * np.float32(0.25) - np.float32(7.0)
    np.testing.assert_array_equal(got, want * np.float32(a))   # one rounding each: bit for bit


def test_mem_get_info_counts_the_programs_allocations(rng):
    sizes = [int(s) for s in rng.integers(1, 1 << 22, size=4)]
    out = run(r"""
#include <cstdlib>
int main(int argc, char** argv) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    size_t free0, total, free1, free2;
    cudaMemGetInfo(&free0, &total);
    void* d[4];
    size_t sum = 0;
    for (int i = 0; i < 4; i++) { size_t s = strtoull(argv[i + 1], 0, 10); sum += s; cudaMalloc(&d[i], s); }
    cudaMemGetInfo(&free1, &total);
    cudaFree(d[1]);
    cudaFree(d[3]);
    cudaMemGetInfo(&free2, &total);
    printf("%d %d %zu %zu %zu\n", total == p.totalGlobalMem, free0 == total, free0 - free1, free0 - free2, sum);
    printf("%d\n", (int)cudaMemGetInfo(0, &total));
    return 0;
}
""", args=sizes)
    assert out == f"1 1 {sum(sizes)} {sizes[0] + sizes[2]} {sum(sizes)}\n1\n"


def test_vector_types_h_is_the_toolkits_header():
    out = run(r"""
#include <vector_types.h>
#include <vector_functions.h>
#include <driver_types.h>
int main() {
    float4 f = make_float4(1, 2, 3, 4);
    int2 i = make_int2(-5, 6);
    dim3 g(7);
    printf("%g %d %u %u\n", f.x + f.w, i.x * i.y, g.x, g.y);
    return 0;
}
""")
    assert out == "5 -30 7 1\n"


SPACED = r"""
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    std::vector<std::vector<int> > rows(2);   // closing template brackets: not a launch
    rows[1].push_back(n >> 1 > 0);
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = (float)i;
    float* d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    scale LAUNCH (d, 3.0f, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    double s = 0;
    for (int i = 0; i < n; i++) s += h[i];
    printf("%.1f %d\n", s, rows[1][0]);
    return 0;
}
"""


@pytest.mark.parametrize("brackets", ["<< < (n + 127) / 128, 128 >> >", "<<<(n + 127) / 128, 128 >> >",
                                      "<< <\n        (n + 127) / 128, 128>>>"])
def test_a_launch_with_spaced_brackets_runs_as_nvcc_reads_it(rng, brackets):
    n = int(rng.integers(2, 3000))
    out = run(SPACED.replace("LAUNCH", brackets), args=(n,), check=True)
    assert out == f"{3.0 * n * (n - 1) / 2:.1f} 1\n"


def test_a_launch_missing_a_bracket_is_still_refused():
    with pytest.raises(cudacheck.CompileError, match="line 19: expected expression"):
        cudacheck.run_program(SCALE + SPACED.replace("LAUNCH", "<< < (n + 127) / 128, 128 >>"), backend="cpu",
                              args=(5,))


SHADOWED = r"""#include <cstdio>
__global__ void where(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x * 1000 + blockDim.x * 100 + blockIdx.x;
}
int main(int argc, char** argv) {
    int blocks = atoi(argv[1]), threads = atoi(argv[2]), n = blocks * threads;
    dim3 gridDim(blocks), blockDim(threads);   // host variables of the built-ins' names
    int* d;
    cudaMalloc(&d, n * sizeof(int));
    where<<<gridDim, blockDim>>>(d);
    int* h = (int*)malloc(n * sizeof(int));
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%d ", h[i]);
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_host_variable_named_griddim_shadows_the_builtin(rng, check):
    blocks, threads = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    out = run("#include <cstdlib>\n" + SHADOWED, args=(blocks, threads), check=check)
    want = [blocks * 1000 + threads * 100 + b for b in range(blocks) for _ in range(threads)]
    assert list(map(int, out.split())) == want


def test_a_kernel_cannot_assign_griddim():
    """The built-ins stay read-only in device code, as nvcc has them."""
    with pytest.raises(cudacheck.CompileError):
        cudacheck.run_program(SCALE.replace("if (i < n)", "gridDim.x = 2; if (i < n)") + "int main() { return 0; }",
                              backend="cpu")


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_launches_of_bool_template_instances_name_each(check):
    """k<true, false>: the launch finder spells a bool argument as C++ does (libclang reads
    true as the one-bit number -1)."""
    out = cudacheck.run_program(r"""
#include <cstdio>
template <bool A, bool B> __global__ void k(int* o) { o[threadIdx.x] = A * 10 + B; }
template <int N, char C> __global__ void m(int* o) { o[threadIdx.x] = N + C; }
int main() {
    int *d, h[5];
    cudaMalloc(&d, sizeof h);
    k<true, false><<<1, 1>>>(d);
    k<false, true><<<1, 1>>>(d + 1);
    m<-1, 'a'><<<1, 1>>>(d + 2);
    k<true, true><<<1, 1>>>(d + 3);
    k<false, false><<<1, 1>>>(d + 4);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d %d %d %d\n", h[0], h[1], h[2], h[3], h[4]);
}
""", backend="cpu", check=check).stdout
    assert out == "10 1 96 11 0\n"


TEMPLATED = r"""
#include <cstdio>
#include <cstdlib>
template <int W, int H> __global__ void fill(int* o) { o[blockIdx.x * W + threadIdx.x] = W * 100 + H; }
template <int W, int H> void run(int* d, int blocks) {
    fill<W, H><<<blocks, W>>>(d);
}
CALLER
int main(int argc, char** argv) {
    int n = atoi(argv[1]), *d;
    cudaMalloc(&d, 3 * n * sizeof(int));
    CALLS
    int* h = (int*)malloc(3 * n * sizeof(int));
    cudaMemcpy(h, d, 3 * n * sizeof(int), cudaMemcpyDeviceToHost);
    long s = 0;
    for (int i = 0; i < 3 * n; i++) s += h[i];
    printf("%ld\n", s);
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_launch_in_a_template_of_its_kernels_parameters(rng, check):
    """Rodinia's dwt2d: `kernel<W, H><<<...>>>` inside `template <int W, int H> void run()`,
    which the program calls as run<64, 8>(...): each instance launches its own kernel."""
    n = 64 * int(rng.integers(1, 5))
    calls = "run<64, 1>(d, n / 64); run<32, 2>(d + n, n / 32); run<16, 7>(d + 2 * n, n / 16);"
    out = cudacheck.run_program(TEMPLATED.replace("CALLER", "").replace("CALLS", calls), backend="cpu",
                                check=check, args=(n,)).stdout
    assert out == f"{n * (6401 + 3202 + 1607)}\n"


def test_a_template_instance_the_front_end_cannot_see_is_refused_by_line():
    """The wrong variants: an instance made only from another template cannot be named before
    it runs, so its launch is refused (at the build when no call names any instance, at the
    launch when the others are named), with the launch's line."""
    nested = "template <int W> void twice(int* d, int b) { run<W, 3>(d, b); }"
    with pytest.raises(cudacheck.UnsupportedFeatureError, match="line 6"):
        cudacheck.run_program(TEMPLATED.replace("CALLER", nested).replace("CALLS", "twice<64>(d, n / 64);"),
                              backend="cpu", args=(64,))
    calls = "run<64, 1>(d, n / 64); twice<32>(d + n, n / 32);"
    with pytest.raises(cudacheck.UnsupportedFeatureError, match="line 6: .*function template|line 6"):
        cudacheck.run_program(TEMPLATED.replace("CALLER", nested).replace("CALLS", calls), backend="cpu", args=(64,))


DEDUCED = r"""
#include <cstdio>
namespace fill {
template <typename T> __global__ void put(T* o, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = v + (T)i;
}
}
using fill::put;
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    float* f; int* k;
    cudaMalloc(&f, n * sizeof(float));
    cudaMalloc(&k, n * sizeof(int));
    put<<<(n + 63) / 64, 64>>>(f, 0.5f, n);
    fill::put<<<(n + 63) / 64, 64>>>(k, VALUE, n);
    float hf; int hk;
    cudaMemcpy(&hf, f + n - 1, sizeof hf, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hk, k + n - 1, sizeof hk, cudaMemcpyDeviceToHost);
    printf("%g %d\n", hf, hk);
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_template_kernel_launched_with_its_arguments_deduced(rng, check):
    """`put<<<g, b>>>(f, 0.5f, n)`: nvcc deduces put<float> from the arguments, as a call does."""
    n = int(rng.integers(1, 5000))
    out = cudacheck.run_program("#include <cstdlib>\n" + DEDUCED.replace("VALUE", "7"), backend="cpu",
                                check=check, args=(n,)).stdout
    assert out == f"{0.5 + (n - 1):g} {7 + n - 1}\n"


def test_a_launch_whose_template_arguments_conflict_is_refused():
    """The wrong variant: T deduced as int from `k` and as float from 7.5f: no instance, as nvcc says."""
    with pytest.raises(cudacheck.CompileError, match="line 17"):
        cudacheck.run_program("#include <cstdlib>\n" + DEDUCED.replace("VALUE", "7.5f"), backend="cpu", args=(4,))


@pytest.mark.gpu(nvcc=True)
def test_the_toolkit_spellings_give_the_gpus_output(rng):
    """Each program above, compiled by nvcc 13 and run on the GPU, prints what the CPU runtime
    prints: the cache-config codes, spaced launch brackets, host gridDim, bool and deduced
    template launches, and launches in a template of its parameters; and cudaMemGetInfo
    succeeds with 0 < free <= total. (The total is the board's: one H100 answered 85,017,493,504,
    where the CPU runtime describes 85,024,112,640.)"""
    n = 64 * int(rng.integers(1, 5))
    programs = [
        (SCALE + CACHE_CONFIG, ()),
        (SCALE + SPACED.replace("LAUNCH", "<< < (n + 127) / 128, 128 >> >"), (n,)),
        ("#include <cstdlib>\n" + SHADOWED, (3, 5)),
        ("#include <cstdlib>\n" + DEDUCED.replace("VALUE", "7"), (n,)),
        (TEMPLATED.replace("CALLER", "").replace(
            "CALLS", "run<64, 1>(d, n / 64); run<32, 2>(d + n, n / 32); run<16, 7>(d + 2 * n, n / 16);"), (n,)),
    ]
    for source, args in programs:
        gpu = cudacheck.run_program(source, backend="gpu", args=args)
        cpu = cudacheck.run_program(source, backend="cpu", args=args)
        assert (gpu.exit_code, gpu.stdout) == (cpu.exit_code, cpu.stdout), source
    info = cudacheck.run_program(r"""
#include <cstdio>
int main() {
    size_t free, total;
    cudaError_t got = cudaMemGetInfo(&free, &total);   // before printf: its arguments' order is unspecified
    printf("%d %d\n", (int)got, 0 < free && free <= total);
    return 0;
}
""", backend="gpu")
    assert info.stdout == "0 1\n"


DEDUCED_IN_TEMPLATE = r"""
#include <cstdio>
namespace conv {
template <typename T> __global__ void half(T* o, const unsigned char* s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = (T)s[i] / 2;
}
}
template <typename T> void to_half(T* d, const unsigned char* s, int n) {
    conv::half<<<(n + 63) / 64, 64>>>(d, s, n);
}
INSTANTIATIONS
template <typename T> void outer(T* d, const unsigned char* s, int n) { to_half(d, s, n); }
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    float* f; int* k; unsigned char* s;
    unsigned char* h = (unsigned char*)malloc(n);
    for (int i = 0; i < n; i++) h[i] = (unsigned char)(i * 7);
    cudaMalloc(&f, n * sizeof(float)); cudaMalloc(&k, n * sizeof(int)); cudaMalloc(&s, n);
    cudaMemcpy(s, h, n, cudaMemcpyHostToDevice);
    CALLS
    float hf; int hk;
    cudaMemcpy(&hf, f + n - 1, sizeof hf, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hk, k + n - 1, sizeof hk, cudaMemcpyDeviceToHost);
    printf("%g %d\n", hf, hk);
    return 0;
}
"""


@pytest.mark.parametrize("instances", ["called", "instantiated"])
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_launch_in_a_template_deducing_its_kernels_type(rng, check, instances):
    """dwt2d's bwToComponent: `kernel<<<g, b>>>(d, ...)` with d a T*, in `template <typename T>`,
    whose instances are either called directly (`to_half(f, s, n)`) or named by explicit
    instantiations and called from another template."""
    n = int(rng.integers(1, 3000))
    if instances == "called":
        parts = {"INSTANTIATIONS": "", "CALLS": "to_half(f, s, n); to_half(k, s, n);"}
    else:
        parts = {"INSTANTIATIONS": "template void to_half<float>(float*, const unsigned char*, int);\n"
                                   "template void to_half<int>(int*, const unsigned char*, int);",
                 "CALLS": "outer(f, s, n); outer(k, s, n);"}
    source = "#include <cstdlib>\n" + DEDUCED_IN_TEMPLATE
    for key, text in parts.items():
        source = source.replace(key, text)
    last = (n - 1) * 7 % 256
    assert cudacheck.run_program(source, backend="cpu", check=check, args=(n,)).stdout == f"{last / 2:g} {last // 2}\n"


def test_a_deduction_the_launch_finder_cannot_read_is_refused_by_line():
    """The wrong variant: the kernel's parameter `const T*` and the argument's `T *` are not
    written alike, so the instance is not deduced here: refused with the launch's line."""
    source = ("#include <cstdlib>\n" + DEDUCED_IN_TEMPLATE.replace("half(T* o", "half(const T* in, T* o")
              .replace("(d, s, n);\n}", "(d, d, s, n);\n}", 1).replace("o[i] = (T)s[i] / 2", "o[i] = in[i]")
              .replace("INSTANTIATIONS", "").replace("CALLS", "to_half(f, s, n);"))
    with pytest.raises(cudacheck.UnsupportedFeatureError, match="line 11"):
        cudacheck.run_program(source, backend="cpu", args=(4,))


MEMBER_TEMPLATE = r"""
#include <cstdio>
template <int N> struct Op {
    int v;
    template <bool A> __device__ int f(int x) const { return A ? x + N : x - N; }
};
template <int N> __global__ void k(int* o) {
    Op<N> op;
    const Op<N>* p = &op;
    op.v = N;
    int i = threadIdx.x;
    // dwt2d's `fdwt53.transform<true, true>(...)`: no `template` keyword, as nvcc takes it
    o[i] = op.f<true>(o[i]) * 1000 + p->f<false>(op.v < 2 * i);   // and `op.v < ...` a comparison
}
int main() {
    int *d, h[8];
    for (int i = 0; i < 8; i++) h[i] = i;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    k<3><<<1, 8>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 8; i++) printf("%d ", h[i]);
    printf("\n");
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_a_dependent_member_template_call_without_template_keyword(check):
    """nvcc 13.0 compiles `op.f<true>(x)` on an object of dependent type (checked on this
    machine's nvcc, without a GPU); g++ reads it as comparisons unless the front end writes
    `op.template f<true>(x)`, which it does for every member function template of the source."""
    out = cudacheck.run_program(MEMBER_TEMPLATE, backend="cpu", check=check).stdout
    want = [(i + 3) * 1000 + (int(3 < 2 * i) - 3) for i in range(8)]
    assert list(map(int, out.split())) == want


REMOVED = {
    "cudaThreadSynchronize();": ("cudaThreadSynchronize", "cudaDeviceSynchronize()"),
    "cudaThreadExit();": ("cudaThreadExit", "cudaDeviceReset()"),
    "cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf(\"%d\\n\", p.clockRate);":
        ("clockRate", "cudaDevAttrClockRate"),
    "cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf(\"%d\\n\", p.memoryClockRate);":
        ("memoryClockRate", "cudaDevAttrMemoryClockRate"),
    "cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf(\"%d\\n\", p.deviceOverlap);":
        ("deviceOverlap", "asyncEngineCount"),
}


@pytest.mark.parametrize("statement", sorted(REMOVED), ids=lambda s: REMOVED[s][0])
def test_what_cuda_13_removed_is_refused_with_its_replacement(statement):
    # nvcc 13.0 refuses each too (logs/2026-12-06-rodinia-nvcc13-builds.json: gaussian, huffman, cfd)
    old, new = REMOVED[statement]
    with pytest.raises(cudacheck.CompileError) as e:
        run("int main() { " + statement + " return 0; }")
    assert f"{old} is gone from CUDA 13 (nvcc 13 refuses it too" in str(e.value) and new in str(e.value), str(e.value)


def test_the_clock_rates_come_from_device_attributes():
    out = run(r"""int main() {
    int clock = 0, memory = 0;
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&memory, cudaDevAttrMemoryClockRate, 0);
    printf("%d %d\n", clock, memory);
    return 0;
}""")
    assert out == "1980000 2619000\n"   # kHz: an H100 SXM5's boost and memory clocks


PRINTS = r"""HEADER
__global__ void hello(int* n) { printf("thread %d\n", threadIdx.x); atomicAdd(n, 1); }
int main() {
    int* d;
    cudaMalloc(&d, sizeof(int));
    cudaMemset(d, 0, sizeof(int));
    hello<<<1, 3>>>(d);
    int h = 0;
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d threads\n", h);
    return 0;
}
"""


@pytest.mark.parametrize("header", ["#include <cstdio>", "#include <stdio.h>", "#include <string>"])
def test_printf_needs_a_header_that_declares_it(header):
    """nvcc gives a whole program math.h, stdlib.h and string.h, but not stdio.h: printf, in host
    or device code, needs <cstdio>, <stdio.h> or a header that includes one (libstdc++'s <string>
    does). nvcc 13.0 refuses the program without one: 'identifier "printf" is undefined'."""
    result = cudacheck.run_program(PRINTS.replace("HEADER", header), backend="cpu")
    assert result.exit_code == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["3 threads", "thread 0", "thread 1", "thread 2"]


@pytest.mark.parametrize("where", ["host and device", "device"])
def test_printf_without_a_header_is_refused_as_nvcc_refuses_it(where):
    source = PRINTS.replace("HEADER", "#include <cmath>")
    if where == "device":
        source = source.replace('    printf("%d threads\\n", h);\n', "")
    with pytest.raises(cudacheck.CompileError, match=r"(?s)'printf'.*`printf` is declared by <cstdio>"):
        cudacheck.run_program(source, backend="cpu")
    # a kernel of its own (NVRTC's rules, as CuPy compiles it) has printf without any header
    out = np.zeros(1, np.int32)
    cudacheck.RawKernel(r'''extern "C" __global__ void k(int* o) { printf("%d\n", 7); o[0] = 1; }''', "k",
                        backend="cpu")((1,), (1,), (out,))
    assert out[0] == 1
