"""The differential test: every kernel of the corpus (tests/support/cuda_corpus, written in the
styles of real GPU code, not the book's) runs plain and checked on the CPU runtime, on
fresh random inputs and awkward shapes. The two runs must agree bit for bit, match NumPy,
and checked mode must report nothing; every seeded bug must be reported with its
exception class, thread, block, array and element. scripts/corpus_gpu.py runs the same
corpus on a GPU (logs/)."""
import numpy as np
import pytest

import cudacheck
from tests.support.cuda_corpus import all_cases
from tests.support.cuda_corpus.case import run

CASES = all_cases()
BUGS = [(c, b) for c in CASES for b in c.bugs]


def _fields(got, want):
    """(label, got, want) as float64 arrays; a structured array field by field."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.names:
        return [(f".{n}", np.asarray(got[n], np.float64), np.asarray(want[n], np.float64)) for n in got.dtype.names]
    return [("", got.astype(np.float64), want.astype(np.float64))]


def test_the_corpus_is_as_large_as_promised():
    assert len(CASES) >= 100 and len(BUGS) >= 40, (len(CASES), len(BUGS))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_plain_and_checked_runs_agree_and_match_numpy(case, rng):
    for shape in case.shapes:
        seed = int(rng.integers(1 << 62))
        runs = {}
        for check in (False, True):
            spec = case.setup(np.random.default_rng(seed), shape)
            args, mod = spec.args, run(case, case.code(), spec, check=check)
            runs[check] = (args, mod)
        inputs = case.setup(np.random.default_rng(seed), shape).args
        expected = case.reference(inputs, shape)
        for check, (args, mod) in runs.items():
            for key, want in expected.items():
                got = mod.get_global(key).array if isinstance(key, str) else args[key]
                for field, g, w in _fields(got, want):
                    np.testing.assert_allclose(
                        g, w, rtol=case.rtol, atol=case.atol,
                        err_msg=f"{case.name}, shape {shape}, {'checked' if check else 'plain'}: output {key!r}{field}")
        if case.deterministic:
            for key in expected:
                plain, checked = ((m.get_global(key).array if isinstance(key, str) else a[key])
                                  for a, m in (runs[False], runs[True]))
                assert np.asarray(plain).tobytes() == np.asarray(checked).tobytes(), (
                    f"{case.name}, shape {shape}: the checked run computed different bits for output {key!r}")


@pytest.mark.parametrize("case,bug", BUGS, ids=[f"{c.name}-{b.name}" for c, b in BUGS])
def test_seeded_bug_is_reported(case, bug, rng):
    spec = case.setup(rng, bug.shape)
    with pytest.raises(cudacheck.KernelError) as e:
        run(case, case.edited(bug), spec, check=True)
    assert isinstance(e.value, getattr(cudacheck, bug.error)), f"{type(e.value).__name__}: {e.value}"
    for field in ("thread", "block", "array", "index"):
        want = getattr(bug, field)
        if want is not None:
            assert getattr(e.value, field) == want, f"{field}: {getattr(e.value, field)} != {want}\n{e.value}"
