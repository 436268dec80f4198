"""Chapter 7's program (tiling_course.programs): every host-side bug the chapter shows is
reported by checked mode with the class the chapter names, at a line the edit touched,
and the unedited program gives no finding and no warning."""
import difflib

import pytest

import cudacheck
from tiling_course import programs


def changed_lines(right, wrong):
    """Line numbers (1-based, in `wrong`) that the edit added or changed, and the lines
    just around a deletion."""
    out = set()
    matcher = difflib.SequenceMatcher(a=right.splitlines(), b=wrong.splitlines(), autojunk=False)
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            out.update(range(j1 + 1, j2 + 1) if j2 > j1 else (j1, j1 + 1))
    return out


def test_the_program_is_clean_in_checked_mode_and_right():
    result = programs.run(check=True)
    assert result.exit_code == 0 and result.warnings == [], result
    assert result.stdout.count("PASSED") == 2 and "FAILED" not in result.stdout


@pytest.mark.parametrize("name", sorted(programs.BUGS))
def test_checked_mode_names_each_bug_of_the_chapter(name):
    bug = programs.BUGS[name]
    found = programs.finding(name)
    assert type(found).__name__ == bug.reports, found
    line = programs._line(found)
    wrong = bug.source()
    text = wrong.splitlines()[line - 1]
    if bug.reports in ("MemoryLeakWarning", "UninitializedReadError"):
        # reported where the memory is allocated, read or copied back, not at the edit
        assert "cudaMalloc" in text or "cudaMemcpy" in text or "Mds" in text, text
    elif bug.reports == "ResultNeverCopiedWarning":
        assert "<<<" in text, text          # the launch whose result went nowhere
    else:
        assert line in changed_lines(programs.source(), wrong) or "<<<" in text or "cudaMemcpy" in text, text


def test_a_bug_that_the_runtime_raises_keeps_what_the_program_printed():
    with pytest.raises(cudacheck.HostDeviceAccessError) as e:
        programs.run(programs.BUGS["host reads device memory"].source())
    assert "Static tiles 16 x 16" in e.value.stdout


def test_the_missing_copy_back_passes_its_own_check_unchecked():
    """The chapter's point: the program's own check passes, on the stale first product."""
    result = programs.run(programs.BUGS["missing copy back"].source())
    assert result.exit_code == 0 and result.stdout.count("PASSED") == 2


def test_the_grid_figure_counts_what_its_caption_says():
    """Chapter 7's caption: rounded up, nothing unwritten; rounded down, 70 of 198 elements."""
    fig = programs.grid_figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert "0 of 198 elements never written" in titles[0] and "3 x 5 blocks" in titles[0]
    assert "70 of 198 elements never written" in titles[1] and "2 x 4 blocks" in titles[1]
