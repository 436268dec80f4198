"""The self-check a student runs in an assignment's notebook: their kernel scored in this
process on the public tests, shown as Markdown. Only the notebooks import this module;
no grade comes from it (tiling_course.grading.judge grades from the submitted CUDA, in a
sandbox).

    from tiling_course.grading import selfcheck
    selfcheck.award("a2_barriers_boundaries", "bounds_src", bounds_src)          # practice: shows feedback
    selfcheck.award("g1_rect_tiles", "rect_src", rect_src, student_id="s123")   # graded: the public self-check
    selfcheck.show_variant("g1_rect_tiles", "rect_src", "s123")                 # that student's question
"""
from .. import tryout
from . import judge, rubric, variants


def variant(assignment_id, variable, student_id):
    """The statement of a graded part for this student: their tiles, layout, border..."""
    p = rubric.part(assignment_id, variable)
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
    p = rubric.part(assignment_id, variable)
    return judge.self_check(rubric.ASSIGNMENTS[assignment_id], p, source, student_id)


def award(assignment_id, variable, source, student_id=None):
    """grade(), shown as Markdown; returns the points."""
    score = grade(assignment_id, variable, source, student_id)
    tryout.show_markdown(score.feedback)
    return score.points
