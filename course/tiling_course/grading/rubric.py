"""The graded assignments' rubrics (assignments/rubrics.toml) as data: each assignment's
parts, what a part's kernel computes (tiling_course.grading.tasks), its points, tests and
speed requirement.

    from tiling_course.grading import rubric
    rubric.ASSIGNMENTS["g1_rect_tiles"].parts["rect_src"]     # a Part
    rubric.part("g1_rect_tiles", "rect_src")                  # the same; KeyError naming what there is
"""
import tomllib
from dataclasses import dataclass
from importlib import resources

from .. import tasks as checker_tasks
from ..exercises import requirements
from . import tasks


@dataclass(frozen=True)
class Part:
    assignment: str
    variable: str
    title: str
    statement: str            # Markdown; a graded part's holds {MACRO} fields its variant fills
    task: tasks.Task          # what the kernel computes and how it is launched
    points: dict
    tiles: tuple = (None,)    # practice parts: the tiles each shape is tried with
    shapes: tuple = ()        # practice parts: the public shapes (graded parts' are hidden)
    seed: int | None = None   # practice parts: the inputs' generator
    speed: tuple = ()         # requirement tables (tiling_course.exercises.requirements) the checked run must meet
    variants: dict | None = None   # graded parts: axis -> [choice tables] (tiling_course.grading.variants)
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


def _part(assignment, p):
    common = dict(assignment=assignment, variable=p["variable"], title=p["title"], statement=p["statement"],
                  points=dict(p["points"]), speed=tuple(p.get("speed", ())))
    requirements.build(common["speed"])   # a slip in the tables shows at load
    if "launch" in p:   # practice: a product of the book's form
        part = Part(task=tasks.Product(checker_tasks.from_table(p["launch"]).launch), tiles=tuple(p["tiles"]),
                    shapes=tuple(map(tuple, p["shapes"])), seed=p["seed"], **common)
    else:
        part = Part(task=tasks.from_table(p["task"]), variants=dict(p["variants"]),
                    check_shapes=tuple(map(tuple, p["check_shapes"])), **common)
    timed = bool(part.speed) or type(part.task).speed is not tasks.Task.speed
    if timed != ("speed" in part.points):
        raise ValueError(f"{assignment}/{part.variable}: speed points and a speed requirement go together")
    return part


def load(path=None):
    """{id: Assignment} from the rubrics' TOML."""
    path = path or resources.files("tiling_course").joinpath("assignments", "rubrics.toml")
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
