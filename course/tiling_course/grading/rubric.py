"""The graded assignments: their rubrics (assignments/rubrics.toml), how a part is scored,
and the self-check a student runs in the notebook.

    from tiling_course import grading
    grading.award("a2_barriers_boundaries", "bounds_src", bounds_src)          # practice: shows feedback
    grading.award("g1_rect_tiles", "rect_src", rect_src, student_id="s123")   # graded: the public self-check
    grading.variant("g1_rect_tiles", "rect_src", "s123")                       # that student's question

Two kinds of assignment:

- practice (a1-a3): the book's own kernels, rewritten; the rubric's shapes and seed are
  public, and the self-check is the grade.
- graded (g1-g3): kernels the book does not contain, with per-student variants
  (tiling_course.variants). The grade comes from hidden tests (the instructor's
  assignments/hidden/, never in the wheel), run by tiling_course.judge in a sandbox on the
  CUDA the student submitted; the self-check runs the same scoring on public shapes.

Either way a grade never comes from the student's notebook: the grader reads the
submission's %%cuda cells as text (tiling_course.answers) and runs them in a fresh,
sandboxed process (tiling_course.judge, tiling_course.sandbox). award() is only for the
student to see where they stand.

How a part is scored, from its points = {correct, clean, speed}:

    correct  the result matches NumPy on every test (awkward shapes: 1 x 1, primes, m != k
             != n; the variant's tiles), in a run on the CPU runtime
    clean    and checked mode finds nothing: no race, no out-of-bounds access, no divergent
             barrier, no uninitialized shared read (a GPU run can hide a race; this cannot)
    speed    and the checked run meets the part's speed requirement: global loads within the
             bound of staged tiles, or coalesced accesses and no bank conflicts

So a kernel that computes the right result but that checked mode finds racy (or with
another such finding) earns `correct` alone; correct and clean but slow earns `correct +
clean`. A kernel that reads or writes out of bounds, crashes, does not compile, or does
not finish within the rubric's time limit earns nothing, and its feedback says which.

Grading a class: `python -m tiling_course.grading autograde ASSIGNMENT` (nbgrader, on a
JupyterHub) or `python -m tiling_course.gradescope export ASSIGNMENT` (Gradescope).
"""
import sys
import tomllib
from dataclasses import dataclass
from importlib import resources

from . import gradetasks, tasks, tryout, variants
from .exercises import requirements


@dataclass(frozen=True)
class Part:
    assignment: str
    variable: str
    title: str
    statement: str            # Markdown; a graded part's holds {MACRO} fields its variant fills
    task: gradetasks.Task     # what the kernel computes and how it is launched
    points: dict
    tiles: tuple = (None,)    # practice parts: the tiles each shape is tried with
    shapes: tuple = ()        # practice parts: the public shapes (graded parts' are hidden)
    seed: int | None = None   # practice parts: the inputs' generator
    speed: tuple = ()         # requirement tables (tiling_course.exercises.requirements) the checked run must meet
    variants: dict | None = None   # graded parts: axis -> [choice tables] (tiling_course.variants)
    check_shapes: tuple = ()  # graded parts: the public shapes of the self-check

    @property
    def graded(self):
        return self.variants is not None


@dataclass(frozen=True)
class Assignment:
    id: str
    title: str
    time_limit: float
    parts: dict                 # variable -> Part

    @property
    def graded(self):
        return any(p.graded for p in self.parts.values())


@dataclass(frozen=True)
class Score:
    points: float
    out_of: float
    items: tuple                # (rubric item, points, out of)
    verdict: str                # "full marks", "correct but racy", "correct but slow", ...
    feedback: str               # Markdown: the score, the items, the checker's message

    def _repr_markdown_(self):
        return self.feedback


