"""The differential test: every kernel of the corpus (tests/support/cuda_corpus, written in the
styles of real GPU code, not the book's) runs plain and checked on the CPU runtime, on
fresh random inputs and awkward shapes. The two runs must agree bit for bit, match NumPy,
and checked mode must report nothing; every seeded bug must be reported with its
exception class, thread, block, array and element. The cases of one source share a build, and
so do most of its seeded bugs, each a renamed copy of its kernel (tests/support/cuda_corpus/
builds.py says how, and the tests at the end hold the copies to the edits they stand for).
scripts/corpus_gpu.py runs the same corpus on a GPU (logs/)."""
import functools
import re

import numpy as np
import pytest

import cudacheck
from tests.support.cuda_corpus import all_cases
from tests.support.cuda_corpus.builds import seeded_builds, sharing_one_build
from tests.support.cuda_corpus.case import run

CASES = all_cases()
BUGS = [(c, b) for c in CASES for b in c.bugs]

# each case with every instance of its source's cases: one library per source, options and mode
SHARED = sharing_one_build(CASES)


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
    case = SHARED[case.name]
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


@functools.cache
def _seeded():
    """Where each seeded bug is built (builds.py): made at the first bug's test, not at
    collection, which would read every source with the front end in each worker."""
    return seeded_builds(CASES)


@pytest.mark.parametrize("case,bug", BUGS, ids=[f"{c.name}-{b.name}" for c, b in BUGS])
def test_seeded_bug_is_reported(case, bug, rng):
    spec = case.setup(rng, bug.shape)
    built, source = _seeded()[case.name, bug.name]
    with pytest.raises(cudacheck.KernelError) as e:
        run(built, source, spec, check=True)
    assert isinstance(e.value, getattr(cudacheck, bug.error)), f"{type(e.value).__name__}: {e.value}"
    for field in ("thread", "block", "array", "index"):
        want = getattr(bug, field)
        if want is not None:
            assert getattr(e.value, field) == want, f"{field}: {getattr(e.value, field)} != {want}\n{e.value}"


def test_a_bug_built_with_others_is_its_kernel_as_the_edit_writes_it():
    """Each copy in a shared module is the case's kernel cut from case.edited(bug), renamed,
    and the module is the untouched source with the copies inserted."""
    shared = sharing_one_build(CASES)
    copies = {}   # a shared module's source -> (its case's source, the copies it must hold)
    for (name, bug_name), (built, source) in _seeded().items():
        case = next(c for c in CASES if c.name == name)
        bug = next(b for b in case.bugs if b.name == bug_name)
        if source == case.edited(bug):
            continue
        kernel = cudacheck.analyze(case.code(), case.options, shared[name].name_expressions).kernels[case.kernel]
        edited = case.edited(bug).splitlines(keepends=True)
        grown = sum(new.count("\n") - old.count("\n") for old, new in bug.edits)
        copy_name = re.sub(r"<.*", "", built.kernel).split("::")[-1]
        assert copy_name != kernel.function and built.options == case.options
        want = re.sub(rf"\b{kernel.function}\b", copy_name, "".join(edited[kernel.line - 1:kernel.end_line + grown]))
        copies.setdefault(source, (case.code(), []))[1].append(want)
    assert sum(len(c) for _, c in copies.values()) >= len(BUGS) // 2, "most bugs should share a module"
    for source, (original, wants) in copies.items():
        for want in wants:
            assert want in source, f"a copy is not its kernel as the edit writes it:\n{want}"
            source = source.replace(want, "", 1)
        assert source == original, "the shared module changes the source besides adding copies"


def test_a_bug_that_edits_outside_its_kernel_is_built_alone():
    """padding_macro_too_generous edits a macro, which every kernel of its source reads."""
    case = next(c for c in CASES if c.name == "scan_blelloch_padded")
    bug = next(b for b in case.bugs if b.name == "padding_macro_too_generous")
    built, source = _seeded()[case.name, bug.name]
    assert source == case.edited(bug) and built == case
