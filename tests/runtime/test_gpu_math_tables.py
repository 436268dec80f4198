"""The special-function unit's tables (cudacheck/cpu/gpumath.py): what the stored file holds,
and the CPU runtime's __expf, __fdividef and rsqrtf looking them up, on fresh random inputs, bit for bit
against a NumPy model of the lookup. (tests/runtime/test_gpu_semantics.py holds expf, tanhf, rsqrtf,
rnorm3df and __expf to what an H100 computed.)"""
import lzma

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import gpumath
from tests.support.gpu_float_model import NO_FTZ, ex2_approx_ftz, rcp_approx_ftz, rsqrt_approx_ftz
from tests.support.gpu_float_model import flush as flush_ftz


@pytest.fixture(scope="module")
def blob():
    return lzma.decompress(gpumath.DATA.read_bytes())


@pytest.fixture(scope="module")
def tables(blob):
    return {name: gpumath.decode(name, blob) for name, _ in gpumath.TABLES}


def _ulps(got, exact):
    """|got - exact| in units of the last place of float32 at `exact`."""
    return np.abs(got.astype(np.float64) - exact) / np.spacing(exact.astype(np.float32)).astype(np.float64)


def test_the_file_holds_the_five_tables_as_encode_writes_them(blob, tables):
    assert len(blob) == sum(n for _, n in gpumath.TABLES) // 2
    assert gpumath.encode(tables) == gpumath.DATA.read_bytes()


def test_the_tables_are_the_functions_within_the_ptx_bounds(tables):
    """Each table is its function to a relative error below 2^-22, and monotone but in four places."""
    i = np.arange(1 << 23, dtype=np.float64)
    f = i * 2.0 ** -23
    for name, exact, step in (("ex2_pos", np.exp2(f), 1), ("ex2_neg", np.exp2(-f), -1), ("rcp", 1 / (1 + f), -1),
                              ("rsqrt", 1 / np.sqrt(np.concatenate([1 + f, 2 + 2 * f])), -1),
                              ("sqrt", np.sqrt(np.concatenate([1 + f, 2 + 2 * f])), 1)):
        t = tables[name]
        assert (np.abs(t / exact - 1)).max() < 2.0 ** -22, name
        # monotone, but for sqrt.approx, which an H100 measured one unit lower at the ends of four
        # of its 2^24 steps (m = 1.25, 1.359375, 1.375, 1.71875 and their neighbours)
        wrong_way = np.count_nonzero(np.diff(t.astype(np.float64)) * step < 0)
        assert wrong_way == (4 if name == "sqrt" else 0), (name, wrong_way)


SOURCE = r'''
extern "C" __global__ void sfu(const float* x, float* fast_exp, float* rs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { fast_exp[i] = __expf(x[i]); rs[i] = rsqrtf(fabsf(x[i])); }
}
'''


