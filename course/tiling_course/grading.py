"""Grading the assignments: a student's kernel, scored by its rubric
(assignments/rubrics.toml) with the course's own checker, so that the feedback names the
thread, block, element and source line of what went wrong.

    from tiling_course import grading
    grading.award("a2_barriers_boundaries", "bounds_src", bounds_src)   # shows feedback, returns points

award() is what each graded cell of an assignment notebook calls (the notebooks are in
the repository's assignments/, in nbgrader's format). nbgrader takes a graded cell's
numeric result as its partial credit, and the displayed feedback lands in the feedback
file it writes for the student; a student may run the same cell to see the score.

How a part is scored, from its points = {correct, clean, speed}:

    correct  the product matches NumPy on every shape and tile of the rubric (awkward ones:
             1 x 1, primes, M != K != N), in a plain run on the CPU runtime
    clean    and checked mode finds nothing: no race, no out-of-bounds access, no divergent
             barrier, no uninitialized shared read (a GPU run can hide a race; this cannot)
    speed    and the checked run's global-load counts meet the rubric's bound (the tiles
             are really staged): the load counts are what a CPU grader can measure exactly,
             and what the chapters' speed-ups come from

So partial credit is: correct but racy (or with any other checked-mode finding) earns
`correct` alone; correct and clean but slow earns `correct + clean`. A kernel that reads
or writes out of bounds is not correct on the awkward shapes; one that does not compile,
or does not finish within the rubric's time limit, earns nothing.

Autograding a class: `python -m tiling_course.grading autograde ASSIGNMENT --jobs N` runs
nbgrader's autograde on N submissions at once (tiling_course.autograde).
"""
import sys
import tomllib
from dataclasses import dataclass
from importlib import resources

import numpy as np

import cudacheck
from cudacheck import KernelError

from . import tasks, tryout
from .exercises import requirements

# Checked mode's findings in a kernel whose plain run may still compute the right product.
_FINDINGS = {"SharedMemoryRaceError", "BarrierDivergenceError", "WarpDivergenceError", "UninitializedReadError"}


@dataclass(frozen=True)
class Part:
    variable: str
    title: str
    statement: str
    task: tasks.Task
    tiles: tuple
    shapes: tuple
    seed: int
    points: dict
    speed: object = None        # requirement(report, shape, tile, code), with speed points


@dataclass(frozen=True)
class Assignment:
    id: str
    title: str
    time_limit: float
    parts: dict                 # variable -> Part


@dataclass(frozen=True)
class Score:
    points: float
    out_of: float
    items: tuple                # (rubric item, points, out of)
    verdict: str                # "full marks", "correct but racy", "correct but slow", ...
    feedback: str               # Markdown: the score, the items, the checker's message

    def _repr_markdown_(self):
        return self.feedback


