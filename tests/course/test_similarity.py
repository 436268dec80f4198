"""The similarity report (tiling_course.grading.similarity, over tiling_course.grading.cudatokens): a
friend's kernel with its names, a #define and its comments changed is listed beside the
original; independent correct kernels are not, at the report's threshold; the code every
student was given (the released template, the book's kernels) makes no pair alike; and the
command reads a class from nbgrader's submitted/ folder and from Gradescope's export."""
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT, SIMILARITY_SAMPLES
from tiling_course import matmul, sources
from tiling_course.grading import answers, cudatokens, rubric, selfcheck, similarity, variants

ASSIGNMENT, VARIABLE = "g1_rect_tiles", "rect_src"
COURSE = ROOT / "assignments"
HIDDEN = COURSE / "hidden"
SAMPLES = SIMILARITY_SAMPLES
PART = rubric.part(ASSIGNMENT, VARIABLE)
NN_STUDENT = next(f"s{i}" for i in range(1000) if variants.of(PART, f"s{i}")["layout"] == "NN")


def texts(source):
    return [t.text for t in cudatokens.normalized(source)]


def solution():
    """The instructor's solution as a student would hand it in: without its note."""
    return "\n".join(line for line in (HIDDEN / "solutions" / f"{ASSIGNMENT}.cu").read_text().split("\n")
                     if not line.startswith("//"))


RENAMES = {"As": "tileA", "Bs": "tileB", "sum": "acc", "tx": "lx", "ty": "ly", "tid": "me", "threads": "nthr",
           "ph": "phase", "gr": "grow", "gc": "gcol", "r": "rr", "c": "cc"}


def friends_copy(source):
    """`source` with every variable renamed, one #define's value changed, its indentation and
    comments changed."""
    for old, new in RENAMES.items():
        source = re.sub(rf"\b{old}\b", new, source)
    source = source.replace("#define TILE_M 16", "#define TILE_M 32").replace("    ", "\t")
    return "// my own work, written alone\n" + source.replace("__syncthreads();", "__syncthreads();  // wait")


def answer(source, where="rect_src.cu"):
    return answers.Answer(VARIABLE, source, where)


@pytest.fixture(scope="module")
def given():
    """What every student was given: the released template and the book's kernels."""
    template = similarity.templates(COURSE, ASSIGNMENT)[VARIABLE]
    return [template, *(p.read_text() for p in sources.files())]


# ---------------------------------------------------------------- the token stream

def test_names_literals_comments_and_layout_do_not_change_the_stream():
    a = "#define TILE 16\n__global__ void f(float* x) {\n    int i = threadIdx.x; // mine\n    x[i] = 1.5f;\n}\n"
    b = ("\ufeff#define  BLOCK 32\r\n__global__ void g(float *out)\r\n{ /* ours */ int k=threadIdx.x;\r\n"
         "out[k]=2;}\r\n")
    assert texts(a) == texts(b)
    assert texts(a) == ["#define", "ID", "NUM", "__global__", "void", "ID", "(", "float", "*", "ID", ")", "{",
                        "int", "ID", "=", "threadIdx", ".", "x", ";", "ID", "[", "ID", "]", "=", "NUM", ";", "}"]


def test_the_stream_keeps_what_a_student_cannot_rename():
    # CUDA's built-in vectors and their components, barriers, keywords and operators.
    assert texts("threadIdx.y") != texts("threadIdx.x") != texts("blockIdx.x")
    assert texts("s.x") == texts("s.y") == ["ID", ".", "ID"]
    assert texts("__syncthreads();") != texts("__syncwarp();")
    assert texts("i += 1") != texts("i -= 1") and texts("a >>= b") == ["ID", ">>=", "ID"]
    assert texts('extern "C"') == ["extern", "STR"] and texts("'x'") == ["STR"]
    assert texts("#define M(a, b) \\\n    ((a) * (b))\nint z;")[-3:] == ["int", "ID", ";"]


def test_tokens_carry_their_source_lines():
    tokens = cudatokens.normalized("/* one\ntwo */ int a;\n\n#define N 3 \\\n  + 4\nfloat b;")
    assert [(t.text, t.line) for t in tokens] == [("int", 2), ("ID", 2), (";", 2), ("#define", 4), ("ID", 4),
                                                  ("NUM", 4), ("+", 5), ("NUM", 5), ("float", 6), ("ID", 6),
                                                  (";", 6)]


