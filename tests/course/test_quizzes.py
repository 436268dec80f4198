"""The chapters' questions for the room (course/tiling_course/quizzes/*.json, shown by tiling_course.quiz.show):
every file is valid jupyterquiz input with feedback on every answer, show() renders a quiz
that needs no server, the notebook cells that show them exist, and the instructor's guide
points only at questions that exist."""
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tiling_course import quiz, registry

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
CHAPTERS = [c.stem for c in registry.CHAPTERS if c.quiz]
QUIZ_DIR = ROOT / "course" / "tiling_course" / "quizzes"
TEXT_TAGS = {"b", "i", "em", "strong", "code", "sub", "sup", "br"}


def _display_outputs(fn, *args, **kwargs):
    """Run fn under an IPython shell and return what it displayed (a list of mime bundles)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    created = not InteractiveShell.initialized()
    InteractiveShell.instance()
    try:
        with capture_output() as captured:
            fn(*args, **kwargs)
    finally:
        if created:  # leave no shell behind: other tests expect plain-text display
            InteractiveShell.clear_instance()
    return [o.data for o in captured.outputs]


class _TagChecker(HTMLParser):
    """Collects the tags of a snippet, and whether they nest and close properly."""
    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors = [], set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag != "br":
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(f"unbalanced </{tag}>")


def _texts(q):
    yield "question", q["question"]
    for i, a in enumerate(q["answers"]):
        yield f"answer {i}", a.get("answer", "")
        yield f"feedback {i}", a.get("feedback", "")


def test_every_chapter_has_a_quiz_and_every_quiz_a_chapter():
    assert CHAPTERS, "no chapter notebooks found"
    assert quiz.chapters() == CHAPTERS
    assert sorted(p.stem for p in QUIZ_DIR.glob("*.json")) == CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_quiz_is_valid(chapter):
    questions = json.loads((QUIZ_DIR / f"{chapter}.json").read_text(encoding="utf-8"))
    assert quiz.load(chapter) == questions
    assert isinstance(questions, list) and len(questions) >= 3, f"{chapter}: fewer than 3 questions"
    for n, q in enumerate(questions, start=1):
        where = f"{chapter} Q{n}"
        assert q.get("type") in ("multiple_choice", "many_choice"), where
        assert q.get("question", "").strip(), f"{where}: no question text"
        answers = q.get("answers")
        assert isinstance(answers, list) and len(answers) >= 3, f"{where}: fewer than 3 answers"
        for i, a in enumerate(answers):
            assert a.get("answer", "").strip(), f"{where} answer {i}: no text"
            assert isinstance(a.get("correct"), bool), f"{where} answer {i}: 'correct' must be true or false"
            assert len(a.get("feedback", "").strip()) >= 20, f"{where} answer {i}: no real feedback"
        n_correct = sum(a["correct"] for a in answers)
        if q["type"] == "multiple_choice":
            assert n_correct == 1, f"{where}: multiple_choice needs exactly one right answer, has {n_correct}"
        else:
            assert 2 <= n_correct < len(answers), f"{where}: many_choice needs 2 or more right answers and a wrong one"
        assert len({a["answer"] for a in answers}) == len(answers), f"{where}: repeated answers"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_quiz_text_survives_jupyterquiz_rendering(chapter):
    """jupyterquiz sets the texts as innerHTML and turns $...$ into math and [a](b) into
    links: texts may hold only simple, balanced tags, escaped '<', no '$' and no '](';
    code blocks are innerHTML too."""
    for n, q in enumerate(quiz.load(chapter), start=1):
        items = list(_texts(q)) + ([("code", q["code"])] if "code" in q else [])
        for what, text in items:
            where = f"{chapter} Q{n} {what}"
            assert "$" not in text, f"{where}: '$' would be typeset as math"
            assert "](" not in text, f"{where}: '](' would be turned into a link"
            assert "</script" not in text.lower() and "<!--" not in text, where
            checker = _TagChecker()
            checker.feed(text)
            checker.close()
            allowed = set() if what == "code" else TEXT_TAGS
            assert checker.tags <= allowed, f"{where}: tags {checker.tags - allowed} (escape '<' as &lt;)"
            assert not checker.errors and not checker.stack, f"{where}: {checker.errors or checker.stack}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_show_renders_a_static_quiz(chapter):
    pytest.importorskip("jupyterquiz")
    outputs = _display_outputs(quiz.show, chapter)
    assert len(outputs) == 2, outputs
    html, js = outputs[0].get("text/html", ""), outputs[1].get("application/javascript", "")
    div = re.search(r'<div id="([A-Za-z]+)"', html)
    assert div, "no quiz container in the HTML output"
    # The questions are embedded in the script, which shows them into that container;
    # nothing is fetched, so a static page or Colab's output frame is enough.
    assert f"var questions{div.group(1)}=" in js and "show_questions" in js and "try_show" in js
    assert "fetch(" not in js and "XMLHttpRequest" not in js
    number = quiz.chapter_number(chapter)
    for n, q in enumerate(quiz.load(chapter), start=1):
        assert f"Q{number}.{n}" in js
        for a in q["answers"]:
            assert json.dumps(a["feedback"])[1:-1] in js


def test_show_accepts_notebook_names_and_rejects_unknown_chapters():
    assert quiz.load("book/01_naive.ipynb") == quiz.load("01_naive")
    with pytest.raises(FileNotFoundError, match="01_naive"):
        quiz.load("99_nothing")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_show_without_jupyterquiz_falls_back_to_plain_html(chapter, monkeypatch):
    monkeypatch.setitem(sys.modules, "jupyterquiz", None)  # import jupyterquiz -> ImportError
    outputs = _display_outputs(quiz.show, chapter)
    assert len(outputs) == 1 and "text/html" in outputs[0]
    html = outputs[0]["text/html"]
    questions = quiz.load(chapter)
    assert html.count("<details") == sum(len(q["answers"]) for q in questions)
    assert html.count("&#10004; Right.") == sum(a["correct"] for q in questions for a in q["answers"])
    assert "<script" not in html


def test_answers_are_lettered_in_order_for_clickers():
    q = quiz.questions("02_tiling")[0]
    assert q["question"].startswith("<b>Q2.1</b> ")
    assert [a["answer"][:10] for a in q["answers"]] == [f"<b>{c}.</b> " for c in "ABCD"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_shows_its_quiz(chapter):
    cells = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text())["cells"]
    heading = [i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## Questions for the room")]
    assert len(heading) == 1
    shows = [c for c in cells[heading[0]:]
             if c["cell_type"] == "code" and f'quiz.show("{chapter}")' in "".join(c["source"])]
    assert len(shows) == 1 and "remove-input" in shows[0]["metadata"].get("tags", [])


def test_instructor_guide_points_at_existing_questions():
    guide = ROOT / "book" / "instructor.md"
    if not guide.exists():
        pytest.skip("no instructor's guide")
    refs = set(re.findall(r"\bQ(\d)\.(\d+)\b", guide.read_text()))
    assert refs, "the guide names no questions"
    counts = {quiz.chapter_number(c): len(quiz.load(c)) for c in CHAPTERS}
    for chapter, n in sorted(refs):
        assert int(chapter) in counts and 1 <= int(n) <= counts[int(chapter)], f"Q{chapter}.{n} does not exist"



NUMBER_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}


def test_instructor_guide_counts_and_lists_each_chapters_questions():
    """The guide's sentence "Chapters 1, 2 and 4 end with five questions each, chapters 5
    and 7 with six, ..." gives every chapter the number of questions its quiz file holds,
    and its table has one row per chapter, in order, naming exactly that chapter's questions."""
    guide = ROOT / "book" / "instructor.md"
    if not guide.exists():
        pytest.skip("no instructor's guide")
    text = guide.read_text()
    counts = {quiz.chapter_number(c): len(quiz.load(c)) for c in CHAPTERS}
    sentence = re.search(r"Chapters [^.]*? end with [^.]*\.", " ".join(text.split()))
    assert sentence, "the guide no longer says how many questions each chapter has"
    said = {}
    for chapters, word in re.findall(r"[Cc]hapters? ((?:\d+(?:, | and |,? and )?)+) (?:end )?with (\w+)",
                                     sentence[0]):
        for c in re.findall(r"\d+", chapters):
            assert int(c) not in said, f"chapter {c} is counted twice: {sentence[0]!r}"
            said[int(c)] = NUMBER_WORDS[word]
    assert said == counts, f"the guide says {said}, the quiz files hold {counts}: {sentence[0]!r}"
    rows = re.findall(r"^\| \[(\d+)\. [^\n]*$", text, re.M)
    assert [int(r) for r in rows] == sorted(counts), f"the table's rows are chapters {rows}"
    for line in re.findall(r"^\| \[\d+\. [^\n]*$", text, re.M):
        chapter = int(re.match(r"\| \[(\d+)\.", line)[1])
        named = [int(n) for c, n in re.findall(r"\bQ(\d)\.(\d+)\b", line) if int(c) == chapter]
        assert named == list(range(1, counts[chapter] + 1)), f"chapter {chapter}'s row names Q{chapter}.{named}"

