"""measure.bench_hopper's two timings, on a GPU, against kernels of known length: the book's
benchmark's hold kernel (tiling_course.measure.bench.HOLD_KERNEL), which spins for a set number of
nanoseconds of the GPU's global timer. "device" must give that length (the GPU's time alone);
"launch" gives at least it (the host's time to submit the launch may add to it)."""
import pytest
import sustained_hopper as sustained

from tiling_course.measure import bench_hopper as bench


def spinner(us):
    import cupy
    import numpy as np

    from tiling_course.measure.bench import HOLD_KERNEL
    kernel = cupy.RawKernel(HOLD_KERNEL, "hold")
    return lambda: kernel((1,), (1,), (np.uint64(us * 1000),))


@pytest.mark.gpu
@pytest.mark.parametrize("a_us, b_us", [(300, 100), (40, 700)])
def test_device_timing_is_each_kernels_own_length(a_us, b_us):
    a_ms, b_ms, seen = bench.time_pair(spinner(a_us), spinner(b_us), warmup=2, repeats=15, timing="device")
    assert seen["timing"] == "device"
    assert a_ms == pytest.approx(a_us / 1000, rel=0.03, abs=0.003)
    assert b_ms == pytest.approx(b_us / 1000, rel=0.03, abs=0.003)
    assert all(h > 0 for h in seen["host_us"])


@pytest.mark.gpu
def test_launch_timing_is_never_shorter_than_the_kernel():
    a_ms, b_ms, seen = bench.time_pair(spinner(200), spinner(50), warmup=2, repeats=15, timing="launch")
    assert seen["timing"] == "launch"
    assert a_ms >= 0.2 * 0.99 and b_ms >= 0.05 * 0.99


# ---- scripts/sustained_hopper.py: its summary of nvidia-smi's samples (no GPU needed) ----------


def test_the_sustained_runs_summary_drops_the_first_quarter_and_keeps_every_reason():
    rows = ["1980, 250.5, 40, 0x0000000000000000"] * 3 + ["1500, 690.0, 60, 0x0000000000000004"] * 5 \
        + ["1470, 692.0, 61, 0x0000000000000004"] * 4
    text = "\n".join(rows) + "\nnot a sample\n"
    mhz, watts, reasons, used = sustained.summarize(text)
    assert used == 12 - 12 // 4 == 9                  # the first 3 of 12 dropped: the previous run's
    assert (mhz, watts) == (1500.0, 690.0)            # medians of 5 x (1500, 690) and 4 x (1470, 692)
    assert reasons == ["0x0000000000000000", "0x0000000000000004"]
    with pytest.raises(ValueError, match="no samples"):
        sustained.summarize("")


def test_the_sustained_script_says_what_it_does(capsys):
    with pytest.raises(SystemExit) as e:
        sustained.main(["--help"])
    assert e.value.code == 0 and "power limit" in capsys.readouterr().out
