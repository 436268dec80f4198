"""The course's one list of its chapters, in order, and of what each one has: its notebook
(book/<stem>.ipynb), the widgets it calls from tiling_course.widgets, its exercises
(exercises/<stem>.toml) and its questions for the room (quizzes/<stem>.json).

The tests and scripts read this list rather than keeping their own, so a chapter or a
widget added here is built, clicked and synced everywhere; tests/course/test_registry.py checks
that it matches the book (every notebook a chapter here, in _toc.yml's order; every widget
a notebook calls registered in its chapter, and every registered one called; every
exercise and quiz file a chapter's).

    from tiling_course import registry
    [c.stem for c in registry.CHAPTERS]      # "01_naive", "02_tiling", ...
    registry.widget("tile").spec()           # the tile explorer's spec, as switch.switch takes it
"""
from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Widget:
    """A widget whose every state is computed ahead (tiling_course.switch). `name` is its
    switch's name (the page's CSS class tc-switch-<name>); tiling_course.widgets.<function>()
    builds it, as the chapter calls it, and <function>_spec() returns what it is built from.
    A predict widget asks for the reader's guess before it shows anything."""
    name: str
    function: str
    predict: bool = False

    @property
    def builder(self):
        return getattr(import_module("tiling_course.widgets"), self.function)

    @property
    def spec(self):
        return getattr(import_module("tiling_course.widgets"), f"{self.function}_spec")


@dataclass(frozen=True)
class Chapter:
    """A chapter: its notebook's stem, its widgets, the tables it shows from
    tiling_course.widgets (functions with no controls), and whether it has exercises and a quiz."""
    stem: str
    widgets: tuple = ()
    tables: tuple = ()
    exercises: bool = True
    quiz: bool = True

    @property
    def notebook(self):
        """The notebook's file name in book/."""
        return f"{self.stem}.ipynb"

    @property
    def page(self):
        """The chapter's page on the built site, relative to its root."""
        return f"book/{self.stem}.html"

    @property
    def exercise_file(self):
        """Its exercises' data file in tiling_course/exercises/ (and student/), or None."""
        return f"{self.stem}.toml" if self.exercises else None

    @property
    def quiz_file(self):
        """Its questions' file in tiling_course/quizzes/, or None."""
        return f"{self.stem}.json" if self.quiz else None


CHAPTERS = (
    Chapter("01_naive", widgets=(Widget("thread-map", "thread_explorer"),)),
    Chapter("02_tiling", widgets=(Widget("phases", "phase_stepper"), Widget("tile", "tile_explorer")),
            tables=("tile_summary",)),
    Chapter("03_syncthreads", widgets=(Widget("barriers", "barrier_explorer"),
                                       Widget("race-replay", "race_replay", predict=True))),
    Chapter("04_boundaries", widgets=(Widget("edge", "edge_explorer"),)),
    Chapter("05_performance", widgets=(Widget("coalesce", "coalesce_quiz", predict=True),
                                       Widget("occupancy", "occupancy_explorer"))),
    Chapter("06_beyond", widgets=(Widget("rungs", "rung_explorer"),)),
    Chapter("07_program", widgets=(Widget("host-bugs", "host_bug_quiz", predict=True),)),
    Chapter("08_tensor_cores"),
    Chapter("09_hopper"),
)


def stems():
    """The chapters' notebook stems, in order."""
    return [c.stem for c in CHAPTERS]


def chapter(stem):
    """The Chapter of a notebook stem; KeyError for one the course does not have."""
    for c in CHAPTERS:
        if c.stem == stem:
            return c
    raise KeyError(f"no chapter {stem!r}; the chapters are {', '.join(stems())}")


def widgets():
    """Every widget, in the order of the chapters (and within one, of the registry)."""
    return [w for c in CHAPTERS for w in c.widgets]


def widget(name):
    """The Widget of a switch name; KeyError for one no chapter has."""
    for w in widgets():
        if w.name == name:
            return w
    raise KeyError(f"no widget {name!r}; the widgets are {', '.join(w.name for w in widgets())}")


def chapter_of(name):
    """The Chapter whose notebook calls the widget `name`."""
    return next(c for c in CHAPTERS if any(w.name == name for w in c.widgets))