# ---------------------------------------------------------------- the report

def test_the_honest_kernels_are_correct_answers():
    """The independent kernels below are honest: each earns full marks in the self-check."""
    for path in sorted(SAMPLES.glob("rect_*.cu")):
        score = selfcheck.grade(ASSIGNMENT, VARIABLE, path.read_text(), NN_STUDENT)
        assert score.points == 10, (path.name, score.feedback)


def test_a_friends_copy_is_listed(given):
    report = similarity.compare(ASSIGNMENT, VARIABLE, {"alice": answer(solution()),
                                                        "bob": answer(friends_copy(solution()), "cell 5 of g1.ipynb")},
                                given)
    (pair,) = report.pairs
    assert (pair.first.who, pair.second.who) == ("alice", "bob")
    assert pair.similarity >= similarity.THRESHOLD and pair.similarity == 1.0
    assert pair.tokens > 100
    for source, spans in zip((solution(), friends_copy(solution())), pair.lines):   # the loads are shared code
        loads = [n for n, line in enumerate(source.split("\n"), 1) if re.search(r"\[\w+\]\[\w+\] = \(", line)]
        assert len(loads) == 4 and all(any(a <= n <= b for a, b in spans) for n in loads), (spans, loads)
    text = report.markdown()
    assert "| alice (rect_src.cu) |" in text and "| bob (cell 5 of g1.ipynb) |" in text and "100%" in text


def disguised(source, disguise):
    """`source` with more changed than a friend's copy changes."""
    if disguise == "own layout":     # only the student's layout, as a student writes it
        return re.sub(r"#if defined\(LAYOUT_\w+\)\n.*?\n#else\n(.*?)\n#endif", r"\1", source, flags=re.S)
    if disguise == "if/else":
        return re.sub(r"(\w+\[r\]\[c\]) = \((.*?)\) \? (.*?) : 0\.0f;", r"if (\2) \1 = \3; else \1 = 0.0f;", source)
    a = source.index("        for (int e = tid; e < TILE_M * TILE_K")     # the two loads swapped
    b = source.index("        for (int e = tid; e < TILE_K * TILE_N")
    end = source.index("        __syncthreads();")
    return source[:a] + source[b:end] + source[a:b] + source[end:]


def copy_pair(given, source):
    report = similarity.compare(ASSIGNMENT, VARIABLE, {"alice": answer(solution()),
                                                        "bob": answer(friends_copy(source))}, given)
    return [(p.first.who, p.second.who, round(p.similarity * 100)) for p in report.pairs]


@pytest.mark.parametrize("disguise", ["own layout", "if/else", "loads swapped"])
def test_a_copy_with_more_changed_is_still_listed(given, disguise):
    source = disguised(solution(), disguise)
    assert source != solution()
    [(first, second, _)] = copy_pair(given, source)
    assert (first, second) == ("alice", "bob")


def test_the_guide_and_the_module_say_what_the_report_measures(given):
    """The numbers of book/instructor.md's "Near-copies" and of similarity.py's comments, measured."""
    guide = " ".join((ROOT / "book" / "instructor.md").read_text().split())
    module = " ".join(re.sub(r"\n\s*#", " ", Path(similarity.__file__).read_text()).split())
    assert copy_pair(given, solution())[0][2] == 100
    layout = copy_pair(given, disguised(solution(), "own layout"))[0][2]
    ifelse = copy_pair(given, disguised(solution(), "if/else"))[0][2]
    honest = similarity.compare(ASSIGNMENT, VARIABLE, independent_kernels(), given, threshold=0.0001).pairs
    most = max(round(p.similarity * 100) for p in honest)
    bare = similarity.compare(ASSIGNMENT, VARIABLE, independent_kernels(), given[:1], threshold=0.0001).pairs
    book = next(p for p in bare if (p.first.who, p.second.who) == ("solution", "book tiled_bounds"))
    assert (f"a friend's copy with every variable renamed, a `#define` changed and new comments shares 100%; one also "
            f"cut down to its own layout {layout}%; one with its conditional loads rewritten as `if`/`else` {ifelse}%. "
            f"Independent correct kernels (the instructor's solution and two written differently) share at most "
            f"{most}%.") in guide
    assert (f"shares 100%; one also cut down to its own layout {layout}%, one with its ternaries rewritten as if/else "
            f"{ifelse}%; independent correct kernels share {most}% at most "
            f"({round(book.similarity * 100)}% before the book's kernels are subtracted") in module
    assert (f"the instructor's own g1 solution holds {round(book.shares[1] * 100)}% of the book's `tiled_bounds` "
            f"({round(book.shares[0] * 100)}% of its own code)") in module
    assert f"(`--threshold {similarity.THRESHOLD:g}`, the default)" in guide


