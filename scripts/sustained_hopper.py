"""On an H100 or H200: chapter 9's kernels and cuBLAS each launched back to back for a few
seconds at 4096^3, with the GPU's clock and power sampled meanwhile: what the kernels and
cuBLAS run at when the GPU holds its power limit.

For each round, cuBLAS's gemm and then each kernel: 20 launches to warm up, then launches
back to back for --seconds, CUDA events around the whole run (the time per launch is the
interval over the launches), while `nvidia-smi --query-gpu=clocks.sm,power.draw,
clocks_throttle_reasons.active -lms 20` samples the GPU; the medians of the samples after
the first quarter (which may still be the previous run's) and every throttle reason seen
are printed beside the time, and each kernel's fraction of cuBLAS's speed in that round.
The kernels are compiled as tiling_course.measure.bench_hopper compiles them (its build and inputs) and
launched by tiling_course.hopper's rule (hopper.prepare); their results are not checked here (measure.bench_hopper
checks them).

    python scripts/sustained_hopper.py
    python scripts/sustained_hopper.py --seconds 3 --rounds 2 --kernels matmul_async_store
    python scripts/sustained_hopper.py --source probe.cu -D CL_GROUP_M=6
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMI_QUERY = "clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"
SMI_PERIOD_MS = 20


def summarize(samples):
    """nvidia-smi's CSV rows (no header, no units) as (median MHz, median W, throttle reasons,
    samples used): the samples after the first quarter, the reasons of all of them."""
    rows = [[field.strip() for field in line.split(",")] for line in samples.strip().splitlines()]
    rows = [r for r in rows if len(r) == 4]
    if not rows:
        raise ValueError("nvidia-smi gave no samples")
    used = rows[len(rows) // 4:]
    return (statistics.median(float(r[0]) for r in used), statistics.median(float(r[1]) for r in used),
            sorted({r[3] for r in rows}), len(used))


def sustained(run, seconds):
    """Milliseconds per launch of `run` launched back to back for `seconds`, and nvidia-smi's
    samples meanwhile (summarize's input)."""
    import cupy
    for _ in range(20):
        run()
    cupy.cuda.Device().synchronize()
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={SMI_QUERY}", "--format=csv,noheader,nounits",
                            "-lms", str(SMI_PERIOD_MS)], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.3)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        launches, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(50):
                run()
            launches += 50
            if launches % 500 == 0:         # the queue stays a few hundred launches deep
                cupy.cuda.get_current_stream().synchronize()
        end.record()
        end.synchronize()
    finally:
        smi.terminate()
    return cupy.cuda.get_elapsed_time(start, end) / launches, smi.communicate()[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", nargs="+", default=["matmul_async_store", "matmul_persistent"])
    ap.add_argument("--precision", choices=("bf16", "fp16"), default="bf16")
    ap.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--seconds", type=float, default=3.0, help="each run's length (default 3)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--source", type=Path, default=ROOT / "kernels" / "hopper.cu")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE")
    opts = ap.parse_args(argv)
    import cupy

    from tiling_course import hopper
    from tiling_course.measure import bench_hopper as bench
    from tiling_course.measure import model
    from tiling_course.measure.cublas import Cublas
    size, prec = opts.size, opts.precision
    M, N, _, _ = bench.make_inputs(model.Shape.cube(size), prec, 0)
    R = cupy.empty((size, size), cupy.float32)
    cub = Cublas()
    runs = {"cuBLAS": lambda: cub.gemm(M, N, R, prec)}
    build = argparse.Namespace(source=opts.source, define=opts.define, compiler="auto")
    for kernel in opts.kernels:
        module, _, _ = bench.build(build, prec, kernel)
        runs[kernel] = hopper.prepare(module, kernel, M, N)[0]
    v = bench.versions()
    print(f"{v['device']}, {v['date']}, CUDA runtime {v['cuda_runtime']}, driver {v['cuda_driver']}, NVRTC "
          f"{v['nvrtc']}, CuPy {v['cupy']}; {prec.upper()} {size}^3, {opts.source} {' '.join(opts.define)}".rstrip())
    for r in range(1, opts.rounds + 1):
        ms = {}
        for name, run in runs.items():
            ms[name], samples = sustained(run, opts.seconds)
            mhz, watts, reasons, used = summarize(samples)
            print(f"round {r}  {name:22s} {ms[name] * 1000:8.1f} us/launch  {2 * size ** 3 / ms[name] / 1e9:7.1f} "
                  f"TFLOP/s  clock {mhz:6.0f} MHz  power {watts:6.1f} W  samples {used}  throttle {reasons}",
                  flush=True)
        print(f"round {r}  fraction of cuBLAS's speed: "
              + ", ".join(f"{k} {ms['cuBLAS'] / t:.3f}" for k, t in ms.items() if k != "cuBLAS"), flush=True)


if __name__ == "__main__":
    sys.exit(main())
