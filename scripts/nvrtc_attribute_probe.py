"""What NVRTC and nvcc do with host-compiler attributes, pragmas, C-library builtins and
assembly in device code: the evidence behind the CPU runtime's rules (cudacheck's
cpu/preprocessed.py ignores the attributes and pragmas, cpu/device_symbols.py refuses what
reaches the C library). Each case is a kernel with one of them, compiled and launched
through CuPy (NVRTC) and compiled by nvcc -arch=sm_90.

    python scripts/nvrtc_attribute_probe.py --output probe.json    # on a GPU, nvcc on PATH
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import cupy as cp

KERNEL = r'''
%(before)s
extern "C" __global__ %(attr)s void k(float* x, int n) {
    __shared__ float s[64];
    s[0] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x < n) x[threadIdx.x] = s[0] + %(body)s;
}
'''
ALIAS = 'extern "C" __device__ float f(float x) { return x; }\n' \
        'extern "C" __device__ float g(float) __attribute__((alias("f")));'
# name: (source before the kernel, attribute on it, an expression it adds to its result)
CASES = {
    "no_sanitize_thread": ("", "__attribute__((no_sanitize_thread))", "0"),
    "no_sanitize(thread)": ("", '__attribute__((no_sanitize("thread")))', "0"),
    "[[gnu::no_sanitize_thread]]": ("", "[[gnu::no_sanitize_thread]]", "0"),
    "optimize(O0)": ("", '__attribute__((optimize("O0")))', "0"),
    "optimize(fast-math)": ("", '__attribute__((optimize("fast-math")))', "0"),
    "target": ("", '__attribute__((target("arch=x86-64")))', "0"),
    "constructor": ("__attribute__((constructor)) __device__ void init() {}", "", "0"),
    "section": ("", '__attribute__((section(".init_array")))', "0"),
    "weak": ("", "__attribute__((weak))", "0"),
    "alias": (ALIAS, "", "g(1.0f)"),
    "#pragma GCC optimize": ('#pragma GCC optimize("O0")', "", "0"),
    "_Pragma": ('_Pragma("GCC optimize(\\"O0\\")")', "", "0"),
    "#pragma STDC FP_CONTRACT": ("#pragma STDC FP_CONTRACT OFF", "", "0"),
    "#line": ('#line 1 "other.h"', "", "0"),
    "__builtin_fork": ("", "", "__builtin_fork()"),
    "__builtin_execl": ("", "", '__builtin_execl("/bin/sh", "sh", (char*)0)'),
    "__builtin_abort": ("", "", "(__builtin_abort(), 0)"),
    "__builtin_puts": ("", "", '__builtin_puts("x")'),
    "file-scope asm": ('asm(".globl zz");', "", "0"),
    "asm label": ('extern "C" __device__ int f2() asm("fork");', "", "f2()"),
}


def words(text, n=400):
    return " ".join(text.split())[:n]


def nvrtc(src):
    try:
        fn = cp.RawModule(code=src).get_function("k")
        fn((1,), (32,), (cp.zeros(32, cp.float32), cp.int32(32)))
        cp.cuda.runtime.deviceSynchronize()
        return "accepted"
    except Exception as e:   # CuPy's compile error or the driver's: either is the answer
        return "refused: " + words(str(e))


def nvcc(src):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.cu"
        path.write_text(src)
        proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(path), "-o", str(Path(d) / "k.o")],
                              capture_output=True, text=True)
    verdict = "accepted" if proc.returncode == 0 else "refused"
    return verdict + (": " + words(proc.stderr) if proc.stderr.strip() else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default="nvrtc_attrs.json")
    args = ap.parse_args(argv)
    cases = {}
    for name, (before, attr, body) in CASES.items():
        src = KERNEL % dict(before=before, attr=attr, body=body)
        cases[name] = {"nvrtc": nvrtc(src), "nvcc": nvcc(src)}
        print(f"{name:28s} NVRTC {cases[name]['nvrtc'][:150]}\n{'':28s} nvcc  {cases[name]['nvcc'][:150]}")
    meta = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "nvrtc": cp.cuda.nvrtc.getVersion(),
            "cupy": cp.__version__}
    Path(args.output).write_text(json.dumps({**meta, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