def _part(assignment, p):
    common = dict(assignment=assignment, variable=p["variable"], title=p["title"], statement=p["statement"],
                  points=dict(p["points"]), speed=tuple(p.get("speed", ())))
    requirements.build(common["speed"])   # a slip in the tables shows at load
    if "launch" in p:   # practice: a product of the book's form
        part = Part(task=gradetasks.Product(tasks.from_table(p["launch"]).launch), tiles=tuple(p["tiles"]),
                    shapes=tuple(map(tuple, p["shapes"])), seed=p["seed"], **common)
    else:
        part = Part(task=gradetasks.from_table(p["task"]), variants=dict(p["variants"]),
                    check_shapes=tuple(map(tuple, p["check_shapes"])), **common)
    timed = bool(part.speed) or type(part.task).speed is not gradetasks.Task.speed
    if timed != ("speed" in part.points):
        raise ValueError(f"{assignment}/{part.variable}: speed points and a speed requirement go together")
    return part


def load(path=None):
    """{id: Assignment} from the rubrics' TOML."""
    path = path or resources.files(__package__).joinpath("assignments", "rubrics.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for a in data["assignment"]:
        parts = {p["variable"]: _part(a["id"], p) for p in a["part"]}
        out[a["id"]] = Assignment(a["id"], a["title"], float(a["time_limit"]), parts)
    return out


ASSIGNMENTS = load()


def part(assignment_id, variable):
    """A part of an assignment; KeyError naming what there is."""
    if assignment_id not in ASSIGNMENTS:
        raise KeyError(f"no assignment {assignment_id!r}; the assignments are {', '.join(ASSIGNMENTS)}")
    parts = ASSIGNMENTS[assignment_id].parts
    if variable not in parts:
        raise KeyError(f"{assignment_id} has no part {variable!r}; its parts are {', '.join(parts)}")
    return parts[variable]


def variant(assignment_id, variable, student_id):
    """The statement of a graded part for this student: their tiles, layout, border..."""
    p = part(assignment_id, variable)
    return variants.statement(p, variants.of(p, student_id))


def show_variant(assignment_id, variable, student_id):
    """Show the student's question (a graded part's statement in their variant)."""
    if not variants.normalize(student_id or ""):
        tryout.show_markdown("Set `STUDENT_ID` to your student id, as the course lists it, and run this cell again: "
                             "your question depends on it.")
        return
    tryout.show_markdown(f"**Your question** (student id `{student_id}`):\n\n"
                         f"{variant(assignment_id, variable, student_id)}")


def grade(assignment_id, variable, source, student_id=None):
    """The self-check: score `source` for this part in this process, on the public tests
    (a practice part's rubric shapes; a graded part's check_shapes, in the student's
    variant). Grades come from tiling_course.judge, which runs the hidden tests in a sandbox."""
    from . import judge
    a = ASSIGNMENTS[assignment_id]
    p = part(assignment_id, variable)
    return judge.self_check(a, p, source, student_id)


def award(assignment_id, variable, source, student_id=None):
    """grade(), shown as Markdown; returns the points."""
    score = grade(assignment_id, variable, source, student_id)
    tryout.show_markdown(score.feedback)
    return score.points


def score(part, correct, clean, speed, verdict, message):
    """The Score of a part: its rubric items earned as the flags say, and the feedback."""
    got = {"correct": correct, "clean": clean and correct, "speed": speed and clean and correct}
    items = tuple((item, part.points[item] * got[item], part.points[item]) for item in ("correct", "clean", "speed")
                  if item in part.points)
    points, out_of = sum(i[1] for i in items), sum(i[2] for i in items)
    rows = "\n".join(f"| {_ITEMS[item]} | {p:g} / {m:g} |" for item, p, m in items)
    feedback = (f"**{part.title}: {points:g} / {out_of:g} points ({verdict})**\n\n| rubric item | points |\n"
                f"|---|---|\n{rows}\n\n{message}")
    return Score(float(points), float(out_of), items, verdict, feedback)


_ITEMS = {"correct": "correct on every test (a run against NumPy)",
          "clean": "checked mode finds no race, out-of-bounds access or divergent barrier",
          "speed": "meets the speed requirement (checked mode's counts and trace)"}


if __name__ == "__main__":
    from .autograde import main
    sys.exit(main())
