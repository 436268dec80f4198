"""Autograding a class with nbgrader, without running a line of the students' notebooks:

    cd assignments && python -m tiling_course.grading autograde ASSIGNMENT [--jobs N] [--hidden DIR]
                                                                [--warm DIR] [nbgrader's options]

is `nbgrader autograde ASSIGNMENT`, with nbgrader's configuration (nbgrader_config.py),
options (--force, --student, --CourseDirectory.student_id_exclude, ...), gradebook,
autograded notebooks and feedback, but one step replaced. nbgrader executes each notebook
in a Jupyter kernel with the grader's rights: a cell that patches the grading function, reads
the solutions or calls os._exit decides the grade. Here no kernel starts. nbgrader still
sanitizes the notebook (its outputs cleared, grade and locked cells restored from the
gradebook, deleted grade cells put back); then GradeInSandbox, in Execute's place, has
tiling_course.grading.answers read the CUDA of each part out of it as text and tiling_course.grading.judge
grade that CUDA in a bubblewrap sandbox (tiling_course.grading.sandbox); each graded cell gets the
part's feedback and score as its output, and RecordScores writes the scores into the
gradebook by grade id, whatever the notebook's cells say. The course's nbgrader_config.py
sets these steps (PREPROCESSORS), so a plain `nbgrader autograde` grades the same way, one
submission at a time; this command refuses a configuration that would execute notebooks.
A graded assignment's hidden tests are read from --hidden (default: hidden/ beside source/).

If the sandbox cannot start, nothing is graded: the command says why and exits with
status 2.

N submissions are graded at once (default: one per core): N worker processes each take
the next submission, and hold an exclusive lock on nbgrader's gradebook (one SQLite file,
which gives up on "database is locked") from opening a Gradebook to closing it.
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell, new_output
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from . import answers, reading
from .rubric import ASSIGNMENTS
from .sandbox import SandboxUnavailable

_judge = None    # the Judge of this process (made on first use; the workers inherit it)


def judge(hidden=None, warm=None):
    """This process's Judge (SandboxUnavailable if the sandbox cannot start)."""
    global _judge
    if _judge is None:
        from .judge import Judge
        _judge = Judge(hidden=hidden if hidden and Path(hidden).is_dir() else None, warm=warm)
    return _judge


class GradeInSandbox(NbGraderPreprocessor):
    """In place of nbgrader's Execute: the notebook's CUDA graded in the sandbox
    (tiling_course.grading.judge), each graded cell given its part's feedback and score as output.
    Nothing in the notebook is executed."""

    hidden = Unicode("hidden", help="The graded assignments' hidden tests (relative to the course directory)"
                     ).tag(config=True)
    warm = Unicode("", help="The grader's warm compile cache (default: one under ~/.cache/tiling-course)"
                   ).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        assignment = ASSIGNMENTS.get(info["assignment"])
        if assignment is None:
            raise ValueError(f"{info['assignment']} is not one of the course's assignments "
                             f"({', '.join(ASSIGNMENTS)})")
        unread = nb.metadata.get("tiling_course", {}).get("unread") or {}   # _stand_in's: the file was not read
        found = {} if unread else answers.from_notebook(nb, assignment.parts, name=f"{info['notebook']}.ipynb")
        try:
            result = judge(self.hidden, self.warm or None).grade(assignment.id, found, info["student"], unread=unread)
        except Exception as e:   # the grader's own failure: this submission still gets a grade and a reason
            self.log.exception("grading %s failed", info["student"])
            from .judge import not_graded
            result = not_graded(assignment.id, info["student"], f"the grader failed on this submission "
                                f"({type(e).__name__}); your instructor has its log and can grade it again.")
        self.log.info("%s: %g / %g (%s)", info["student"], result.points, result.out_of,
                      "; ".join(f"{v}: {s.verdict}" for v, s in result.scores.items()))
        if result.log:
            self.log.debug("%s's sandbox: %s", info["student"], result.log)
        resources["sandbox_scores"] = {f"grade_{v}": s.points for v, s in result.scores.items()}
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
            variable = grade_id.removeprefix("grade_")
            if cell.cell_type == "code" and grade_id.startswith("grade_") and variable in result.scores:
                score, section = result.scores[variable], result.sections[variable]
                cell.outputs = [new_output("display_data", {"text/markdown": section, "text/plain": section}),
                                new_output("execute_result", {"text/plain": f"{score.points:g}"}, execution_count=1)]
        summary = result.feedback.split("\n## ")[0]
        nb.cells.insert(0, new_markdown_cell(summary, metadata={"tags": ["grader-summary"]}))
        return nb, resources


