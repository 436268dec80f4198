"""The GPU the student has. The book's numbers come from an H100 and an H200; most students
run it on Colab's T4. Three rules keep the prose honest about that, and light to read:

* a chapter that states an H100/H200-specific number or fact (a sentence that names the
  H100, H200 or Hopper and gives a number, or a fact only those GPUs have: 132
  multiprocessors, 50-60 MB of L2, 228 KB of shared memory, 64 warps, 32 blocks, TB/s and
  TFLOP/s, the tensor memory accelerator, ...) gathers what differs on a T4 in one box, a
  markdown cell that is a ```{admonition} On Colab's T4``` block, before its exercises;
  outside the box at most T4_ASIDES paragraphs of a chapter name the T4 (where the T4 is
  part of the lesson: the occupancy limits, the device query), so the notes are not an
  aside in every paragraph;
* elsewhere, where there are no chapters' boxes, every paragraph that states such a number
  has a note on the T4 in the same paragraph or the next one: book/*.md, each quiz question
  (its question, answers and feedback together) and the comments of kernels/*.cu;
* what the prose says of the T4 agrees with perfplots.T4_LIMITS (the occupancy table's
  limits) and with the T4's datasheet below, so the text and the table cannot disagree.
"""
import html
import json
import re
from pathlib import Path

import pytest

from tiling_course import perfplots
from tiling_course.measure import perfdata

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
BOOK = ROOT / "book"
CHAPTERS = sorted(BOOK.glob("[0-9][0-9]_*.ipynb"))
PAGES = sorted(BOOK.glob("*.md"))
QUIZZES = sorted((ROOT / "course" / "tiling_course" / "quizzes").glob("*.json"))
KERNELS = sorted((ROOT / "kernels").glob("*.cu"))

T4 = perfplots.T4_LIMITS
# The T4's facts that are not occupancy limits. The NVIDIA T4 datasheet and its spec tables
# (TU104, 2,560 CUDA cores in 40 SMs, boost clock 1590 MHz, 16 GB GDDR6 on 256 bits at
# 320 GB/s, 4 MB of L2); the Turing Tuning Guide (64 FP32 cores, 65,536 32-bit registers
# and at most 255 per thread, per SM; one block may address all 64 KB of shared memory,
# 48 KB of it statically).
T4_SPEC = {"sm_count": 40, "clock_mhz": 1590, "l2_mb": 4, "dram_gbs": 320,
           "registers_per_sm": 65536, "registers_per_thread": 255, "static_smem_per_block_kb": 48}
T4_FP32_LANES = perfplots.FP32_LANES_PER_SM["7.5"]
T4_PEAK_TFLOPS = T4_SPEC["sm_count"] * T4_FP32_LANES * 2 * T4_SPEC["clock_mhz"] / 1e6