CHROMIUM = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium")
def test_quiz_works_in_a_browser_from_a_static_file(tmp_path):
    """The displayed HTML and script, saved as a plain file and opened in headless
    Chromium: every question appears, and clicking answers gives their feedback."""
    pytest.importorskip("jupyterquiz")
    chapter = "03_syncthreads"
    outputs = _display_outputs(quiz.show, chapter)
    html, js = outputs[0]["text/html"], outputs[1]["application/javascript"]
    probe = """<script>window.addEventListener('load', function () { setTimeout(function () {
      var out = [], wraps = document.querySelectorAll('.Quiz');
      out.push('questions ' + wraps.length);
      wraps.forEach(function (w) {
        w.querySelectorAll('label.MCButton').forEach(function (l) {
          l.querySelector('span').click();
          var fb = w.querySelector('.Feedback');
          out.push((fb.classList.contains('correct') ? 'right' : 'wrong') + ' ' + fb.innerText.length);
        });
      });
      var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = out.join('\\n');
      document.body.appendChild(pre); }, 300); });</script>"""
    page = tmp_path / "quiz.html"
    page.write_text(f'<!doctype html><html><head><meta charset="utf-8"></head><body>{html}'
                    f'<script type="text/javascript">{js}</script>{probe}</body></html>', encoding="utf-8")
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = found.group(1).splitlines()
    questions = quiz.load(chapter)
    assert lines[0] == f"questions {len(questions)}"
    expected = [a["correct"] for q in questions for a in q["answers"]]
    got = lines[1:]
    assert [g.startswith("right") for g in got] == expected
    assert all(int(g.split()[1]) >= 20 for g in got), "an answer showed no feedback"