class RecordScores(NbGraderPreprocessor):
    """After SaveAutoGrades: the sandbox's scores written into the gradebook by grade id,
    whatever the notebook's cells say."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for grade_id, points in resources.get("sandbox_scores", {}).items():
                grade = gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"])
                grade.auto_score = points
                grade.needs_manual_grade = grade.manual_score is not None
            gb.db.commit()
        return nb, resources


# nbgrader's autograde steps with GradeInSandbox in place of Execute and RecordScores after
# SaveAutoGrades: assignments/nbgrader_config.py sets them, so that a plain `nbgrader
# autograde` never executes a notebook either.
PREPROCESSORS = ["tiling_course.grading.autograde.GradeInSandbox", "nbgrader.preprocessors.IgnorePattern",
                 "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
                 "nbgrader.preprocessors.SaveAutoGrades", "tiling_course.grading.autograde.RecordScores",
                 "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata"]


def _configure(app):
    """Refuse a configuration that would execute notebooks: the autograde steps must be
    PREPROCESSORS (nbgrader_config.py), whose GradeInSandbox replaces Execute."""
    from nbgrader.converters import Autograde
    configured = app.config.Autograde.get("autograde_preprocessors")
    steps = list(configured if configured is not None else Autograde.class_traits()["autograde_preprocessors"]
                 .default())
    names = [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}" for s in steps]
    if "tiling_course.grading.autograde.GradeInSandbox" not in names or any(n.endswith(".Execute") for n in names):
        app.fail("nbgrader is configured to execute the notebooks; the course's nbgrader_config.py sets "
                 "c.Autograde.autograde_preprocessors = tiling_course.grading.autograde.PREPROCESSORS. Use it.")


def autograde(nbgrader_args, jobs, hidden=None, warm=None):
    """`nbgrader autograde` with nbgrader_args, the notebooks graded in the sandbox, over
    `jobs` processes; returns the exit status (2: the sandbox cannot start)."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    app = AutogradeApp.instance()
    app.initialize(list(nbgrader_args))
    if len(app.extra_args) == 1 and not app.coursedir.assignment_id:
        app.coursedir.assignment_id = app.extra_args[0]
    elif len(app.extra_args) > 1 or not app.coursedir.assignment_id:
        app.fail("Give one assignment id (and, if you like, nbgrader's options)")
    _configure(app)
    try:
        judge(hidden or Path(app.coursedir.root) / app.config.GradeInSandbox.get("hidden", "hidden"), warm)
    except SandboxUnavailable as e:
        app.log.error("Not grading: %s", e)
        return 2
    students = _submitted(app.coursedir)
    mirror = tempfile.TemporaryDirectory(prefix="autograde-submitted-")
    app.coursedir.submitted_directory = _mirror(app.coursedir, students, Path(mirror.name), judge().box, jobs, app.log)
    with mirror:
        return _autograde(app, students, jobs)


