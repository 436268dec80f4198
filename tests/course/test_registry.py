"""The course's registry of chapters, widgets and exercises (tiling_course.registry) matches
the book: the tests and scripts that read it then cover everything the book has. Every
notebook is a chapter there, in _toc.yml's order; every widget a notebook calls is registered
in its chapter and every registered one is called there; every widget of
tiling_course.widgets is registered, with a spec of its own name; every exercise and quiz
file is a chapter's."""
import inspect
import json
import re
from pathlib import Path

import pytest

from tiling_course import exercises, quiz, registry, widgets

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
PACKAGE = ROOT / "course" / "tiling_course"


def _calls(stem):
    """The functions of tiling_course.widgets that a chapter's code cells call."""
    cells = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return set(re.findall(r"\bwidgets\.(\w+)\(", code))


def test_the_chapters_are_the_books_notebooks_in_the_tocs_order():
    stems = registry.stems()
    assert len(set(stems)) == len(stems)
    assert sorted(p.stem for p in (ROOT / "book").glob("*.ipynb")) == sorted(stems)
    toc = re.findall(r"^\s*- file: book/(\S+)\s*$", (ROOT / "_toc.yml").read_text(), re.M)
    assert [name for name in toc if (ROOT / "book" / f"{name}.ipynb").exists()] == stems


@pytest.mark.parametrize("stem", registry.stems())
def test_every_widget_a_chapter_calls_is_registered_there_and_every_registered_one_is_called(stem):
    chapter = registry.chapter(stem)
    assert _calls(stem) == {w.function for w in chapter.widgets} | set(chapter.tables)


def test_every_widget_of_the_module_is_registered_with_a_spec_of_its_name():
    names = [w.name for w in registry.widgets()]
    functions = [w.function for w in registry.widgets()]
    assert len(set(names)) == len(names) and len(set(functions)) == len(functions)
    have_spec = {name.removesuffix("_spec") for name, f in vars(widgets).items()
                 if name.endswith("_spec") and inspect.isfunction(f)}
    assert have_spec == set(functions), "a widget of tiling_course.widgets that no chapter registers, or the reverse"
    for w in registry.widgets():
        assert callable(w.builder) and w.spec()[0] == w.name, w
        assert registry.widget(w.name) is w and w in registry.chapter_of(w.name).widgets
    for c in registry.CHAPTERS:
        for table in c.tables:
            assert callable(getattr(widgets, table)) and not hasattr(widgets, f"{table}_spec"), table


def test_the_exercise_and_quiz_files_are_the_chapters():
    files = sorted(p.name for p in (PACKAGE / "exercises").glob("*.toml"))
    assert files == sorted(c.exercise_file for c in registry.CHAPTERS if c.exercises)
    assert files == sorted(p.name for p in (PACKAGE / "exercises" / "student").glob("*.toml"))
    assert list(exercises.CHAPTERS) == [c.stem for c in registry.CHAPTERS if c.exercises]
    assert sorted(p.name for p in (PACKAGE / "quizzes").glob("*.json")) == sorted(
        c.quiz_file for c in registry.CHAPTERS if c.quiz)
    assert quiz.chapters() == sorted(c.stem for c in registry.CHAPTERS if c.quiz)


def test_the_registry_refuses_what_it_does_not_hold():
    with pytest.raises(KeyError, match="01_naive"):
        registry.chapter("09_nothing")
    with pytest.raises(KeyError, match="thread-map"):
        registry.widget("nothing")
