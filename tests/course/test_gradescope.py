"""The Gradescope export (tiling_course.grading.gradescope): a graded assignment's autograder zip
follows Gradescope's specification, and a sample class is graded through its contract:
each submission in a fresh /autograder layout (emulated under a temporary folder:
source/ from the zip, submission/, submission_metadata.json, results/), run_autograder
run there as Gradescope runs it, results/results.json read back. setup.sh is not run
(it installs packages with apt-get and pip, from the network); this environment's Python
stands in for the /autograder/venv it makes, and the session's warm cache for the one it
builds."""
import json
import sys
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.gradescope_contract import ASSIGNMENT, metadata, run_autograder
from tiling_course.grading import judge, rubric, variants

pytestmark = pytest.mark.slow   # each test builds the autograder's zip, which holds a wheel

VARIABLE = "rect_src"
HIDDEN = ROOT / "assignments" / "hidden"


def test_the_zip_follows_gradescopes_specification(autograder, tmp_path):
    with zipfile.ZipFile(autograder) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder", "assignment.json", "requirements.txt", "hidden/tests.toml"} <= names
        for script in ("setup.sh", "run_autograder"):
            assert z.getinfo(script).external_attr >> 16 & 0o111, f"{script} is not executable"
            assert z.read(script).startswith(b"#!/usr/bin/env bash")
        assert b"bubblewrap" in z.read("setup.sh")
        hidden = tomllib.loads(z.read("hidden/tests.toml").decode())
        assert set(hidden) == {ASSIGNMENT}, "the zip holds another assignment's hidden tests"
        pins = z.read("requirements.txt").decode().split()
        assert pins and all("==" in p for p in pins) and any(p.startswith("numpy==") for p in pins)
        wheels = [n for n in names if n.startswith("wheel/") and n.endswith(".whl")]
        assert len(wheels) == 1
        assert not any("solution" in n for n in names)
        z.extract(wheels[0], tmp_path)   # not beside the zip, which the session's other modules read
    with zipfile.ZipFile(tmp_path / wheels[0]) as w:
        inside = w.namelist()
    assert any(n.endswith("tiling_course/grading/judge.py") for n in inside)
    assert not any("hidden" in n or n.endswith("tests.toml") for n in inside), "the wheel holds hidden tests"


def with_kernel(nb, source, python=()):
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        if "".join(cell["source"]).startswith(f"%%cuda {VARIABLE}"):
            cell["source"] = f"%%cuda {VARIABLE}\n{source}"
    nb["cells"] += [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": p}
                    for p in python]
    return nb


def class_of(nb):
    """{student: (files, metadata, points, what the feedback says)}: a sample class."""
    part = rubric.part(ASSIGNMENT, VARIABLE)
    own = lambda sid: judge.solution(HIDDEN, ASSIGNMENT, variants.of(part, sid))   # noqa: E731
    other = next(f"s{n}" for n in range(100, 1000) if variants.of(part, f"s{n}")["layout"]
                 != variants.of(part, "s1")["layout"])
    racy = own("s5").replace("            sum += As[ty][i] * Bs[i][tx];\n        __syncthreads();",
                             "            sum += As[ty][i] * Bs[i][tx];")
    return {
        "s1": ({f"{ASSIGNMENT}.ipynb": with_kernel(nb, own("s1"))}, metadata("s1"), 10, ["full marks"]),
        "s2": ({f"{VARIABLE}.cu": own("s2@example.edu")}, metadata("s2", key="email"), 10, ["full marks", "email"]),
        other: ({f"{VARIABLE}.cu": own("s1")}, metadata(other), 0, ["wrong values", f"`{other}`"]),
        "s4": ({f"{ASSIGNMENT}.ipynb": with_kernel(nb, own("s4"), ["import os\nos._exit(1)"])}, metadata("s4"), 10,
               ["full marks"]),
        "s5": ({f"{VARIABLE}.cu": racy}, metadata("s5"), None, ["racy", "SharedMemoryRaceError"]),
        "s6": ({"notes.txt": "I could not do it"}, metadata("s6"), 0, ["no kernel"]),
    }


@pytest.fixture(scope="module")
def graded_class(autograder, grader_warm_cache, released, tmp_path_factory):
    students = class_of(released(ASSIGNMENT))
    base = tmp_path_factory.mktemp("gradescope")

    def one(item):
        sid, (files, meta, *_) = item
        return sid, run_autograder(autograder, base / sid / "autograder", files, meta, grader_warm_cache)

    with ThreadPoolExecutor(3) as pool:   # Gradescope grades submissions in parallel containers
        return students, dict(pool.map(one, students.items()))


def test_a_sample_class_is_graded_through_the_contract(graded_class):
    students, runs = graded_class
    for sid, (_, _, points, needles) in students.items():
        out, results = runs[sid]
        assert out.returncode == 0 and results is not None, (sid, out.stderr[-3000:])
        assert set(results) >= {"score", "output", "tests", "visibility"}
        assert isinstance(results["score"], float) and results["score"] == sum(t["score"] for t in results["tests"])
        (test,) = results["tests"]
        assert test["max_score"] == 10 and test["name"].endswith(f"(`{VARIABLE}`)")
        assert test["status"] == ("passed" if test["score"] == 10 else "failed")
        assert test["output_format"] == "md" and results["output_format"] == "md"
        if points is not None:
            assert results["score"] == points, (sid, test["output"])
        else:
            assert results["score"] < 10, (sid, test["output"])
        text = results["output"] + test["output"]
        for needle in needles:
            assert needle in text, (sid, needle, text)
        assert "tests run in a sandbox" in results["output"]


def test_without_the_sandbox_nothing_is_graded(autograder, grader_warm_cache, tmp_path):
    part = rubric.part(ASSIGNMENT, VARIABLE)
    files = {f"{VARIABLE}.cu": judge.solution(HIDDEN, ASSIGNMENT, variants.of(part, "s1"))}
    out, results = run_autograder(autograder, tmp_path / "autograder", files, metadata("s1"), grader_warm_cache,
                                  path=str(Path(sys.executable).parent))
    assert out.returncode == 1
    assert results["score"] == 0 and results["tests"] == []
    assert "Not graded" in results["output"] and "bubblewrap" in results["output"]