def load(path=None):
    """{id: Assignment} from the rubrics' TOML."""
    path = path or resources.files(__package__).joinpath("assignments", "rubrics.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for a in data["assignment"]:
        parts = {}
        for p in a["part"]:
            speed = requirements.build(p["speed"]) if "speed" in p else None
            if (speed is None) != ("speed" not in p["points"]):
                raise ValueError(f"{a['id']}/{p['variable']}: speed points and a speed requirement go together")
            parts[p["variable"]] = Part(p["variable"], p["title"], p["statement"], tasks.from_table(p["launch"]),
                                        tuple(p["tiles"]), tuple(map(tuple, p["shapes"])), p["seed"],
                                        dict(p["points"]), speed)
        out[a["id"]] = Assignment(a["id"], a["title"], float(a["time_limit"]), parts)
    return out


ASSIGNMENTS = load()


def grade(assignment_id, variable, source):
    """Score `source`, the kernel a student wrote for part `variable` of an assignment."""
    assignment = ASSIGNMENTS[assignment_id]
    part = assignment.parts[variable]
    if not isinstance(source, str) or not source.strip():
        return _score(part, 0, 0, 0, "no kernel", f"✗ No kernel: `{variable}` is empty or was never set. Run its "
                      "`%%cuda` cell.")
    limit, workers = cudacheck.config.time_limit, cudacheck.config.workers
    cudacheck.config.time_limit = assignment.time_limit   # a hanging kernel costs its points, not the batch
    # One worker process per launch: the graded shapes are a few blocks, and a grader runs
    # one submission per core (autograde --jobs), so a hanging kernel holds one core for
    # its time limit, not all of them.
    cudacheck.config.workers = 1
    try:
        return _grade(part, source)
    finally:
        cudacheck.config.time_limit, cudacheck.config.workers = limit, workers


def _grade(part, source):
    # One generator per part, seeded: every submission is judged on the same matrices.
    rng = np.random.default_rng(part.seed)
    out = None
    for tile in part.tiles:
        out = tryout.run(source, part.task, tile=tile, shapes=list(part.shapes), rng=rng, gpu=False, quiet=True,
                         requirement=part.speed)
        if not out:
            break
    message = out.message
    if out:
        return _score(part, 1, 1, 1, "full marks", message)
    if out.kind == "requirement":
        return _score(part, 1, 1, 0, "correct but slow", message)
    if out.kind in _FINDINGS:
        plain = _plain_run(part, source)
        if plain is None:
            return _score(part, 1, 0, 0, f"correct but {_finding(out.kind)}", message +
                          "\n\nA plain run computes the right product on every shape: the kernel is correct here "
                          "by luck of the schedule, and a GPU may do the same, but checked mode found the bug.")
        return _score(part, 0, 0, 0, _finding(out.kind), message + f"\n\nA plain run is wrong too: {plain}")
    return _score(part, 0, 0, 0, _verdict(out.kind), message)


def _plain_run(part, source):
    """None if a plain (unchecked) CPU run gives the right result on every shape and tile,
    else what went wrong."""
    rng = np.random.default_rng(part.seed)
    for tile in part.tiles:
        for shape in part.shapes:
            inputs = part.task.inputs(shape, rng)
            try:
                result, _ = part.task.run(source, inputs, tile, "cpu", False)
            except KernelError as e:
                return f"{type(e).__name__} on {part.task.describe(shape)}."
            wrong = part.task.compare(result, inputs, tile)
            if wrong:
                return f"{wrong['count']} of {wrong['total']} elements differ on {part.task.describe(shape)}."
    return None


def _finding(kind):
    return {"SharedMemoryRaceError": "racy", "BarrierDivergenceError": "with a divergent barrier",
            "WarpDivergenceError": "with a divergent warp operation",
            "UninitializedReadError": "reading uninitialized shared memory"}[kind]


def _verdict(kind):
    return {"CompileError": "does not compile", "KernelTimeoutError": "does not finish",
            "OutOfBoundsError": "out of bounds", "wrong values": "wrong values"}.get(kind, kind)


def _score(part, correct, clean, speed, verdict, message):
    got = {"correct": correct, "clean": clean and correct, "speed": speed and clean and correct}
    items = tuple((item, part.points[item] * got[item], part.points[item]) for item in ("correct", "clean", "speed")
                  if item in part.points)
    points, out_of = sum(i[1] for i in items), sum(i[2] for i in items)
    rows = "\n".join(f"| {_ITEMS[item]} | {p:g} / {m:g} |" for item, p, m in items)
    feedback = (f"**{part.title}: {points:g} / {out_of:g} points ({verdict})**\n\n| rubric item | points |\n"
                f"|---|---|\n{rows}\n\n{message}")
    return Score(float(points), float(out_of), items, verdict, feedback)


_ITEMS = {"correct": "correct on every shape (a plain run against NumPy)",
          "clean": "checked mode finds no race, out-of-bounds access or divergent barrier",
          "speed": "global loads within the bound of staged tiles (checked mode's counts)"}


def award(assignment_id, variable, source):
    """grade(), shown as Markdown; returns the points, which nbgrader reads as the cell's
    partial credit."""
    score = grade(assignment_id, variable, source)
    tryout.show_markdown(score.feedback)
    return score.points



if __name__ == "__main__":
    from .autograde import main
    sys.exit(main())
