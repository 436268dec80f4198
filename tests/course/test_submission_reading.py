"""Reading a submission without running or trusting it (no sandbox needed): the one reader
of the %%cuda line (tiling_course.cudacell), shared by the magic and the grader, and the
walk of an upload that follows no link and reads only regular files within limits
(tiling_course.grading.submission). The graded corpora are in test_submission_corpora.py."""
import os

import pytest

from tiling_course import cudacell, magic
from tiling_course.grading import answers, submission


@pytest.mark.parametrize("line, variable, options", [
    ("rect_src", "rect_src", ()),
    ("rect_src -std=c++17", "rect_src", ("-std=c++17",)),
    ("rect_src\t-arch=sm_90a  -std=c++17 ", "rect_src", ("-arch=sm_90a", "-std=c++17")),
    ('rect_src "-DNAME=a b"', "rect_src", ("-DNAME=a b",)),
])
def test_the_magic_line_is_the_variable_then_its_options(line, variable, options):
    assert cudacell.parse(line) == cudacell.CudaLine(variable, options)


@pytest.mark.parametrize("line, says, variable", [
    ("", "names no Python variable", ""),
    ("2x -std=c++17", "names no Python variable", ""),
    ('rect_src -DX="1', "cannot be split (No closing quotation)", "rect_src"),
])
def test_a_bad_magic_line_says_what_is_wrong_and_which_part(line, says, variable):
    with pytest.raises(cudacell.CudaLineError, match="Usage: %%cuda VARIABLE") as e:
        cudacell.parse(line)
    assert says in str(e.value) and e.value.variable == variable


def test_the_magic_reads_its_line_with_the_graders_reader(capsys):
    magic.cuda('rect_src -DX="1', "int x;")
    with pytest.raises(cudacell.CudaLineError) as e:
        cudacell.parse('rect_src -DX="1')
    assert capsys.readouterr().out.strip() == str(e.value)


@pytest.mark.parametrize("text, expected", [
    ("%%cuda v\nint x;", ("v", "int x;")),
    ("\ufeff%%cuda v -O3\r\nint x;\r\n", ("v -O3", "int x;\n")),
    ("\n \n# mine\n%%cuda v\nint x;", ("v", "int x;")),
    ("%%cuda\nint x;", ("", "int x;")),
    ("x = 1\n%%cuda v\nint x;", None),
    ("%%cuda_program\nint main() {}", None),
    ("  %%cuda v\nint x;", None),
])
def test_a_cell_is_a_cuda_cell_as_ipython_runs_it(text, expected):
    assert cudacell.split(text) == expected


def test_the_last_cuda_cell_with_its_options_answers_and_a_bad_line_is_that_parts_problem():
    code = lambda s: {"cell_type": "code", "source": s, "metadata": {}}   # noqa: E731
    nb = {"cells": [code("%%cuda a\nfirst"), code("%%cuda a -std=c++17\nsecond"), code('%%cuda b -DX="\nthird'),
                    {"cell_type": "markdown", "source": "%%cuda c\nnot code"}]}
    found = answers.from_notebook(nb, ("a", "b", "c"))
    assert found["a"] == answers.Answer("a", "second", "cell 2 of the notebook", ("-std=c++17",))
    assert found["b"].source == "" and "cannot be split" in found["b"].problem and "c" not in found


@pytest.fixture
def upload(tmp_path):
    """A folder of every kind of name an upload can hold."""
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "b.ipynb").write_text("{}")
    (tmp_path / "big.ipynb").write_bytes(b"x" * 2000)
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "a.ipynb")
    (tmp_path / "up").symlink_to("/")
    (tmp_path / ".hidden.ipynb").write_text("{}")
    os.mkfifo(tmp_path / "fifo.ipynb")
    (tmp_path / "other.txt").write_text("not wanted")
    return tmp_path


def test_the_walk_reads_regular_files_and_says_why_it_passed_over_the_rest(upload):
    files = submission.read_folder(upload, lambda name: name.endswith(".ipynb"), submission.Limits(file=1000))
    assert files.read == {"a.ipynb": b"{}", "deep/er/b.ipynb": b"{}"}
    assert set(files.unread) == {"big.ipynb", "link.ipynb", "fifo.ipynb"}
    assert files.unread["big.ipynb"].startswith("it is over")
    assert files.unread["link.ipynb"].startswith("a symbolic link, and the grader reads only regular files")
    assert files.unread["fifo.ipynb"].startswith("a FIFO")


def test_the_walk_keeps_to_its_limits(upload):
    wanted = lambda name: name.endswith(".ipynb")   # noqa: E731
    shallow = submission.read_folder(upload, wanted, submission.Limits(depth=1))
    assert "deep/er/" in shallow.unread and "deep/er/b.ipynb" not in shallow.read
    total = submission.read_folder(upload, wanted, submission.Limits(total=3))
    assert total.read == {"a.ipynb": b"{}"} and "together" in total.unread["deep/er/b.ipynb"]
    few = submission.read_folder(upload, wanted, submission.Limits(entries=2))
    assert "more than 2 files" in few.unread["..."]


def test_a_cu_file_wins_and_an_unread_one_is_its_parts_answer_with_the_reason(tmp_path):
    (tmp_path / "nb.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "%%cuda a\\nfrom cell"}]}')
    (tmp_path / "a.cu").write_bytes(b"\xef\xbb\xbffrom file\r\n")
    (tmp_path / "b.cu").symlink_to("/etc/passwd")
    found = answers.from_folder(tmp_path, ("a", "b"))
    assert found["a"] == answers.Answer("a", "from file\n", "a.cu")
    assert found["b"].problem.startswith("`b.cu` was not read: a symbolic link") and found["b"].source == ""
    assert set(found.unread) == {"b.cu"}
