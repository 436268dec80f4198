"""Questions for the room: each chapter's multiple-choice questions, shown at the end of
the chapter with feedback on every answer.

The questions live in this package, ``course/tiling_course/quizzes/<chapter>.json``, in jupyterquiz's
format (a list of ``multiple_choice`` / ``many_choice`` questions whose answers each carry
``correct`` and ``feedback``), so they travel with ``pip install`` into Colab as well as
being found in a checkout. In a chapter::

    from tiling_course import quiz
    quiz.show("02_tiling")

With jupyterquiz installed, ``show`` displays its interactive quiz: HTML plus JavaScript
with the questions embedded, which works in Jupyter, in Colab and on the static site (no
server, nothing fetched). Without it, ``show`` displays the same questions as plain HTML in
which each answer opens to its feedback, which needs no JavaScript at all.

For clicker use the answers keep their order and are lettered A, B, C, ..., and each
question is numbered ``Q<chapter>.<n>`` (``Q2.3`` is the third question of chapter 2), as
the instructor's guide refers to them.
"""
import copy
import html
import json
import re
from importlib import resources
from pathlib import PurePath

LETTERS = "ABCDEFGHIJ"

# jupyterquiz draws a question's text at line-height 1.1, and its inline code black on a
# light grey box as tall as that line: an underscore, which hangs below the baseline, falls
# under the box onto the question's dark background, black on dark purple, and
# `__syncthreads()` reads "  syncthreads()". Padding takes the box down past the
# descenders; and where code wraps onto a second line, that line's box, painted later,
# would cover the first line's underscores at 1.1, so the lines are set further apart
# (div.Quiz: more specific than jupyterquiz's own .Quiz rule, which comes later).
# At a device pixel ratio of 1, what a projector shows, an underscore of the 14 px code of
# the answers is a line thinner than a pixel, drawn grey across two rows of pixels: it reads
# paler than the letters beside it. A stroke of half a pixel in the text's own colour
# (currentColor, so that a chosen answer's colours still apply) makes it a full dark pixel.
# tests/site/test_browser.py checks the drawn pixels of every underscore.
QUIZ_CODE_CSS = ("<style>div.Quiz { line-height: 1.4; } "
                 ".Quiz :not(pre) > code { padding: 0.1em 0.15em 0.3em; border-radius: 2px; } "
                 "div.Quiz code { -webkit-text-stroke: 0.5px currentColor; }</style>")


def _stem(chapter):
    """'02_tiling', '02_tiling.ipynb', 'book/02_tiling.ipynb' -> '02_tiling'."""
    name = PurePath(str(chapter)).name
    for suffix in (".ipynb", ".json", ".md"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _dir():
    return resources.files(__package__).joinpath("quizzes")


def chapters():
    """The chapter stems that have a quiz, in order."""
    return sorted(p.name[:-5] for p in _dir().iterdir() if p.name.endswith(".json"))


def path(chapter):
    """The quiz file of a chapter (a Traversable: a Path in a checkout or an installed package)."""
    p = _dir().joinpath(f"{_stem(chapter)}.json")
    if not p.is_file():
        raise FileNotFoundError(f"no quiz for chapter {chapter!r}; there are quizzes for {', '.join(chapters())}")
    return p


def load(chapter):
    """The chapter's questions, as stored: a list of jupyterquiz question dicts."""
    return json.loads(path(chapter).read_text(encoding="utf-8"))


def chapter_number(chapter):
    """'02_tiling' -> 2 (the number questions are labelled with), or None without one."""
    m = re.match(r"(\d+)", _stem(chapter))
    return int(m.group(1)) if m else None


def questions(chapter, letters=True):
    """The questions as displayed: numbered Q<chapter>.<n>, answers lettered A, B, ... ."""
    qs = copy.deepcopy(load(chapter))
    number = chapter_number(chapter)
    for i, q in enumerate(qs, start=1):
        label = f"Q{number}.{i}" if number is not None else f"Q{i}"
        many = q["type"] == "many_choice" and "select all" not in q["question"].lower()
        kind = " (select all that apply)" if many else ""
        q["question"] = f"<b>{label}</b> {q['question']}{kind}"
        if letters:
            for letter, a in zip(LETTERS, q["answers"]):
                a["answer"] = f"<b>{letter}.</b> {a.get('answer', '')}"
    return qs


def static_html(chapter, letters=True):
    """The questions as plain HTML: every answer a <details> element that opens to say
    whether it is right and why. Works with no JavaScript (and without jupyterquiz)."""
    parts = ['<div class="kernels-quiz">']
    for q in questions(chapter, letters=letters):
        parts.append('<div class="kernels-quiz-question" style="margin: 1em 0">')
        parts.append(f"<p>{q['question']}</p>")
        if q.get("code"):
            parts.append(f"<pre><code>{q['code']}</code></pre>")
        for a in q["answers"]:
            verdict = "&#10004; Right." if a["correct"] else "&#10008; Not this one."
            parts.append(f'<details style="margin: 0.2em 0 0.2em 1em"><summary>{a["answer"]}</summary>'
                         f'<p style="margin-left: 1.5em">{verdict} {a.get("feedback", "")}</p></details>')
        parts.append("</div>")
    parts.append("</div>")
    return "\n".join(parts)


def show(chapter, *, letters=True, shuffle_answers=False, max_width=720):
    """Display the chapter's questions: jupyterquiz's interactive quiz (the questions
    embedded in the output, so it works on a static page), or, where jupyterquiz is not
    installed, the plain-HTML version. Answers keep their order and letters unless
    shuffle_answers is set (shuffled answers lose their letters)."""
    from IPython.display import HTML, display
    qs = questions(chapter, letters=letters and not shuffle_answers)
    try:
        from jupyterquiz import display_quiz
    except ImportError:
        display(HTML(static_html(chapter, letters=letters)
                     + '<p style="font-size: 0.85em; color: #666">(Install <code>jupyterquiz</code> for the '
                       'interactive version: <code>pip install jupyterquiz</code>.)</p>'))
        return
    # jupyterquiz's script reads MathJax.version whenever a MathJax object exists; on a
    # page whose MathJax is still a configuration (the script has not loaded yet, or
    # could not: offline) that is undefined, and `version[0]` throws. Show its output
    # with that read guarded (jupyterquiz 2.9.6.4, pinned in requirements.txt).
    from jupyterquiz.dynamic import display as quiz_display
    shown = []
    real_display = quiz_display.display
    quiz_display.display = lambda obj, *a, **k: shown.append(obj)
    try:
        display_quiz(qs, shuffle_answers=shuffle_answers, max_width=max_width)
    finally:
        quiz_display.display = real_display
    from IPython.display import Javascript
    for obj in shown:
        if isinstance(obj, HTML):
            obj = HTML(QUIZ_CODE_CSS + obj.data)
        if isinstance(obj, Javascript):
            obj = Javascript(obj.data.replace("MathJax.version;", "(MathJax.version || '');"))
        display(obj)


def plain_text(chapter):
    """The questions, answers and feedback as text, for printing or for slides."""
    def strip(s):
        return html.unescape(re.sub(r"<[^>]+>", "", s))
    lines = []
    for q in questions(chapter):
        lines.append(strip(q["question"]))
        if q.get("code"):
            lines.append(strip(q["code"]))
        for a in q["answers"]:
            lines.append(f"  {strip(a['answer'])}{'  [right]' if a['correct'] else ''}")
            lines.append(f"      {strip(a.get('feedback', ''))}")
        lines.append("")
    return "\n".join(lines)
