"""The ceiling of nvcuda::wmma on this GPU: TFLOP/s of a kernel that only runs mma_sync on
fragments held in registers (wmma_ceiling.cu), at FP16, BF16 and TF32 inputs with float
accumulation, with 4, 8 and 16 warps per multiprocessor. Chapter 8 compares the pipelined
kernel and cuBLAS with it. Needs a GPU of compute capability 8.0 or later and nvcc.

    python benchmarks/wmma_ceiling.py
"""
import subprocess
import tempfile
from pathlib import Path

import cupy
import numpy as np

from tiling_course import precision

SOURCE = Path(__file__).with_name("wmma_ceiling.cu")
ITERATIONS = 20000      # mma_sync per accumulator per warp: about 10 ms a launch
WARPS_PER_BLOCK = 4


def main():
    dev = cupy.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
    print(f"{name}, {sms} multiprocessors, CuPy {cupy.__version__}")
    rng = np.random.default_rng(0)
    values = rng.uniform(-1e-3, 1e-3, 2048).astype(np.float32)
    for prec in ("fp16", "bf16", "tf32"):
        cubin = Path(tempfile.mkdtemp()) / f"{prec}.cubin"
        subprocess.run(["nvcc", f"-arch=sm_{dev.compute_capability}", "-O3", "-cubin", "-o", str(cubin),
                        *precision.DEFINES[prec], str(SOURCE)], check=True)
        fn = cupy.RawModule(path=str(cubin)).get_function("wmma_ceiling")
        src = cupy.asarray(precision.to_device_format(values, prec))
        frag_k = 8 if prec == "tf32" else 16
        for warps in (4, 8, 16):
            blocks = sms * warps // WARPS_PER_BLOCK
            out = cupy.empty(blocks * WARPS_PER_BLOCK * 8 * 256, cupy.float32)
            args = (src, out, np.int32(ITERATIONS))
            fn((blocks,), (32 * WARPS_PER_BLOCK,), args)          # warm-up
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            fn((blocks,), (32 * WARPS_PER_BLOCK,), args)
            end.record()
            end.synchronize()
            ms = cupy.cuda.get_elapsed_time(start, end)
            flops = blocks * WARPS_PER_BLOCK * ITERATIONS * 8 * 2 * 16 * 16 * frag_k
            print(f"  {prec.upper()}, {warps:2} warps per multiprocessor: {flops / ms / 1e9:6.1f} TFLOP/s")


if __name__ == "__main__":
    main()
