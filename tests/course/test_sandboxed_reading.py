"""Reading a submission for grading inside a sandbox (tiling_course.grading.reading, issue 41,
item 3): the sandbox sees the submission alone, read-only, so a link to a file the grader
can read leads nowhere; what the reader sends back is parsed strictly, and a reader that
fails or sends back something else (too much, not JSON, the wrong shape) is the
submission's 0 with its reason, on both grading paths, never a crash of the grader."""
import json
import os
import shutil

import pytest

from tests.support import ROOT
from tiling_course.grading import gradescope, reading, sandbox

pytestmark = pytest.mark.slow   # it starts the grader's sandbox
ASSIGNMENT, VARIABLE = "g1_rect_tiles", "rect_src"
SECRET = "the grader's own file: seed = 4242, shapes = [[17, 3, 5]]"


@pytest.fixture(scope="module")
def box():
    if not all(shutil.which(tool) for tool in ("bwrap", "prlimit", "setpriv")):
        pytest.skip("no bubblewrap (scripts/install_sandbox.sh installs it)")
    return sandbox.Bubblewrap()


@pytest.fixture
def secret(tmp_path):
    """A file the grader can read, outside the submission."""
    path = tmp_path / "grader" / "tests.toml"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


def hostile(code):
    """A reader that runs `code` (Python) in the reading sandbox instead of the grader's."""
    return ["python", "-c", code]


def test_a_link_to_a_file_the_grader_can_read_is_not_read(box, secret, tmp_path):
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / f"{VARIABLE}.cu").symlink_to(secret)
    (sub / "notes.ipynb").symlink_to(os.path.relpath(secret, sub))
    (sub / "sub").symlink_to(secret.parent, target_is_directory=True)
    found = reading.answers(box, sub, (VARIABLE,))
    assert found[VARIABLE].source == ""
    assert found[VARIABLE].problem.startswith(f"`{VARIABLE}.cu` was not read: a symbolic link")
    assert set(found.unread) == {f"{VARIABLE}.cu", "notes.ipynb"}
    assert "seed = 4242" not in repr(dict(found)) + repr(found.unread) + found.log


def test_a_reader_that_follows_links_finds_nothing_behind_them(box, secret, tmp_path):
    """The sandbox is the second wall: a reader that opened the link would find no file
    behind it, since the sandbox sees the submission alone (and neither the grader's
    files nor /etc)."""
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / f"{VARIABLE}.cu").symlink_to(secret)
    (sub / "passwd.cu").symlink_to("/etc/passwd")
    naive = hostile("import os, sys\n"
                    "for name in ('rect_src.cu', 'passwd.cu', sys.argv[-1]):\n"
                    "    print(name, os.path.exists(name), file=sys.stderr)\n"
                    "print(open('rect_src.cu').read())")
    out = box.read([*naive, str(secret)], sub, reading._limits(1 << 20))
    assert out.exit_code == 1 and b"seed = 4242" not in out.result
    assert "rect_src.cu False\npasswd.cu False\n" in out.output and f"{secret} False" in out.output
    assert "FileNotFoundError" in out.output and "seed = 4242" not in out.output


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root only in a container")
def test_run_as_root_the_reader_reads_roots_files_and_overrides_no_permission(box, tmp_path):
    """Gradescope unpacks submissions as root: the reader, uid 0 with no capability,
    reads a file only root may read, and not another user's private file."""
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "a.cu").write_text("int mine;\n")
    (sub / "a.cu").chmod(0o600)
    (sub / "b.cu").write_text("int theirs;\n")
    os.chown(sub / "b.cu", 4321, 4321)
    (sub / "b.cu").chmod(0o600)
    found = reading.answers(box, sub, ("a", "b"))
    assert found["a"].source == "int mine;\n"
    assert found["b"].problem == "`b.cu` was not read: it could not be read (Permission denied)."
    capabilities = box.read(["sh", "-c", "id -u; grep ^Cap /proc/self/status"], sub, reading._limits(1 << 20))
    lines = capabilities.result.decode().split("\n")
    assert lines[0] == "0" and all(line.split()[1] == "0" * 16 for line in lines[1:] if line)


@pytest.mark.parametrize("code, why", [
    ("print('x' * (5 << 20))", "the reader wrote more than 4 MiB of results, so the sandbox stopped it"),
    ("print('{\"answers\": {')", "the reader's result is not JSON"),
    ("import sys; sys.stdout.buffer.write(b'\\xff\\xfe')", "the reader's result is not JSON"),
    ("print('[' * 100000 + ']' * 100000)", "the reader's result is not JSON"),
    ("print('{\"answers\": {}, \"unread\": {}} {}')", "the reader's result is not JSON"),
    ("print('{\"answers\": {}}')", "the reader's result is not of its shape (the result is not an object of"),
    ("import json; print(json.dumps({'answers': {'rect_src': {'source': 1, 'where': '', 'options': [], "
     "'problem': ''}}, 'unread': {}}))", "the reader's result is not of its shape (a source is not a string"),
    ("import json; print(json.dumps({'answers': {'other': {}}, 'unread': {}}))", "which is not a part"),
    ("import json; print(json.dumps({'answers': {}, 'unread': {'../../x': 'y'}}))",
     "is not a path inside the submission"),
    ("import json; print(json.dumps({'answers': {'rect_src': {'source': 'x' * 70000, 'where': '', 'options': [], "
     "'problem': ''}}, 'unread': {}}))", "a source is not a string of at most 64 KiB"),
    ("import sys; sys.exit(3)", "the reader exited with status 3"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "the reader was ended by SIGSEGV"),
    ("import sys; sys.stderr.write('x' * (1 << 20))", "the reader printed more than 64 KiB"),
])
def test_a_failed_or_hostile_reading_is_each_parts_0_with_its_reason(box, tmp_path, monkeypatch, code, why):
    sub = tmp_path / "submission"
    sub.mkdir()
    monkeypatch.setattr(reading, "READER", hostile(code))
    found = reading.answers(box, sub, (VARIABLE,))
    assert found[VARIABLE].source == "" and why in found[VARIABLE].problem, found[VARIABLE].problem
    assert found[VARIABLE].problem.startswith("the submission could not be read (")
    with pytest.raises(reading.Unreadable, match="the reader"):
        reading.files(box, sub)