def independent_kernels():
    """Correct kernels written apart from each other: the instructor's g1 solution, the two
    in tests/support/similarity_samples, and the book's tiled kernel for any shape (a2's answer;
    tests/support/grading_samples/correct.cu is the same kernel), as students might hand them in."""
    book = matmul.source("tiled_bounds").replace("matmul_tiled_bounds", "matmul_rect")
    return {"solution": answer(solution()), "book tiled_bounds": answer(book),
            **{p.stem: answer(p.read_text()) for p in sorted(SAMPLES.glob("rect_*.cu"))}}


def test_independent_kernels_are_not_listed(given):
    report = similarity.compare(ASSIGNMENT, VARIABLE, independent_kernels(), given)
    assert report.pairs == ()
    # The book's kernel is all given code: nothing of its own to compare.
    assert report.not_compared == (("book tiled_bounds", "nothing beyond the template and the book's kernels"),)
    assert {k.who for k in report.compared} == {"solution", "rect_row_loads", "rect_helpers"}


def test_without_the_given_code_honest_pairs_would_be_listed(given):
    """Why the book's kernels are subtracted: the instructor's solution builds on the book's
    tiled kernel, as students are taught to, and with only the template subtracted that pair
    is over the threshold."""
    report = similarity.compare(ASSIGNMENT, VARIABLE, independent_kernels(), given[:1])
    assert ("solution", "book tiled_bounds") in {(p.first.who, p.second.who) for p in report.pairs}


def test_the_template_and_missing_answers_are_not_compared(given):
    template = given[0]
    report = similarity.compare(ASSIGNMENT, VARIABLE, {
        "untouched": answer(template), "absent": None, "unreadable": answers.Answer(VARIABLE, "", "x", problem="bad"),
        "alice": answer(solution()), "bob": answer(friends_copy(solution()))}, given)
    assert dict(report.not_compared) == {"untouched": "nothing beyond the template and the book's kernels",
                                         "absent": "no answer", "unreadable": "bad"}
    assert len(report.pairs) == 1
    assert "Not compared: untouched (nothing beyond" in report.markdown()


def test_the_template_is_the_released_cell():
    template = similarity.templates(COURSE, ASSIGNMENT)[VARIABLE]
    assert "extern \"C\" __global__ void matmul_rect(" in template and "#ifndef TILE_K" in template
    assert "__shared__" not in template and "SOLUTION" not in template


# ---------------------------------------------------------------- the command