DEVICE = re.compile(r"\bH[12]00\b|\bHopper\b")
# Facts of the reference GPUs (compute capability 9.0), whether or not the sentence names them.
REFERENCE_FACTS = [re.compile(p) for p in (
    r"\b132 (?:multiprocessors|SMs)\b", r"\b(?:50|60) MB\b", r"\b22[78] KB\b", r"\b2,?048 threads\b",
    r"\b64 warps\b", r"\b32 blocks\b", r"\d ?TB/s", r"(?<![\w.])\d[\d,.]* ?GB/s", r"\bTFLOP/s\b",
    r"\bGHz\b", r"\bTMA\b", r"(?i)tensor memory accelerator", r"(?i)\bwgmma\b",
    r"(?i)thread block clusters?", r"(?i)distributed shared memory", r"compute capability 9\.0")]
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*\[\"“])")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def _plain(text):
    """Prose only: no code blocks (a {note} block is prose), no link targets, HTML as text."""
    text = re.sub(r"^```(?!\{)[^\n]*\n.*?^```[ \t]*$", "", text, flags=re.M | re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return html.unescape(re.sub(r"</?[A-Za-z][^<>]*>", "", text))


def _paragraphs(text):
    return [p.strip() for p in re.split(r"\n[ \t]*\n", _plain(text)) if p.strip()]


def _sentences(paragraph):
    """Sentences; each list item and table row starts a new one."""
    lines = re.split(r"\n(?=[ \t]*(?:\d+\.|[-*|])\s)", paragraph)
    return [s for line in lines for s in SENTENCE_END.split(line.replace("\n", " ")) if s.strip()]


def states_reference_number(paragraph):
    """Does the paragraph state a number or fact that belongs to the H100/H200?"""
    paragraph = _plain(paragraph)
    if any(p.search(paragraph) for p in REFERENCE_FACTS):
        return True
    for s in _sentences(paragraph):
        if DEVICE.search(s):
            rest = re.sub(r"^\s*(?:\d+\.|[-*])\s+", "", DEVICE.sub("", s))   # list markers
            if NUMBER.search(rest):
                return True
    return False


def missing_notes(paragraphs):
    """Indexes of the paragraphs that state a reference GPU's number with no T4 note beside
    them (in the paragraph itself or the next one)."""
    return [i for i, p in enumerate(paragraphs) if states_reference_number(p)
            and "T4" not in p and not (i + 1 < len(paragraphs) and "T4" in paragraphs[i + 1])]


def _markdown_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(i, c.get("id"), "".join(c["source"])) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"]


def _quiz_texts(path):
    """Each question's texts, joined: a note anywhere in a question covers the question."""
    for n, q in enumerate(json.loads(path.read_text(encoding="utf-8")), start=1):
        parts = [q["question"]] + [t for a in q["answers"] for t in (a.get("answer", ""), a.get("feedback", ""))]
        yield n, "\n\n".join(parts)


def _comments(path):
    """A kernel's // comments, their blank comment lines kept as paragraph breaks."""
    return "\n".join(m.group(1) for m in re.finditer(r"^\s*//[ \t]?(.*)$", path.read_text(), re.M))


def _excerpt(p):
    return re.sub(r"\s+", " ", p)[:160]


def test_the_checks_see_what_they_should():
    assert states_reference_number("On the H200 at Width 4096 the tiled kernel takes 16.904 ms.")
    assert states_reference_number("Small products cannot fill a GPU with 132 multiprocessors.")
    assert states_reference_number("The H100 and H200 have 50 to 60 MB of L2 cache.")
    assert states_reference_number("and on Hopper the tensor memory accelerator).")
    assert not states_reference_number("This chapter climbs toward it, each rung measured on an H100 and an H200.")
    assert not states_reference_number("Logs of the same bugs under compute-sanitizer on an H200 are in `logs/`.")
    assert not states_reference_number("5. **[Performance](05_performance)**: measured on an H100 and an H200.")
    assert states_reference_number("`if (row < width)` guards it. On the H200, 144 of 400 are wrong: W<sup>3</sup>.")
    assert missing_notes(["On the H200: 1.56.", "On a T4 it differs."]) == []
    assert missing_notes(["On the H200: 1.56.", "Nothing here.", "On a T4 it differs."]) == [0]


T4_BOX = "```{admonition} On Colab's T4"
T4_ASIDES = 2   # paragraphs outside the box that may name the T4


def is_t4_box(source):
    return source.lstrip().startswith(T4_BOX)


def chapter_t4_problems(cells):
    """What is wrong with a chapter's T4 notes; `cells` are its markdown cells as (index, id,
    source). A chapter that states a reference GPU's number needs exactly one T4 box, before
    its exercises; outside the box, at most T4_ASIDES paragraphs name the T4."""
    exercises = next((i for i, _, s in cells if s.startswith("## Exercises")), None)
    boxes = [(i, cid) for i, cid, s in cells if is_t4_box(s)]
    stating = [(i, cid, p) for i, cid, s in cells if not is_t4_box(s)
               for p in _paragraphs(s) if states_reference_number(p)]
    asides = [(i, cid, p) for i, cid, s in cells if not is_t4_box(s) for p in _paragraphs(s) if "T4" in p]
    problems = []
    if stating and not boxes:
        i, cid, p = stating[0]
        problems.append(f"H100/H200 numbers (first: cell {i} ({cid}): {_excerpt(p)}) and no box that starts "
                        f"with {T4_BOX!r}")
    if len(boxes) > 1:
        problems.append(f"{len(boxes)} T4 boxes (cells {', '.join(str(i) for i, _ in boxes)}); one gathers them")
    if boxes and exercises is not None and boxes[0][0] > exercises:
        problems.append(f"the T4 box (cell {boxes[0][0]}) comes after the exercises")
    if len(asides) > T4_ASIDES:
        problems.append(f"{len(asides)} paragraphs outside the box name the T4 (at most {T4_ASIDES}): "
                        + "; ".join(f"cell {i} ({cid}): {_excerpt(p)}" for i, cid, p in asides))
    return problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_gathers_its_t4_notes_in_one_box(path):
    problems = chapter_t4_problems(_markdown_cells(path))
    assert not problems, f"{path.name}: " + "\n  ".join(problems)


def test_the_chapter_rule_fails_without_the_box():
    numbers = (3, "c1", "On the H200 at Width 4096 the tiled kernel takes 16.904 ms.")
    box = (5, "c2", T4_BOX + "\n:class: tip\nOn a T4 it takes longer.\n```")
    exercises = (7, "ex", "## Exercises\n\nEach exercise...")
    assert chapter_t4_problems([numbers, box, exercises]) == []
    assert chapter_t4_problems([(1, "c0", "No GPU numbers here."), exercises]) == []
    missing = chapter_t4_problems([numbers, exercises])
    assert len(missing) == 1 and "no box" in missing[0] and "cell 3 (c1)" in missing[0]
    assert "after the exercises" in chapter_t4_problems([numbers, exercises, (9, "c3", box[2])])[0]
    assert "2 T4 boxes" in chapter_t4_problems([numbers, box, (6, "c3", box[2]), exercises])[0]
    asides = [(10 + i, f"a{i}", f"On a T4 this takes {i} seconds longer.") for i in range(T4_ASIDES + 1)]
    assert "paragraphs outside the box name the T4" in chapter_t4_problems([numbers, box, *asides, exercises])[0]
    # the box must be a box: a paragraph that merely starts "On Colab's T4" is not one
    assert "no box" in chapter_t4_problems([numbers, (5, "c2", "On Colab's T4 it takes longer."), exercises])[0]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_page_notes_the_t4_beside_reference_numbers(path):
    paras = _paragraphs(path.read_text(encoding="utf-8"))
    problems = [f"paragraph {i + 1}: {_excerpt(paras[i])}" for i in missing_notes(paras)]
    assert not problems, f"{path.name}: H100/H200 numbers with no note on Colab's T4:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", QUIZZES, ids=lambda p: p.stem)
