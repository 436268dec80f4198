"""The book's exercises and their checker.

    from tiling_course import exercises
    print(exercises.starter("naive-1"))          # the kernel the reader edits
    exercises.check("naive-1", source)           # truthy on a pass; shows what failed
    exercises.show_solution("naive-1")           # the solution, as a cuda code block

The exercises are data: one TOML file per chapter (01_naive.toml, ..., named after its
notebook), each an array of [[exercise]] tables with

    id, title, kind ("write", "fix", "value" or "program"), statement, hint, explanation (Markdown)
    starter, solution      sources (below)
    starter_fails          the failure the starter gives, as a wrong answer's expect
    [[exercise.wrong]]     known wrong answers: name, what (the mistake), expect (the
                           failure the checker must report: an exception's class name,
                           "wrong values", "requirement"; for a value exercise "wrong value"
                           or "not a number"), and source, or value for a value exercise
  kernel exercises:
    launch                 the task (tiling_course.tasks): what the kernel computes, how it is
                           launched and judged. A matrix product: {kernel = "tiled", function = ...,
                           columns_per_thread = ...}, a matmul.Launch; another task: {task =
                           "block_transpose" or "histogram", function = ...}
    tiles, shapes          the tiles to try (a transpose's BLOCK_WIDTH, a histogram's threads per
                           block), and the shapes on each: (m, k, n) for a product, (height, width)
                           for a transpose, (values, bins) for a histogram
    [[exercise.requirement]], requirement_passed, trace
                           what is asked of the kernel besides its product (requirements.py),
                           the line a pass adds, and the blocks checked mode traces for it
  program exercises (chapter 7: whole programs, host code included):
    runs                   the command lines to run the program with, each a list of strings; the
                           program passes when every run, in checked mode on the CPU runtime,
                           exits with 0, with no finding and no warning, and prints PASSED for
                           each of its checks and FAILED for none
  value exercises:
    variable, unit, tolerance (relative)
                           the reader's code sets `variable` to a number; the expected one is
                           what the solution's code sets it to, run once; code that launches
                           a kernel of its own reads it from cu/ with cu_file(name)
    answer_from            where the right number comes from, as the verdict says it (default
                           "what a checked run of the kernel counts"; "what the roofline
                           allows" for an exercise that computes rather than counts)

A kernel's source is one of
    "x.cu"                                a file of cu/ in this package
    {book = "tiled"}                      a kernel of the book (tiling_course.matmul; of a
                                          file of several, only its own function)
    {kernel_file = "hopper.cu"}           a whole file of the book's kernels/ (tiling_course.sources),
                                          for a task that compiles a file of several kernels
                                          (tasks.HopperMatmul); with the exercise's
                                          region = {file = "hopper.cu", function = "consume_tile"}
                                          the reader sees and edits that function alone
                                          (starter and solution show it; the %%cuda cell,
                                          `--into hopper.cu:consume_tile`, and the check put it
                                          in place of the book's in the file)
    {wrong = "no_zero_fill"}              a wrong kernel of tiling_course.corpus
    {solution = true}                     the exercise's solution, where that has no name
                                          of its own (it is itself an edit)
    {program = true}                      chapter 7's whole program (tiling_course.programs)
    {host_bug = "missing copy back"}      one of its host-side bugs (programs.BUGS)
each with an optional edits = [["old", "new"], ...], applied in order to the first
occurrence of old, which must be there. So a change to a book kernel reaches every
exercise made from it, or stops with the exercise and the text named. A value
exercise's starter and solution are Python code, written in the TOML.

Every exercise lists known wrong answers and the failure each must give; the tests run
them all (tests/course/test_exercises.py). A kernel or program exercise also says how long
its check takes, check_seconds = [first, later]: the CPU seconds of checking its solution in a
fresh process, with cudacheck's compiler cache empty and then full, measured on a 2-core
machine (Colab's VM has 2 cores); its chapter prints them under the statement.

Two editions of the data. The files above (this folder's *.toml and cu/) are the
instructor's: they hold the solutions, their explanations and the wrong answers, and the
installed package leaves them out (pyproject.toml). student/ holds what a student's copy
needs and nothing more: each exercise without solution, explanation or wrong answers, its
starter written out in full (student/cu/<id>.starter.cu: some starters are edits of the
solution), and for a value exercise not its answer but a salted hash of it (`answer_sha256`,
`salt`), which the check compares with the hashes of the answers it is given.
scripts/sync_notebooks.py writes student/ from the instructor's files. load() reads the
instructor's files where they are (a checkout of the repository) and student/ otherwise.

A value exercise's rule, the same in both editions: with `tolerance` 0 an answer is right
when it is the expected whole number (within 1e-9); with a relative `tolerance` t, when the
expected value, rounded to a geometric grid of ratio 1 + t/8, lies within t of it (so within
t of the exact value, give or take t/16). The grid lets the student edition check without
the number: it hashes the few grid points within t of an answer and looks for the expected
one's hash among them. (Anyone may still try numbers one by one, as the check allows; the
hash keeps the answer out of the installed files.)

The package by role: model.py (Exercise, Source, Wrong), loading.py (the TOML files checked
and loaded), values.py (value exercises' rule, grid and hashes), checker.py (check's verdicts),
section.py (a chapter's exercise cells), student_edition.py (the student edition's files),
requirements.py (what a kernel is asked besides its product). This module holds the
exercises and the API the chapters call.
"""
from .. import tryout
from . import checker, section, values
from .checker import Result
from .loading import default_root, load
from .model import INSTRUCTOR_EDITION, DataError, Exercise, NotInThisEdition, Source, Wrong
from .values import accepts, answer_hash, grid_point

