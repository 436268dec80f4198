"""The planted-bug scorecard of Hopper pipelines (issue 44, item 2): every bug of
tiling_course.pipeline_bugs, in chapter 9's kernels (kernels/hopper.cu) and in its own
warp-specialised kernel (RING), run checked on the CPU runtime, must raise the exception class that
names its cause, with the words that name it: not a downstream symptom (a refill racing a wgmma for
a missing full-barrier wait, a deadlock for a dropped empty-barrier wait). The same two builds with
no bug run checked with no finding and match float64 NumPy. scripts/hopper_bug_scorecard.py prints
the table (and runs the bugs under compute-sanitizer on a GPU)."""
from collections import Counter

import numpy as np
import pytest

import cudacheck
from tiling_course import hopper, pipeline_bugs


@pytest.fixture(scope="module")
def modules():
    return pipeline_bugs.modules()


@pytest.mark.parametrize("source,kernel", [("ring", "ring"), ("hopper.cu", "matmul_persistent"),
                                           ("hopper.cu", "matmul_tma_wgmma"), ("hopper.cu", "matmul_async_store")])
def test_without_a_bug_the_kernels_run_checked_and_multiply(modules, source, kernel, rng):
    P, exact = pipeline_bugs.run(modules[source], source, kernel, 0, rng)
    P = np.asarray(P)[:, :exact.shape[1]]
    scale = np.abs(exact) + 1.0
    assert np.all(np.abs(P - exact) <= 1e-5 * scale), np.nanmax(np.abs(P - exact) / scale)


@pytest.mark.parametrize("bug", pipeline_bugs.BUGS, ids=lambda b: f"{b.number}-{b.kind}-{b.source}")
def test_each_planted_bug_is_named_by_its_cause(modules, bug, rng):
    expected = getattr(cudacheck, bug.expected)
    with pytest.raises(cudacheck.KernelError) as e:
        pipeline_bugs.run(modules[bug.source], bug.source, bug.kernel, bug.number, rng)
    assert isinstance(e.value, expected), f"{type(e.value).__name__}: {e.value}"
    assert bug.says in str(e.value), str(e.value)
    assert e.value.kernel == bug.kernel


def test_every_kind_has_two_bugs_or_more_in_each_source():
    count = Counter((b.kind, b.source) for b in pipeline_bugs.BUGS)
    assert all(count[kind, source] >= 2 for kind in pipeline_bugs.KINDS for source in ("hopper.cu", "ring")), count
    assert len({b.number for b in pipeline_bugs.BUGS}) == len(pipeline_bugs.BUGS)


def test_a_site_that_moved_in_hopper_cu_is_named():
    code = pipeline_bugs.sources.read(hopper.FILE).replace("   // step 3a's wait\n", "\n")
    with pytest.raises(ValueError, match="planted bug 1: its site occurs 0 times"):
        pipeline_bugs.planted_source(code)