def test_quiz_notes_the_t4_beside_reference_numbers(path):
    problems = [f"Q{n}: {_excerpt(_plain(text))}" for n, text in _quiz_texts(path)
                if any(states_reference_number(p) for p in _paragraphs(text)) and "T4" not in text]
    assert not problems, f"{path.name}: questions with H100/H200 numbers and no T4 note:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_kernel_comments_note_the_t4_beside_reference_numbers(path):
    paras = [p for p in re.split(r"\n\s*\n", _comments(path)) if p.strip()]
    problems = [f"comment paragraph {i + 1}: {_excerpt(paras[i])}" for i in missing_notes(paras)]
    assert not problems, f"{path.name}: H100/H200 numbers with no note on the T4:\n  " + "\n  ".join(problems)


# ---- What the book says of the T4 agrees with the limits and the datasheet ----------------

def _num(s):
    return float(s.replace(",", ""))


# In a sentence about the T4 alone: each (pattern, the values it may state, what it is).
T4_ONLY_CLAIMS = [
    (r"(?<![\w.])(\d+) warps\b", {T4["warps_per_sm"]}, "warps per multiprocessor"),
    (r"(?<![\w.])(\d[\d,]*) threads (?:per|on each|on a|on one) (?:multiprocessor|SM)\b",
     {32 * T4["warps_per_sm"]}, "threads per multiprocessor"),
    (r"(?<![\w.])(\d+) blocks (?:per|on each|on a|on one) (?:multiprocessor|SM)\b", {T4["blocks_per_sm"]},
     "blocks per multiprocessor"),
    (r"(?<![\w.])\d+ warps, (\d+) blocks\b", {T4["blocks_per_sm"]}, "blocks per multiprocessor"),
    (r"(?<![\w.])(\d+(?:\.\d+)?) KB\b", {T4["smem_per_sm"] // 1024, T4_SPEC["static_smem_per_block_kb"]},
     "KB of shared memory"),
    (r"(?<![\w.])(\d+) MB (?:of )?L2\b|\bL2(?: cache)?(?:,[^,]*,)?(?: is| of)? (\d+) MB\b", {T4_SPEC["l2_mb"]},
     "MB of L2"),
    (r"(?<![\w.])(\d+) (?:multiprocessors|SMs)\b", {T4_SPEC["sm_count"]}, "multiprocessors"),
    (r"(?<![\w.])(\d[\d,]*) GB/s", {T4_SPEC["dram_gbs"]}, "GB/s of memory bandwidth"),
    (r"(?<![\w.])(\d+) FP32 lanes", {T4_FP32_LANES}, "FP32 lanes per multiprocessor"),
    (r"(?<![\w.])(\d[\d,]*) registers\b", {T4_SPEC["registers_per_sm"], T4_SPEC["registers_per_thread"]}, "registers"),
    (r"(?<![\w.])(\d{3,4}) MHz", {T4_SPEC["clock_mhz"]}, "MHz"),
    (r"(?<![\w.])(\d\.\d+) GHz", {T4_SPEC["clock_mhz"] / 1000}, "GHz"),
]
PAIR = re.compile(r"(?<![\w.])(\d[\d,]*) on (?:Colab's |a |the )?T4\b")
BEFORE = re.compile(r"(?<![\w.])(\d[\d,]*)(?: ([A-Za-z]+))?")
UNITS = {"warps": "warps_per_sm", "blocks": "blocks_per_sm"}


def t4_claims_that_disagree(text):
    """Every statement about the T4 in the text whose number is not the T4's."""
    wrong = []
    for s in (s for p in _paragraphs(text) for s in _sentences(p) if "T4" in s):
        # "32 on an H100 or H200 and 16 on Colab's T4", "at most 32 blocks (16 on a T4)": the
        # number just before is a compute capability 9.0 limit, and the T4's must be its own.
        for m in PAIR.finditer(s):
            before = list(BEFORE.finditer(s[max(0, m.start() - 60):m.start()]))
            if not before:
                continue
            value, unit = before[-1].group(1), before[-1].group(2)
            keys = ([UNITS[unit]] if unit in UNITS else
                    [k for k, v in perfplots.CC90_LIMITS.items() if k.endswith("_sm") and v == _num(value)])
            if len(keys) == 1 and _num(m.group(1)) != T4[keys[0]]:
                wrong.append(f"{m.group(0)!r} (a T4 has {T4[keys[0]]} {keys[0]}): {_excerpt(s)}")
        if DEVICE.search(s) or "9.0" in s:
            continue        # a comparison: its other numbers are the reference GPUs'
        for pattern, allowed, what in T4_ONLY_CLAIMS:
            for m in re.finditer(pattern, s):
                value = _num(next(g for g in m.groups() if g))
                if value not in allowed:
                    wrong.append(f"{m.group(0)!r}: a T4 has {sorted(allowed)} {what}: {_excerpt(s)}")
        if "peak" in s:
            for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?) TFLOP/s", s):
                if abs(_num(m.group(1)) - T4_PEAK_TFLOPS) > 0.05:
                    wrong.append(f"{m.group(0)!r}: a T4's FP32 peak is {T4_PEAK_TFLOPS:.2f} TFLOP/s: {_excerpt(s)}")
    return wrong


