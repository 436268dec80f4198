"""Autograding a class, several submissions at once:

    cd assignments && python -m tiling_course.grading autograde ASSIGNMENT [--jobs N] [nbgrader's options]

is `nbgrader autograde ASSIGNMENT [nbgrader's options]`, with nbgrader's own Autograde
converter, configuration (nbgrader_config.py), options (--force, --student,
--CourseDirectory.student_id_exclude, ...) and gradebook, on N submissions at a time
(default: two per core). What it changes, and what it keeps:

- nbgrader runs one submission after another. Here N worker processes each take the next
  submission as they finish the last, so a submission that hangs holds one worker for
  its time limit (the rubric's, or nbgrader's Execute.timeout) and the others go on.
- nbgrader's gradebook is one SQLite file, and nbgrader gives up on a "database is
  locked". Each worker holds an exclusive lock on it from opening a Gradebook to closing
  it (nbgrader opens one for a few queries at a time, never across a notebook's run).
- Each submission runs in a fresh kernel of its own, as with nbgrader: its isolation, its
  time limits and its feedback are nbgrader's and the rubric's, unchanged. The kernel is
  forked from a process per worker that has imported ipykernel and the course's modules
  and run nothing else (tiling_course.forkkernel), which saves each submission about half
  a second of CPU; --fresh-kernels starts each one from scratch, as nbgrader does.

Measured (benchmarks/grading.py): book/instructor.md, "Graded assignments".
"""
import argparse
import glob
import os
import re
import sys
import tempfile
import time


def autograde(nbgrader_args, jobs, fork_kernels=True):
    """`nbgrader autograde` with nbgrader_args, over `jobs` processes; returns the exit status.
    fork_kernels: each submission's kernel forked from a warm process (tiling_course.forkkernel)."""
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters import Autograde, NbGraderException

    app = AutogradeApp.instance()
    app.initialize(list(nbgrader_args))
    if len(app.extra_args) == 1 and not app.coursedir.assignment_id:
        app.coursedir.assignment_id = app.extra_args[0]
    elif len(app.extra_args) > 1 or not app.coursedir.assignment_id:
        app.fail("Give one assignment id (and, if you like, nbgrader's options)")
    if fork_kernels:
        _fork_kernels(app)
    students = _submitted(app.coursedir)
    if jobs <= 1 or len(students) <= 1:
        from . import forkkernel
        try:
            Autograde(coursedir=app.coursedir, parent=app).start()
        except NbGraderException:
            return 1
        finally:
            forkkernel.shutdown()
        return 0

    import multiprocessing
    import queue
    ctx = multiprocessing.get_context("fork")   # the workers start with nbgrader imported and configured
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


def _fork_kernels(app):
    """Have nbgrader's Execute start its kernels with forkkernel.ForkingKernelManager:
    Execute, in the autograde preprocessors, replaced by a subclass that names that
    manager (nbgrader's Execute passes its own kernel_manager_class, which no
    configuration overrides). Its configuration (Execute.timeout, ...) still applies."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    from .forkkernel import ForkingKernelManager

    class ForkingExecute(Execute):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("kernel_manager_class", ForkingKernelManager)
            super().__init__(*args, **kwargs)

    configured = app.config.Autograde.get("autograde_preprocessors")
    pps = list(configured if configured is not None else Autograde.class_traits()["autograde_preprocessors"]
               .default())
    pps = [ForkingExecute if pp is Execute or pp == "nbgrader.preprocessors.Execute" else pp for pp in pps]
    app.update_config(Config({"Autograde": {"autograde_preprocessors": pps}}))


def _worker(app, todo, done, lock):
    from nbgrader.converters import Autograde, NbGraderException

    from . import forkkernel
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
    forkkernel.shutdown()


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
    ap = argparse.ArgumentParser(prog="python -m tiling_course.grading",
                                 description="Autograde an assignment's submissions with nbgrader, several at once.")
    sub = ap.add_subparsers(dest="command", required=True)
    ag = sub.add_parser("autograde", help="nbgrader autograde ASSIGNMENT [nbgrader's options], over --jobs processes")
    # Two jobs per core: with forked kernels a submission spends about half its time waiting
    # (its kernel's start-up handshake, its replies, the gradebook lock), so it takes two per
    # core to keep the cores busy (logs/2026-11-23-grading-speed.md, benchmarks/grading.py).
    ag.add_argument("--jobs", "-j", type=int, default=2 * len(os.sched_getaffinity(0)),
                    help="submissions autograded at once (default: two per core)")
    ag.add_argument("--fresh-kernels", action="store_true",
                    help="start each submission's kernel from scratch, as nbgrader does, instead of forking it from "
                         "a warm process (tiling_course.forkkernel)")
    args, rest = ap.parse_known_args(argv)
    # jsonschema, which nbformat imports, compiles 38 lark grammars at import when the optional
    # rfc3987-syntax is installed (2.4 s of this command's start, before any job runs): they
    # check JSON Schema's "iri" formats, which only a FormatChecker applies, and neither
    # nbformat nor nbgrader validates with one. This process goes without them.
    sys.modules.setdefault("rfc3987_syntax", None)
    return autograde(rest, args.jobs, fork_kernels=not args.fresh_kernels)


if __name__ == "__main__":
    sys.exit(main())
