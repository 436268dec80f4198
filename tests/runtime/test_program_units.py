"""Whole programs of several files (cudacheck.run_program with a mapping of file names to
texts), as suites such as Rodinia build them: a C driver (K&R definitions, implicit
declarations: legal C that C++ refuses) linked with a CUDA unit whose extern "C" function
launches the kernel; a C++ helper unit; kernels kept in a .cu file the main unit #includes;
the program's input and output files in its working folder (cwd=). Each runs plain and
checked and is compared with NumPy; each wrong variant is refused with what to fix."""
import numpy as np
import pytest

import cudacheck

# The CUDA unit: a kernel scaling and summing a vector, behind a C entry point.
SUM_CU = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void scaled(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
extern "C" int run_scaled(const float* x, float* y, int k, int n) {
    float a = 0.25f * k;
    float *dx, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    scaled<<<(n + 127) / 128, 128>>>(dx, dy, a, n);
    cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
    return (int)cudaGetLastError();
}
"""

# The C driver: K&R parameter declarations and run_scaled called with no prototype in
# sight, both of which g++ refuses and gcc takes; main reads its vector from a file. (Its
# arguments are pointers and ints, which an implicit declaration passes unchanged; a float
# would be promoted to double, as C does, and arrive as garbage on a GPU machine too.)
DRIVER_C = r"""
#include <stdio.h>
#include <stdlib.h>
int twice(k) int k; { return 2 * k; }
int main(int argc, char** argv) {
    int n = atoi(argv[1]), i;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    FILE* in = fopen("vector.txt", "r");
    for (i = 0; i < n; i++) fscanf(in, "%f", &x[i]);
    fclose(in);
    int status = run_scaled(x, y, twice(atoi(argv[2])), n);
    FILE* out = fopen("scaled.txt", "w");
    for (i = 0; i < n; i++) fprintf(out, "%.9g\n", y[i]);
    fclose(out);
    printf("status %d\n", status);
    return 0;
}
"""


def write_vector(folder, x):
    (folder / "vector.txt").write_text("".join(f"{v!r}\n" for v in x.tolist()))


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("n", [1, 127, 1000])
def test_a_c_driver_links_with_the_cuda_unit_and_runs_in_its_folder(tmp_path, rng, check, n):
    x = rng.standard_normal(n).astype(np.float32)
    k = int(rng.integers(1, 9))
    write_vector(tmp_path, x)
    result = cudacheck.run_program({"driver.c": DRIVER_C, "sum.cu": SUM_CU}, backend="cpu", check=check,
                                   args=(n, k), cwd=str(tmp_path))
    assert (result.exit_code, result.stdout) == (0, "status 0\n"), result.stderr
    y = np.array((tmp_path / "scaled.txt").read_text().split(), dtype=np.float32)
    # one float multiplication per element: the GPU's result bit for bit
    np.testing.assert_array_equal(y, np.float32(0.5 * k) * x)


def test_the_c_unit_is_compiled_as_c_not_cpp(tmp_path):
    """`new` is a plain identifier in C; in C++ it is a keyword and the unit would not compile."""
    driver = DRIVER_C.replace("int status", "int new = 0; int status").replace("return 0;", "return new;")
    write_vector(tmp_path, np.ones(4, np.float32))
    result = cudacheck.run_program({"driver.c": driver, "sum.cu": SUM_CU}, backend="cpu", args=(4, 2),
                                   cwd=str(tmp_path))
    assert result.exit_code == 0 and (tmp_path / "scaled.txt").read_text().split() == ["1"] * 4


# A C++ helper unit (overloads: C++ only) beside a CUDA unit that holds main.
HELPER_CPP = r"""
#include <vector>
double total(const std::vector<float>& v) { double s = 0; for (float f : v) s += f; return s; }
double total(const float* v, int n) { return total(std::vector<float>(v, v + n)); }
"""
MAIN_CU = r"""
#include <cstdio>
#include <cstdlib>
#include "kernels.cu"
double total(const float* v, int n);
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = (float)((i * 37) % 11) - 5.0f;
    float* d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    square<<<(n + 63) / 64, 64>>>(d, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%.1f\n", total(h, n));
    return 0;
}
"""
# The kernel, in a file the main unit #includes (as Rodinia's programs keep theirs).
KERNELS_CU = r"""
__global__ void square(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * v[i];
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_an_included_kernel_and_a_cpp_unit(tmp_path, rng, check):
    n = int(rng.integers(1, 3000))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernels.cu").write_text(KERNELS_CU)
    result = cudacheck.run_program({"src/main.cu": MAIN_CU, "helper.cpp": HELPER_CPP}, backend="cpu", check=check,
                                   args=(n,), cwd=str(tmp_path))
    h = (np.arange(n) * 37 % 11 - 5.0) ** 2
    assert result.stdout == f"{h.sum():.1f}\n"


def test_checked_mode_finds_a_bug_in_an_included_kernel(tmp_path):
    """The wrong variant: the included kernel without its bounds test is reported, by name."""
    (tmp_path / "kernels.cu").write_text(KERNELS_CU.replace("if (i < n) ", ""))
    with pytest.raises(cudacheck.OutOfBoundsError, match="square"):
        cudacheck.run_program({"main.cu": MAIN_CU, "helper.cpp": HELPER_CPP}, backend="cpu", check=True,
                              args=(100,), cwd=str(tmp_path))


def test_a_relative_include_folder_is_relative_to_cwd(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "kernels.cu").write_text(KERNELS_CU)
    result = cudacheck.run_program(MAIN_CU.replace("double total(const float* v, int n);",
                                                   "double total(const float* v, int n) { double s = 0; "
                                                   "for (int i = 0; i < n; i++) s += v[i]; return s; }"),
                                   backend="cpu", args=(10,), options=["-Iinc"], cwd=str(tmp_path))
    assert result.stdout == f"{((np.arange(10) * 37 % 11 - 5.0) ** 2).sum():.1f}\n"


@pytest.mark.parametrize("units, error, message", [
    ({"a.c": DRIVER_C, "b.c": DRIVER_C, "sum.cu": SUM_CU}, cudacheck.CompileError,
     "main\\(\\) is defined in a.c and in b.c"),
    # two units defining one function: nvcc's link refuses the second definition
    ({"a.cu": SUM_CU, "b.cu": SUM_CU, "driver.c": DRIVER_C}, cudacheck.CompileError, "redefinition"),
    ({"driver.c": DRIVER_C}, ValueError, "no .cu file"),
    ({"sum.cu": SUM_CU, "notes.txt": "x"}, ValueError, "'notes.txt' is neither"),
    ({"sum.cu": SUM_CU, "bad.c": "template <class T> T f(T t) { return t; }"}, cudacheck.CompileError,
     "bad.c did not compile as C"),
    ({"sum.cu": SUM_CU}, cudacheck.CompileError, "has no main"),
    ({}, TypeError, "mapping of its files"),
    ({"sum.cu": 3}, TypeError, "3 is not|'sum.cu' is not"),
])
def test_a_bad_program_of_several_files_names_what_is_wrong(tmp_path, units, error, message):
    with pytest.raises(error, match=message):
        cudacheck.run_program(units, backend="cpu", args=(1, 1), cwd=str(tmp_path))


def test_a_missing_working_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        cudacheck.run_program(SUM_CU, backend="cpu", cwd=str(tmp_path / "absent"))


@pytest.mark.gpu(nvcc=True)
def test_the_c_driver_program_on_the_gpu_matches_the_cpu_runtime(tmp_path, rng):
    x = rng.standard_normal(300).astype(np.float32)
    write_vector(tmp_path, x)
    units = {"driver.c": DRIVER_C, "sum.cu": SUM_CU}
    gpu = cudacheck.run_program(units, backend="gpu", args=(300, 3), cwd=str(tmp_path))
    gpu_file = (tmp_path / "scaled.txt").read_text()
    cpu = cudacheck.run_program(units, backend="cpu", args=(300, 3), cwd=str(tmp_path))
    assert (gpu.stdout, gpu_file) == (cpu.stdout, (tmp_path / "scaled.txt").read_text())


# Two CUDA units, as nvcc compiles and links them: a header without a guard that both include,
# a macro the first unit's own text defines (which the second, compiled on its own, never sees).
SHARED_H = "struct Pair { int a, b; };\nint pair_sum(struct Pair p);\n"
FIRST_CU = r"""
#include "pair.h"
#define WIDTH 8
__global__ void add(const Pair* p, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].a + p[i].b + WIDTH;
}
void run_add(const Pair* p, int* out, int n) {
    Pair* dp; int* dout;
    cudaMalloc(&dp, n * sizeof(Pair));
    cudaMalloc(&dout, n * sizeof(int));
    cudaMemcpy(dp, p, n * sizeof(Pair), cudaMemcpyHostToDevice);
    add<<<(n + 31) / 32, 32>>>(dp, dout, n);
    cudaMemcpy(out, dout, n * sizeof(int), cudaMemcpyDeviceToHost);
}
"""
SECOND_CU = r"""
#include <cstdio>
#include <cstdlib>
#include "pair.h"
#ifndef WIDTH
#define WIDTH 3
#endif
void run_add(const Pair* p, int* out, int n);
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    Pair* p = (Pair*)malloc(n * sizeof(Pair));
    int* out = (int*)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) p[i] = Pair{i, 2 * i};
    run_add(p, out, n);
    long s = 0;
    for (int i = 0; i < n; i++) s += out[i];
    printf("%ld %d\n", s, WIDTH);
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_two_cuda_units_link_as_compiled_apart(tmp_path, rng, check):
    n = int(rng.integers(1, 2000))
    (tmp_path / "pair.h").write_text(SHARED_H)
    result = cudacheck.run_program({"first.cu": FIRST_CU, "second.cu": SECOND_CU}, backend="cpu", check=check,
                                   args=(n,), cwd=str(tmp_path))
    assert result.stdout == f"{3 * n * (n - 1) // 2 + 8 * n} 3\n"


# A C unit that calls the runtime API itself, declared as C (as the toolkit's C header declares
# it) or not at all (an implicit declaration), linked with a .cu holding only the kernel's launch.
API_C = r"""
#include <stdio.h>
#include <stdlib.h>
typedef int cudaError_t;
cudaError_t cudaMalloc(void** p, size_t n);
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, int kind);
void launch_negate(int* d, int n);
int main(int argc, char** argv) {
    int n = atoi(argv[1]), i, *d, *h = malloc(n * sizeof(int));
    long s = 0;
    for (i = 0; i < n; i++) h[i] = i;
    cudaMalloc((void**)&d, n * sizeof(int));
    cudaMemcpy(d, h, n * sizeof(int), 1);
    launch_negate(d, n);
    cudaMemcpy(h, d, n * sizeof(int), 2);
    for (i = 0; i < n; i++) s += h[i];
    printf("%ld %d %d\n", s, (int)cudaFree(d), (int)cudaFree(h));
    return 0;
}
"""
NEGATE_CU = r"""
__global__ void negate(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = -v[i];
}
extern "C" void launch_negate(int* d, int n) { negate<<<(n + 63) / 64, 64>>>(d, n); }
"""


def test_a_c_unit_calls_the_runtime_api_by_its_c_names(tmp_path, rng):
    n = int(rng.integers(1, 3000))
    result = cudacheck.run_program({"main.c": API_C, "negate.cu": NEGATE_CU}, backend="cpu", args=(n,),
                                   cwd=str(tmp_path))
    # cudaFree of a host pointer: cudaErrorInvalidValue (1), as CUDA answers it
    assert result.stdout == f"{-n * (n - 1) // 2} 0 1\n"
