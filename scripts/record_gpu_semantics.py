"""On a GPU: what CUDA computes where C++ leaves a result undefined or computes otherwise
(tests/support/gpu_semantics_cases.py), stored so that the CPU runtime is tested against it with
no GPU (tests/runtime/test_gpu_semantics.py). Each case is compiled by CuPy's RawModule (NVRTC,
default options but the case's own) and launched; every output array is stored as its
bytes. Also what NVRTC and nvcc say of a few programs: __CUDA_ARCH__, a device function
named like a CUDA one, a C library function declared in device code, and a whole
program's printf order and failed cudaMalloc. Written as a run of outputs of the one measurement
model (tiling_course.measure.model): a record per case, per NVRTC probe, and the program's.

    python -m scripts.record_gpu_semantics --output tests/data/gpu_semantics.json   # from the repository's root
"""
import argparse
import base64
import datetime
import json
import platform
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tests.support.gpu_semantics_cases import cases
from tiling_course.measure import model

PROGRAM = r'''
#include <cstdio>
__global__ void hello(int x) { printf("device %d\n", x); }
int main() {
    hello<<<1, 1>>>(7);
    printf("host after launch\n");
    cudaDeviceSynchronize();
    printf("host after sync\n");
    float* p = nullptr;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 50);
    printf("malloc %d %s %s\n", (int)e, cudaGetErrorName(e), cudaGetErrorString(e));
    printf("last %d\n", (int)cudaGetLastError());
    return 0;
}
'''


def run_case(case):
    import cupy
    args = case.make_args()
    dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    mod = cupy.RawModule(code=case.source, options=case.options)
    mod.get_function(case.kernel)((case.grid,), (case.block,), dev)
    cupy.cuda.Device().synchronize()
    return [{"dtype": a.dtype.str, "bytes": base64.b64encode(cupy.asnumpy(d).tobytes()).decode()}
            for a, d in zip(args, dev) if isinstance(a, np.ndarray)]


def nvrtc(source):
    import cupy
    try:
        cupy.RawModule(code=source).get_function("k")
        return "compiled"
    except Exception as e:   # noqa: BLE001 - the message is the record
        return f"{type(e).__name__}: {e}"


def main():
    import cupy
    ap = argparse.ArgumentParser()
    ap.add_argument("--output", required=True)
    opts = ap.parse_args()
    out = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
           "date": datetime.date.today().isoformat(), "cupy": cupy.__version__,
           "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "driver": cupy.cuda.runtime.driverGetVersion(),
           "nvrtc": ".".join(map(str, cupy.cuda.nvrtc.getVersion())), "python": platform.python_version(),
           "cases": {}, "nvrtc_messages": {}, "program": {}}
    for case in cases():
        out["cases"][case.name] = run_case(case)
        print("recorded", case.name, flush=True)
    x = cupy.zeros(1, cupy.int32)
    cupy.RawKernel('extern "C" __global__ void k(int* o) { o[0] = __CUDA_ARCH__; }', "k")((1,), (1,), (x,))
    out["cuda_arch"] = int(x[0])
    out["nvrtc_messages"]["system"] = nvrtc('extern "C" __device__ int system(const char*);\n'
                                            'extern "C" __global__ void k(int* o) { o[0] = system("true"); }')
    out["nvrtc_messages"]["umin"] = nvrtc('__device__ unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }\n'
                                          'extern "C" __global__ void k(unsigned* o) { o[0] = umin(3u, 4u); }')
    out["nvrtc_messages"]["undefined"] = nvrtc('__device__ float helper(float);\n'
                                               'extern "C" __global__ void k(float* o) { o[0] = helper(1.0f); }')
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "p.cu"
        src.write_text(PROGRAM)
        build = subprocess.run(["nvcc", "-o", str(Path(tmp) / "p"), str(src)], capture_output=True, text=True)
        out["program"]["nvcc"] = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip()
        out["program"]["stdout"] = (subprocess.run([str(Path(tmp) / "p")], capture_output=True, text=True).stdout
                                    if build.returncode == 0 else "build failed: " + build.stderr)
    flat = {k: out[k] for k in ("device", "date", "cupy", "cuda_runtime", "driver", "nvrtc", "python")}
    meta = model.Meta.of(flat, command=f"python -m scripts.record_gpu_semantics --output {opts.output}")
    meta.gpu["cuda_arch"] = out["cuda_arch"]
    meta.extra["what"] = ("each case of tests/support/gpu_semantics_cases.py compiled by NVRTC and launched: its "
                          "output arrays' bytes; what NVRTC said of three sources; a whole program's output (nvcc)")
    records = [model.Record(kernel=name, shape=None, ok=True, extra={"outputs": outs})
               for name, outs in out["cases"].items()]
    records += [model.Record(kernel="nvrtc", shape=None, config={"probe": probe}, ok=msg == "compiled",
                             extra={"message": msg}) for probe, msg in out["nvrtc_messages"].items()]
    built = not out["program"]["stdout"].startswith("build failed")
    records.append(model.Record(kernel="program", shape=None, ok=built, extra=out["program"]))
    model.write(model.Run("outputs", meta, tuple(records)), opts.output)
    print(json.dumps({k: v for k, v in out.items() if k != "cases"}, indent=1))


if __name__ == "__main__":
    main()