def test_the_t4_facts_hold_together():
    assert T4["warps_per_sm"] * 32 == 1024 and T4["blocks_per_sm"] == 16 and T4["smem_per_sm"] == 64 * 1024
    assert T4["smem_reserved_per_block"] == 0          # the 1 KB per block came with compute capability 8.0
    assert round(T4_PEAK_TFLOPS, 1) == 8.1             # 40 SMs x 64 lanes x 2 FLOP x 1.59 GHz
    # A T4 has more FLOP per byte of DRAM bandwidth than either reference GPU (chapter 2 says so).
    for ds in perfdata.datasets():                     # h100.json, h200.json
        name, dev = ds.source, ds.gpu
        peak = dev["sm_count"] * perfplots.FP32_LANES_PER_SM[dev["compute_capability"]] * 2 * dev["clock_mhz"] / 1e6
        dram_tbs = dev["memory_clock_mhz"] * 2 * dev["bus_width_bits"] / 8 / 1e6
        assert T4_PEAK_TFLOPS / (T4_SPEC["dram_gbs"] / 1000) > peak / dram_tbs, name
        assert dev["l2_bytes"] > 10 * T4_SPEC["l2_mb"] * 2 ** 20, name


def test_the_fact_check_catches_a_wrong_t4_number():
    assert t4_claims_that_disagree("On Colab's T4: 32 warps, 16 blocks, 64 KB.") == []
    assert t4_claims_that_disagree("up to 32 on an H100 or H200 and 16 on Colab's T4.") == []
    assert t4_claims_that_disagree("at most 32 blocks (16 on a T4), most of its lanes idle.") == []
    assert t4_claims_that_disagree("On Colab's T4: 64 warps, 16 blocks, 64 KB.")
    assert t4_claims_that_disagree("up to 32 on an H100 or H200 and 32 on Colab's T4.")
    assert t4_claims_that_disagree("Colab's T4 has 46 multiprocessors and a 6 MB L2.")
    assert t4_claims_that_disagree("Colab's T4 has an FP32 peak of about 65 TFLOP/s.")


