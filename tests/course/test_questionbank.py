"""The question bank's worked answers hold the numbers the book measures: loads per thread
from checked mode's counts, and its exports (Markdown, Moodle GIFT) hold every question."""
import pytest

from tiling_course import questionbank, traces


@pytest.mark.parametrize("kernel", ["naive", "tiled"])
def test_loads_per_thread_are_checked_modes_counts(kernel):
    width, tile = 64, 16
    report = traces.counts(kernel, width, tile)
    loads = report.global_counts["M"].loads + report.global_counts["N"].loads
    want = (questionbank.loads_per_thread_naive(width) if kernel == "naive"
            else questionbank.loads_per_thread_tiled(width, tile))
    assert loads == want * width * width


def test_numbers_in_the_answers():
    qs = {q.id: q for q in questionbank.questions()}
    assert qs["E1.1"].answer == 2048 and qs["E2.1"].answer == 128
    assert qs["E2.2"].answer == 4 and qs["E2.3"].answer == 8
    assert [q.answer for q in qs.values() if q.chapter == "05_performance"] == [8, 2, 4, 1]


def test_the_exports_hold_every_question():
    md, gift = questionbank.markdown(), questionbank.gift()
    for q in questionbank.questions():
        assert f"## {q.id}" in md and f"::{q.id}::" in gift
    assert "{#2048:0 #" in gift and "{}" in gift