def test_fast_exp_and_rsqrt_look_the_tables_up(tables):
    rng = np.random.default_rng()
    n = 5000
    x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-20, 6.4, n)).astype(np.float32)
    fast_exp, rs = np.zeros(n, np.float32), np.zeros(n, np.float32)
    cudacheck.RawKernel(SOURCE, "sfu", backend="cpu")(((n + 255) // 256,), (256,), (x, fast_exp, rs, np.int32(n)))
    log2e = np.float32(1.4426950216293335)
    want = ex2_approx_ftz(tables, (x * log2e).astype(np.float32))
    assert np.array_equal(fast_exp.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(rs.view(np.uint32), rsqrt_approx_ftz(tables, np.abs(x)).view(np.uint32))
    assert _ulps(rs, 1 / np.sqrt(np.abs(x.astype(np.float64)))).max() < 2.0


@pytest.fixture(scope="module")
def quarter():
    return gpumath.sine()


def test_the_sine_file_holds_the_quarter_wave_as_encode_writes_it(quarter):
    assert quarter.size == gpumath.SINE_ENTRIES
    assert gpumath.encode_sine(quarter) == gpumath.SIN_DATA.read_bytes()


def test_the_quarter_wave_is_the_sine_within_its_absolute_bound(quarter):
    """sin(2 pi r / 2^25) within the Programming Guide's 2^-21.41 for __sinf on [-pi, pi]."""
    r = np.arange(gpumath.SINE_ENTRIES, dtype=np.float64)
    assert np.abs(quarter - np.sin(2 * np.pi * r / 2 ** 25)).max() < 2.0 ** -21.41
    assert quarter[0] == 0.0 and 0.99 < quarter[-1] <= 1.0


def _record_script():
    """scripts/record_gpu_math_tables.py, whose sine_rule the GPU's results were checked by."""
    import record_gpu_math_tables
    return record_gpu_math_tables


LOG_SINE = r'''
extern "C" __global__ void log_sine(const float* x, float* s, float* c, float* l, float* l1, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { __sincosf(x[i], &s[i], &c[i]); l[i] = logf(fabsf(x[i])); l1[i] = log1pf(x[i]); }
}
'''


def test_sine_cosine_and_logarithms_on_fresh_inputs(quarter):
    """__sincosf looks the quarter wave up by the rule the H100's results were checked by
    (the recording script's sine_rule), bit for bit; logf and
    log1pf (CUDA's polynomials, held bit for bit to an H100 in test_gpu_semantics.py) are
    within CUDA's 1 ulp of the exact values."""
    rng = np.random.default_rng()
    n = 20000
    x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    x[:2000] = rng.uniform(-1, 4, 2000).astype(np.float32)   # log1pf's range near -1 and 0
    s, c, lg, lg1 = (np.zeros(n, np.float32) for _ in range(4))
    cudacheck.RawKernel(LOG_SINE, "log_sine", backend="cpu")(((n + 255) // 256,), (256,), (x, s, c, lg, lg1,
                                                                                           np.int32(n)))
    rule = _record_script().sine_rule
    assert np.array_equal(s.view(np.uint32), rule(np, quarter, x.view(np.uint32), False).view(np.uint32))
    assert np.array_equal(c.view(np.uint32), rule(np, quarter, x.view(np.uint32), True).view(np.uint32))
    xd = x.astype(np.float64)
    assert _ulps(lg, np.log(np.abs(xd))).max() <= 1.0
    above = xd > -1
    assert _ulps(lg1[above], np.log1p(xd[above])).max() <= 1.0
    assert np.isnan(lg1[xd < -1]).all()


def test_readme_quotes_the_inputs_the_recording_checked():
    """The README's count of inputs checked is the sum of the recording's checks (its numbers in
    tests/data/, the run it cites as evidence in logs/), none of which differed."""
    import re
    from pathlib import Path

    from tiling_course.measure import model
    root = Path(__file__).parents[2]
    text = re.sub(r"\s+", " ", (root / "runtime" / "README.md").read_text())
    billions, log = re.search(r"checked on all of the about (\d+) billion inputs.*?`(logs/[^`]+-gpu-math-tables\.md)`",
                              text).groups()
    run = model.read(root / "tests" / "data" / "gpu-math-tables-h100.json")
    assert run.kind == "counts" and run.meta.extra["log"] == log and "H100" in run.meta.device
    assert len(run.records) == 16 and all(r.ok and r.extra["differ"] == 0 for r in run.records)
    assert round(sum(r.extra["inputs"] for r in run.records) / 1e9) == int(billions)


QUOTIENT = r'''
extern "C" __global__ void quotient(const float* x, const float* y, float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = __fdividef(x[i], y[i]);
}
'''


@pytest.mark.parametrize("ftz", [True, False], ids=["ftz", "no-ftz"])
def test_fast_division_is_x_times_the_tables_reciprocal(tables, ftz, rng):
    """__fdividef is div.approx: x times rcp.approx.ftz(y), rounded once, as an H100 gives it for
    every pair measured (scripts/probe_lg2_div.py); -ftz=true flushes the product's subnormals."""
    n = 6000
    x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-140, 127, n)).astype(np.float32)
    y = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-125.9, 127.9, n)).astype(np.float32)
    q = np.zeros(n, np.float32)
    options = () if ftz else NO_FTZ
    cudacheck.RawKernel(QUOTIENT, "quotient", backend="cpu", options=options)(((n + 255) // 256,), (256,),
                                                                              (x, y, q, np.int32(n)))
    flush = flush_ftz if ftz else (lambda v: v)
    with np.errstate(over="ignore", invalid="ignore"):
        want = flush((flush(x) * rcp_approx_ftz(tables, y)).astype(np.float32))
    assert np.array_equal(q.view(np.uint32), want.view(np.uint32)), np.flatnonzero(q.view(np.uint32) !=
                                                                               want.view(np.uint32))[:5]


def _mapping_of(address):
    """(permissions, anonymous kB) of the mapping of /proc/self/smaps that holds `address`."""
    found = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                lo, hi = (int(v, 16) for v in head[0].split("-"))
                found = [head[1], None] if lo <= address < hi else None
            elif found is not None and head[0] == "Anonymous:":
                found[1] = int(head[1])
                return tuple(found)
    return None


def test_the_decoded_tables_are_shared_memory_a_launchs_fork_does_not_copy():
    """All 138 MB of them in memory mapped shared (no page of the process's own, whose page-table
    entries every launch's fork copies), and read-only once decoded: to NumPy, and in the page
    protection that the launches' workers, sharing the pages, inherit."""
    for table in (gpumath.tables(), gpumath.sine(), gpumath.lg2()):
        assert not table.flags.writeable
        with pytest.raises(ValueError):
            table[len(table) // 2] = 0
        with pytest.raises(ValueError):
            table.flags.writeable = True
        perms, anonymous = _mapping_of(table.ctypes.data)
        assert perms == "r--s" and anonymous == 0, (perms, anonymous)