def _mirror(coursedir, students, dest, box, jobs=1, log=None):
    """A copy of the students' submissions in dest/ that nbgrader grades in place of
    submitted/ (returned, as nbgrader's submitted_directory): each submission read by
    tiling_course.grading.reading in a sandbox that sees it alone (the walk follows no link and
    reads only regular files within limits; a notebook's byte-order mark is dropped),
    `jobs` at a time. A notebook it did not read becomes one without cells that says why
    in its metadata, so the student gets 0 with the reason; a submission whose reading
    failed (or sent back what the reader never writes) has each released notebook so
    replaced, with that reason."""
    from concurrent.futures import ThreadPoolExecutor
    released = Path(coursedir.format_path(coursedir.release_directory, ".", coursedir.assignment_id))
    notebooks = sorted(p.relative_to(released).as_posix() for p in released.rglob("*.ipynb")) or [
        f"{coursedir.assignment_id}.ipynb"]

    def one(student):
        source = Path(coursedir.format_path(coursedir.submitted_directory, student, coursedir.assignment_id))
        target = dest / student / coursedir.assignment_id
        try:
            files = reading.files(box, source)
            target.mkdir(parents=True)
            for path, data in files.read.items():
                (target / path).parent.mkdir(parents=True, exist_ok=True)
                (target / path).write_bytes(data)
            stand_ins(target, {path: why for path, why in files.unread.items() if path.endswith(".ipynb")})
        except Exception as e:   # the reading failed, or its result could not be laid out: a 0 with why
            if log is not None:
                log.error("reading %s's submission failed: %s\n%s", student, e, getattr(e, "log", ""))
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            why = (f"the grader could not read the submission in its sandbox ({e})" if isinstance(e, reading.Unreadable)
                   else f"the grader could not copy the submission's files ({type(e).__name__})")
            stand_ins(target, dict.fromkeys(notebooks, why))

    def stand_ins(target, unread):
        for path, why in unread.items():
            (target / path).parent.mkdir(parents=True, exist_ok=True)
            (target / path).write_text(json.dumps(_stand_in(coursedir, path, {path: why})))

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, students))
    return str(dest)


def _stand_in(coursedir, path, unread):
    """The notebook graded in place of one that was not read: the released one (nbgrader
    puts grade cells back beside the cells it knows), its metadata saying what was not
    read and why, so that GradeInSandbox grades no cell of it and gives the reason."""
    released = Path(coursedir.format_path(coursedir.release_directory, ".", coursedir.assignment_id)) / path
    nb = nbformat.read(released, as_version=4) if released.is_file() else nbformat.v4.new_notebook()
    nb.metadata["tiling_course"] = {"unread": unread}
    return nb


def _autograde(app, students, jobs):
    from nbgrader.converters import Autograde, NbGraderException
    if jobs <= 1 or len(students) <= 1:
        try:
            Autograde(coursedir=app.coursedir, parent=app).start()
        except NbGraderException:
            return 1
        return 0

    import multiprocessing
    import queue
    ctx = multiprocessing.get_context("fork")   # the workers start with nbgrader configured and the judge warm
    todo, done = ctx.Queue(), ctx.Queue()
    for student in students:
        todo.put(student)
    jobs = min(jobs, len(students))
    for _ in range(jobs):
        todo.put(None)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="autograde-") as tmp:
        lock = os.path.join(tmp, "gradebook.lock")
        workers = [ctx.Process(target=_worker, args=(app, todo, done, lock), name=f"autograde-{i}")
                   for i in range(jobs)]
        for w in workers:
            w.start()
        failed, reported = [], 0
        try:
            while reported < len(students):
                try:
                    student, ok = done.get(timeout=1)
                except queue.Empty:
                    if not any(w.is_alive() for w in workers):
                        break
                    continue
                reported += 1
                if not ok:
                    failed.append(student)
        finally:
            for w in workers:
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()
                    w.join()
    lost = len(students) - reported
    app.log.info("Autograded %d submissions of %s in %.1f s with %d jobs", reported - len(failed),
                 app.coursedir.assignment_id, time.perf_counter() - start, jobs)
    if failed or lost:
        app.log.error("Not autograded: %s", ", ".join(failed + ([f"{lost} more (a job died)"] if lost else [])))
        return 1
    return 0


