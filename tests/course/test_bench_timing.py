"""scripts/bench_hopper.py's two timings, on a GPU, against kernels of known length: the book's
benchmark's hold kernel (tiling_course.bench.HOLD_KERNEL), which spins for a set number of
nanoseconds of the GPU's global timer. "device" must give that length (the GPU's time alone);
"launch" gives at least it (the host's time to submit the launch may add to it)."""
import importlib.util

import pytest
from conftest import ROOT, gpu

spec = importlib.util.spec_from_file_location("bench_hopper", ROOT / "scripts" / "bench_hopper.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def spinner(us):
    import cupy
    import numpy as np

    from tiling_course.bench import HOLD_KERNEL
    kernel = cupy.RawKernel(HOLD_KERNEL, "hold")
    return lambda: kernel((1,), (1,), (np.uint64(us * 1000),))


@gpu
@pytest.mark.parametrize("a_us, b_us", [(300, 100), (40, 700)])
def test_device_timing_is_each_kernels_own_length(a_us, b_us):
    a_ms, b_ms, seen = bench.time_pair(spinner(a_us), spinner(b_us), warmup=2, repeats=15, timing="device")
    assert seen["timing"] == "device"
    assert a_ms == pytest.approx(a_us / 1000, rel=0.03, abs=0.003)
    assert b_ms == pytest.approx(b_us / 1000, rel=0.03, abs=0.003)
    assert all(h > 0 for h in seen["host_us"])


@gpu
def test_launch_timing_is_never_shorter_than_the_kernel():
    a_ms, b_ms, seen = bench.time_pair(spinner(200), spinner(50), warmup=2, repeats=15, timing="launch")
    assert seen["timing"] == "launch"
    assert a_ms >= 0.2 * 0.99 and b_ms >= 0.05 * 0.99