def _all_prose():
    for path in CHAPTERS:
        for index, cell_id, source in _markdown_cells(path):
            yield f"{path.name} cell {index} ({cell_id})", source
    for path in PAGES:
        yield path.name, path.read_text(encoding="utf-8")
    for path in QUIZZES:
        for n, text in _quiz_texts(path):
            yield f"{path.name} Q{n}", text
    for path in KERNELS:
        yield path.name, _comments(path)


def test_what_the_book_says_of_the_t4_agrees_with_its_limits():
    wrong = [f"{where}: {w}" for where, text in _all_prose() for w in t4_claims_that_disagree(text)]
    assert not wrong, "T4 facts that disagree with perfplots.T4_LIMITS or the datasheet:\n  " + "\n  ".join(wrong)


def test_the_book_states_the_t4_limits_it_computes_with():
    """The limits the occupancy table uses for a T4 appear in the prose, so a change to either
    is seen: 32 warps, 16 blocks and 64 KB per multiprocessor."""
    text = "\n".join(t for _, t in _all_prose())
    t4 = " ".join(s for p in _paragraphs(text) for s in _sentences(p) if "T4" in s)
    for claim in (f"{T4['warps_per_sm']} warps", f"{T4['blocks_per_sm']} on", f"{T4['smem_per_sm'] // 1024} KB"):
        assert claim in t4, f"no sentence about the T4 states {claim!r}"