def _submitted(coursedir):
    """The ids of the students with a submission of the assignment that nbgrader's options
    select (--student, student_id_exclude), sorted."""
    pattern = coursedir.format_path(coursedir.submitted_directory, coursedir.student_id, coursedir.assignment_id)
    regexp = re.compile(coursedir.format_path(coursedir.submitted_directory, "(?P<student_id>.*)",
                                              re.escape(coursedir.assignment_id), escape=True) + "$")
    exclude = set(filter(None, coursedir.student_id_exclude.split(",")))
    students = {m["student_id"] for m in map(regexp.match, glob.glob(pattern)) if m}
    return sorted(students - exclude)


def _worker(app, todo, done, lock):
    from nbgrader.converters import Autograde, NbGraderException
    _lock_gradebook(lock)
    while (student := todo.get()) is not None:
        app.coursedir.student_id = glob.escape(student)
        try:
            Autograde(coursedir=app.coursedir, parent=app).start()
            ok = True
        except NbGraderException:
            ok = False            # nbgrader has logged why
        except Exception:          # never lose the rest of the queue to one submission
            app.log.exception("autograding %s failed", student)
            ok = False
        done.put((student, ok))


def _lock_gradebook(path, patience=300):
    """Make every nbgrader Gradebook of this process hold an exclusive lock on `path` from
    its creation to its close (re-entrant: nested ones share it). nbgrader opens one for a
    few queries at a time, so a wait is short; one longer than `patience` seconds means a
    Gradebook left open, and fails rather than hang."""
    import fcntl

    from nbgrader import api
    held = {"depth": 0, "file": None}
    init, close = api.Gradebook.__init__, api.Gradebook.close

    def acquire():
        if held["depth"] == 0:
            f = open(path, "a")
            deadline = time.monotonic() + patience
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        f.close()
                        raise RuntimeError(f"the gradebook has been locked by another job for {patience} s") from None
                    time.sleep(0.005)
            held["file"] = f
        held["depth"] += 1

    def release():
        held["depth"] -= 1
        if held["depth"] == 0:
            held["file"].close()   # and with it the lock
            held["file"] = None

    def locked_init(self, *args, **kwargs):
        acquire()
        try:
            init(self, *args, **kwargs)
        except BaseException:
            release()
            raise
        self._autograde_lock = True

    def locked_close(self):
        try:
            close(self)
        finally:
            if self.__dict__.pop("_autograde_lock", False):
                release()

    api.Gradebook.__init__, api.Gradebook.close = locked_init, locked_close


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tiling_course.grading autograde",
                                 usage="%(prog)s ASSIGNMENT [--jobs N] [--hidden DIR] [--warm DIR] [nbgrader options]",
                                 description="Autograde an assignment's submissions with nbgrader, their CUDA run in a "
                                             "sandbox, several at once.")
    ap.add_argument("--jobs", "-j", type=int, default=len(os.sched_getaffinity(0)),
                    help="submissions graded at once (default: one per core)")
    ap.add_argument("--hidden", default=None,
                    help="the folder of the graded assignments' hidden tests (default: hidden/ beside source/)")
    ap.add_argument("--warm", default=None,
                    help="the folder of the grader's warm compile cache (default: one under ~/.cache/tiling-course)")
    args, rest = ap.parse_known_args(argv)
    # jsonschema, which nbformat imports, compiles 38 lark grammars at import when the optional
    # rfc3987-syntax is installed (2.4 s of this command's start, before any job runs): they
    # check JSON Schema's "iri" formats, which only a FormatChecker applies, and neither
    # nbformat nor nbgrader validates with one. This process goes without them.
    sys.modules.setdefault("rfc3987_syntax", None)
    return autograde(rest, args.jobs, hidden=args.hidden, warm=args.warm)