__all__ = ["CHAPTERS", "EXERCISES", "INSTRUCTOR_EDITION", "DataError", "Exercise", "NotInThisEdition", "Result",
           "Source", "Wrong", "accepts", "answer", "answer_hash", "cells", "chapter", "check", "cu_file",
           "default_root", "grid_point", "load", "show_solution", "solution", "solution_markdown", "starter",
           "wrong_answers"]

EXERCISES = load()
CHAPTERS = tuple(dict.fromkeys(e.chapter for e in EXERCISES.values()))


# ------------------------------------------------------------------------- the API

def chapter(stem):
    """The exercises of one chapter (its notebook's stem), in order."""
    return [e for e in EXERCISES.values() if e.chapter == stem]


def starter(exercise_id):
    """The source the reader starts from (Python code for a value exercise)."""
    ex = EXERCISES[exercise_id]
    return ex.part(ex.starter.text())


def solution(exercise_id):
    """The solution's source (Python code for a value exercise); NotInThisEdition in the
    student edition."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        raise NotInThisEdition(f"exercise {exercise_id}: {INSTRUCTOR_EDITION}")
    return ex.part(ex.solution.text())


def wrong_answers(exercise_id):
    """The known wrong answers: (Wrong, its source or value)."""
    ex = EXERCISES[exercise_id]
    return [(w, w.source if ex.kind == "value" else w.source.text()) for w in ex.wrong]


def cu_file(name):
    """The text of a file of cu/: a kernel that a value exercise's code launches. Read from
    the edition at hand (default_root()): the student edition's package has no other cu/."""
    return default_root().joinpath("cu", name).read_text(encoding="utf-8")


def answer(exercise_id):
    """A value exercise's expected answer: what its solution's code sets its variable to;
    NotInThisEdition in the student edition, which stores only its hash."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        raise NotInThisEdition(f"exercise {exercise_id}: this edition holds only a hash of the answer. "
                               f"{INSTRUCTOR_EDITION}")
    return values.expected(ex)


def show_solution(exercise_id):
    """Display the solution as a Markdown code block, with a word on why it works; in the
    student edition, where the solutions are."""
    tryout.show_markdown(solution_markdown(exercise_id))


def solution_markdown(exercise_id):
    """The solution as show_solution displays it (the instructor edition's notebooks hold
    this text in a Markdown cell under each check)."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        return f"**Exercise {ex.id}, {ex.title}:** {INSTRUCTOR_EDITION}"
    lang = "python" if ex.kind == "value" else "cuda"
    text = f"**Solution to exercise {ex.id}, {ex.title}**\n\n```{lang}\n{solution(exercise_id).rstrip()}\n```"
    if ex.explanation:
        text += f"\n\n{ex.explanation}"
    return text


def check(exercise_id, source, quiet=False):
    """Check an answer to exercise `exercise_id`: for a kernel exercise `source` is the
    CUDA C (the variable the %%cuda cell saved), for a value exercise the number. Shows
    and returns a Result, truthy on a pass; never raises for a wrong answer."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        result = Result(False, f"✗ There is no exercise {exercise_id!r}; the exercises are "
                               f"{', '.join(EXERCISES)}.", "no exercise")
    else:
        result = checker.verdict(ex, source)
    if not quiet:
        result.show()
    return result


def cells(stem):
    """Chapter `stem`'s exercise section, as the notebook holds it (scripts/sync_notebooks.py
    writes it there): nbformat-4 cells, an introduction, then per exercise its statement,
    the starter cell and the check (section.cells)."""
    return section.cells(chapter(stem))
