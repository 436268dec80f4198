"""The two editions (scripts/build_editions.py, make editions): the student edition (the
chapter notebooks, the package's wheel, the released assignments) holds no solution's text
anywhere, in cells, outputs, metadata or the package's data, and nothing of the graded
assignments' hidden tests and solutions (assignments/hidden/); the instructor edition holds
every one (so the search below can fail).

A solution's text: the lines of its source that are neither in its own starter nor in what
the book teaches openly (its kernels, the wrong kernels of its demonstrations, the
chapters' cells before their exercises: many exercises rebuild a book kernel), and its
explanation. Another exercise's starter is no excuse: a line of this solution found there
is a leak (so no starter may be another exercise's solution)."""
import json
import re
import tomllib
import zipfile
from typing import NamedTuple

import build_editions as editions
import pytest

from tests.support import ROOT
from tiling_course import corpus, exercises, matmul, sources
from tiling_course.grading import rubric


def _lines(text):
    return {line.strip() for line in text.splitlines()}


class Secret(NamedTuple):
    """Text a student edition must not hold: a whole line (kind "line": its stripped text is
    a line of the file's), a piece anywhere ("piece"), or a regular expression ("pattern").
    Lines are looked up in a file's set of lines, not searched for one by one: the search of
    some 300 secrets through every file of an edition took a minute of regular expressions."""
    kind: str
    text: str

    def found_in(self, text, lines):
        """Whether it is in `text`, whose _lines() are `lines`."""
        if self.kind == "line":
            return self.text in lines
        return self.text in text if self.kind == "piece" else re.search(self.text, text) is not None


def taught_openly():
    # The book's kernel files ship in the wheel and the chapters show them (chapter 9 a piece at
    # a time, in its cells' outputs): an exercise that fixes one of them reveals no secret there.
    lines = set().union(*(_lines(matmul.source(k)) for k in matmul.KERNELS),
                        *(_lines(f.read_text()) for f in sources.files()),
                        *(_lines(w.source()) for w in corpus.WRONG.values()))
    for path in editions.NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if "".join(cell["source"]).startswith("## Exercises"):
                break
            lines |= _lines("".join(cell["source"]))
    return lines


def secrets():
    """{exercise id: [its solution's distinctive lines and explanation paragraphs]}."""
    book = taught_openly()
    out = {}
    for ex in exercises.EXERCISES.values():
        lines = _lines(exercises.solution(ex.id)) - _lines(exercises.starter(ex.id)) - book
        # A code line counts where it is a whole line; an explanation's paragraph anywhere.
        found = [Secret("line", line) for line in lines if len(line) >= 12]
        found += [Secret("piece", p.strip()) for p in ex.explanation.split("\n\n") if len(p.strip()) >= 12]
        out[ex.id] = found
    return out


def _strings(value):
    """Every string in a notebook's JSON: sources, outputs, metadata."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            yield "".join(value)
        for v in value:
            yield from _strings(v)


def texts(folder):
    """{file name: its text} of every file under `folder`, the wheel's members included."""
    out = {}
    for path in folder.rglob("*"):
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    text = z.read(name).decode("utf-8", "replace")
                    # TOML's strings as they read, not as escaped (and its numbers as written)
                    out[f"{path.name}/{name}"] = (text + "\n" + "\n".join(_strings(tomllib.loads(text)))
                                                  if name.endswith(".toml") else text)
        elif path.suffix == ".ipynb":
            out[str(path)] = "\n".join(_strings(json.loads(path.read_text())))
        elif path.suffix == ".toml":
            out[str(path)] = path.read_text() + "\n" + "\n".join(_strings(tomllib.loads(path.read_text())))
        elif path.is_file():
            out[str(path)] = path.read_text(errors="replace")
    return out


HIDDEN = ROOT / "assignments" / "hidden"


def hidden_secrets():
    """The graded assignments' hidden tests and solutions, as lines to look for: each
    solution's lines that the book does not teach and its starter (the release's %%cuda
    cell) does not hold, and each hidden test's seed and shapes."""
    book = taught_openly()
    found = []
    for path in sorted((HIDDEN / "solutions").glob("*.cu")):
        lines = path.read_text().split("\n")
        head = next(i for i, line in enumerate(lines) if "__global__" in line)
        brace = next(i for i in range(head, len(lines)) if lines[i].rstrip().endswith("{"))
        release = _lines("\n".join(lines[:brace + 1]))   # what the release's %%cuda cell keeps: all but the body
        found += [Secret("line", line) for line in _lines(path.read_text()) - book - release
                  if len(line) >= 12 and not line.startswith("//")]
    for parts in tomllib.loads((HIDDEN / "tests.toml").read_text()).values():
        for spec in parts.values():
            found.append(Secret("pattern", rf"\bseed\s*=\s*{spec['seed']}\b"))
            found.append(Secret("piece", str(spec["shapes"])))
    return found


def test_the_hidden_solutions_have_text_to_look_for():
    assert len(hidden_secrets()) > 3 * 10


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    editions.student(out)
    return texts(out)


def test_every_exercise_has_solution_text_to_look_for():
    found = secrets()
    assert sum(bool(v) for v in found.values()) >= len(found) - 2, [k for k, v in found.items() if not v]


@pytest.mark.slow
def test_no_solution_text_in_any_student_edition_file(student):
    assert any(name.endswith(".whl/tiling_course/exercises/student/01_naive.toml") for name in student)
    assert sum(name.endswith(".ipynb") for name in student) == len(editions.NOTEBOOKS) + len(rubric.ASSIGNMENTS)
    files = [(name, text, _lines(text)) for name, text in student.items()]
    leaks = [(ex, secret.text[:60], name) for ex, found in secrets().items() for secret in found
             for name, text, lines in files if secret.found_in(text, lines)]
    assert not leaks, leaks[:20]
    leaks = [(secret.text[:60], name) for secret in hidden_secrets() for name, text, lines in files
             if secret.found_in(text, lines)]
    assert not leaks, leaks[:20]


@pytest.mark.slow
def test_the_instructor_edition_holds_every_solution(tmp_path):
    editions.instructor(tmp_path)
    text = "\n".join(texts(tmp_path).values())
    lines = _lines(text)
    missing = [(ex, secret.text[:60]) for ex, found in secrets().items() for secret in found
               if not secret.found_in(text, lines)]
    assert not missing, missing[:10]
    assert (tmp_path / "questionbank.gift").exists() and (tmp_path / "assignments" / "source").is_dir()
    missing = [secret.text[:60] for secret in hidden_secrets() if not secret.found_in(text, lines)]
    assert not missing, missing[:10]