def test_a_reader_that_hangs_is_stopped(box, tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "READER", hostile("import time; time.sleep(60)"))
    monkeypatch.setattr(reading, "_limits", lambda result: sandbox.Limits(wall=3, result=result))
    found = reading.answers(box, tmp_path, (VARIABLE,))
    assert "the reader did not finish within 3 s" in found[VARIABLE].problem


@pytest.mark.parametrize("result, why", [
    ({"read": {"../escape.ipynb": ""}, "unread": {}}, "is not a path inside the submission"),
    ({"read": {"/etc/cron.d/x": ""}, "unread": {}}, "is not a path inside the submission"),
    ({"read": {"a.ipynb": "bm90IGpzb24="}, "unread": {}}, "'a.ipynb' is not a notebook"),
    ({"read": {"a.txt": "not base64!"}, "unread": {}}, "a file's bytes are not base64"),
    ({"read": {}, "unread": {"a.ipynb": 3}}, "a reason is not a string"),
])
def test_the_files_for_nbgrader_are_parsed_as_strictly(result, why):
    with pytest.raises(ValueError, match=why.replace("(", r"\(")):
        reading.parse_files(result)


def test_nbgraders_copy_is_read_in_the_sandbox_and_a_failure_is_a_stand_in_with_why(box, tmp_path, monkeypatch,
                                                                                   secret):
    """The nbgrader path: each submission's copy comes from the reading sandbox; one
    whose reading fails (here a hostile result that names a path outside its folder) gets
    the released notebook, graded 0 with the reason, and the others are copied."""
    class Course:
        assignment_id = ASSIGNMENT
        submitted_directory, release_directory = "submitted", "release"

        def format_path(self, kind, student, assignment):
            return str(tmp_path / kind / student / assignment)

    nb = {"cells": [{"cell_type": "code", "id": "a", "source": f"%%cuda {VARIABLE}\nint x;", "metadata": {},
                     "outputs": [], "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for student in ("good", "bad"):
        folder = tmp_path / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_bytes(b"\xef\xbb\xbf" + json.dumps(nb).encode())
        (folder / "data.txt").symlink_to(secret)
    (tmp_path / "submitted" / "bad" / ASSIGNMENT / "bad").write_text("")
    (tmp_path / "release" / "." / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "release" / "." / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(reading, "READER", hostile(
        "import json, os, sys\n"
        "if os.path.exists('bad'): print(json.dumps({'read': {'../../good/x.ipynb': ''}, 'unread': {}}))\n"
        "else: from tiling_course.grading.reading import main; sys.exit(main(['files']))"))
    dest = tmp_path / "copy"
    from tiling_course.grading import autograde  # (here: it imports nbgrader, 60 MB in every test process)
    autograde._mirror(Course(), ["bad", "good"], dest, box, jobs=2)
    good = dest / "good" / ASSIGNMENT
    assert sorted(p.name for p in good.iterdir()) == [f"{ASSIGNMENT}.ipynb"]
    assert json.loads((good / f"{ASSIGNMENT}.ipynb").read_text()) == nb
    stand_in = json.loads((dest / "bad" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    why = stand_in["metadata"]["tiling_course"]["unread"][f"{ASSIGNMENT}.ipynb"]
    assert why.startswith("the grader could not read the submission in its sandbox (the reader's result is not of "
                          "its shape (a file's name '../../good/x.ipynb' is not a path inside the submission))")
    assert not (dest / "good" / "x.ipynb").exists()


def test_gradescope_grades_a_hostile_reading_0_with_its_reason(grader_warm_cache, tmp_path, monkeypatch):
    """The Gradescope path, in this process: a reader whose result is oversized is the
    submission's 0 with the reason, in a results.json Gradescope can show."""
    root = tmp_path / "autograder"
    (root / "source" / "hidden").mkdir(parents=True)
    (root / "source" / "assignment.json").write_text(json.dumps({"assignment": ASSIGNMENT}))
    shutil.copy(ROOT / "assignments" / "hidden" / "tests.toml", root / "source" / "hidden")
    (root / "source" / "warm-cache").symlink_to(grader_warm_cache)
    (root / "submission").mkdir()
    (root / "submission" / f"{VARIABLE}.cu").write_text("int x;\n")
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": "s1"}]}))
    monkeypatch.setattr(reading, "READER", hostile("print('x' * (5 << 20))"))
    assert gradescope.run(root) == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and gradescope.check(root) == 0
    first = next(line for line in results["tests"][0]["output"].splitlines() if line.startswith(("✓", "✗")))
    assert first.startswith(f"✗ No kernel for `{VARIABLE}`: the submission could not be read (the reader wrote more "
                            "than 4 MiB of results, so the sandbox stopped it)"), first