def student_notebook(source):
    nb = json.loads((COURSE / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    for cell in nb["cells"]:
        if "".join(cell["source"]).startswith(f"%%cuda {VARIABLE}"):
            cell["source"] = f"%%cuda {VARIABLE}\n{source}"
    return json.dumps(nb)


CLASS = {   # what each student hands in: their file's name and text
    "alice": (f"{ASSIGNMENT}.ipynb", lambda: student_notebook(solution())),
    "bob": (f"{VARIABLE}.cu", lambda: friends_copy(solution())),
    "carol": (f"{VARIABLE}.cu", lambda: (SAMPLES / "rect_row_loads.cu").read_text()),
    "dave": (f"{ASSIGNMENT}.ipynb", lambda: student_notebook((SAMPLES / "rect_helpers.cu").read_text())),
}


@pytest.fixture
def course(tmp_path):
    """An nbgrader course folder with the class in submitted/."""
    shutil.copytree(COURSE / "source" / ASSIGNMENT, tmp_path / "source" / ASSIGNMENT)
    for student, (name, text) in CLASS.items():
        folder = tmp_path / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / name).write_text(text())
    return tmp_path


def listed(markdown):
    """The pairs of a report's table, as sets of the two names' first words."""
    return [{cells[3].split()[0], cells[5].split()[0]} for cells in
            (line.split("|") for line in markdown.splitlines() if re.match(r"\| \d+%", line))]


def test_the_command_reports_nbgraders_submitted_folder(course, capsys):
    out = course / "similar.md"
    assert similarity.main([ASSIGNMENT, "--course", str(course), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed == out.read_text()
    assert printed.startswith(f"# Similarity report: {ASSIGNMENT}")
    assert "4 submissions compared, 1 pairs at or above 50%" in printed
    assert listed(printed) == [{"alice", "bob"}]
    assert "alice (cell 6 of g1_rect_tiles.ipynb)" in printed   # where alice's answer was


def test_the_command_runs_as_a_module(course):
    run = subprocess.run([sys.executable, "-m", "tiling_course.grading", "similarity", ASSIGNMENT,
                          "--threshold", "0.01"], cwd=course, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert {"alice", "bob"} in listed(run.stdout)


def test_the_command_reports_a_gradescope_export(course, tmp_path, capsys):
    export = tmp_path / "submissions.zip"
    metadata = "".join(f"submission_{i}:\n  :submitters:\n  - :name: {s.title()}\n    :sid: '{i}'\n"
                       f"    :email: {s}@example.edu\n  :score: 10.0\n" for i, s in enumerate(CLASS, 100))
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("assignment_1_export/submission_metadata.yml", metadata)
        for i, (name, text) in enumerate(CLASS.values(), 100):
            z.writestr(f"assignment_1_export/submission_{i}/{name}", text())
        z.writestr("assignment_1_export/submission_100/data.bin", b"\0" * 1000)   # not read
    assert similarity.main([ASSIGNMENT, "--course", str(course), "--gradescope", str(export)]) == 0
    printed = capsys.readouterr().out
    assert listed(printed) == [{"submission_100", "submission_101"}]
    assert "submission_100 (Alice, 100, alice@example.edu)" in printed
    # The folder it unpacks to reads the same.
    with zipfile.ZipFile(export) as z:
        z.extractall(tmp_path / "unpacked")
    assert similarity.main([ASSIGNMENT, "--course", str(course), "--gradescope", str(tmp_path / "unpacked")]) == 0
    assert capsys.readouterr().out == printed


@pytest.mark.parametrize("args, message", [
    (["a2_barriers_boundaries", "--course", "{course}"], "is a practice assignment"),
    (["g9", "--course", "{course}"], "no assignment 'g9'"),
    ([ASSIGNMENT, "--course", "{empty}", "--gradescope", "{course}/submitted"],
     "source/g1_rect_tiles/g1_rect_tiles.ipynb not found"),
    ([ASSIGNMENT, "--course", "{bare}"], "no submissions of g1_rect_tiles in"),
    ([ASSIGNMENT, "--course", "{course}", "--gradescope", "{course}/source/g1_rect_tiles/g1_rect_tiles.ipynb"],
     "neither a folder nor a zip"),
    ([ASSIGNMENT, "--course", "{course}", "--gradescope", "{empty}"], "no submission_* folders"),
    ([ASSIGNMENT, "--course", "{course}", "--threshold", "50"], "in (0, 1]"),
])
def test_bad_input_gets_a_clear_error(course, tmp_path, capsys, args, message):
    (tmp_path / "empty").mkdir()
    bare = tmp_path / "bare"    # a course with its source and nothing submitted
    shutil.copytree(course / "source", bare / "source")
    with pytest.raises(SystemExit) as e:
        similarity.main([a.format(course=course, empty=tmp_path / "empty", bare=bare) for a in args])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_the_benchmark_class_lists_its_copies_and_nothing_else(tmp_path):
    """benchmarks/similarity.py's synthetic class (which times the report for 300): the
    students who share a kernel are listed, all of them, and no two of different kernels."""
    bench = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "similarity.py"), "--students", "15",
                            "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr
    assert "15 submissions (15 compared, 0 not), 105 pairs, 30 listed at 50%" in bench.stdout   # 3 kernels x C(5, 2)
    for pair in listed((tmp_path / "course" / "similarity.md").read_text()):
        a, b = (int(s.lstrip("s")) for s in pair)
        assert a % 3 == b % 3, pair
