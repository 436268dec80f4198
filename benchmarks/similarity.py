"""How long does the similarity report (tiling_course.grading.similarity) take for a class? A
synthetic class of g1_rect_tiles is written as nbgrader's submitted/ folder (half the
students upload the released notebook, half a rect_src.cu file), then the report is made
over it and timed, from reading the submissions to writing the Markdown.

Each student's kernel is one of three correct kernels written differently (the
instructor's solution and the two in tests/support/similarity_samples/), in that student's variant
(their tile sizes as the #define defaults; the solution cut down to their layout), with
small changes of their own: names renamed from a pool, comments and blank lines added,
`++i` written `i++`. So most pairs of the same kernel are near-copies and are listed: the
report's heaviest case, since copydetect works out the shared lines of every pair that
shares any fingerprint.

    python benchmarks/similarity.py                 # 300 students
    python benchmarks/similarity.py --students 60 --keep /tmp/class
"""
import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tiling_course.grading import rubric, similarity, variants

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENT, VARIABLE = "g1_rect_tiles", "rect_src"
SOURCE = ROOT / "assignments" / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
KERNELS = [ROOT / "assignments" / "hidden" / "solutions" / f"{ASSIGNMENT}.cu",
           *sorted((ROOT / "tests" / "support" / "similarity_samples").glob("rect_*.cu"))]
# Names a student may give the kernels' variables instead.
RENAMES = {"As": "tileA", "Bs": "tileB", "sA": "a_s", "sB": "b_s", "sum": "total", "acc": "result", "tx": "lx",
           "ty": "ly", "tid": "me", "ph": "phase", "p0": "base", "gr": "grow", "gc": "gcol", "r": "rr", "c": "cc"}


def own_layout(text, layout):
    """The instructor's solution answers every layout behind #if defined(LAYOUT_..); a student
    writes theirs only."""
    def pick(m):
        return m.group(2) if m.group(1) == layout else m.group(3)
    return re.sub(r"#if defined\(LAYOUT_(\w+)\)\n(.*?)\n#else\n(.*?)\n#endif", pick, text, flags=re.S)


def student_kernel(kernel, variant, rng):
    """One student's version of `kernel` (a source) in their variant, with small changes."""
    text = "\n".join(line for line in own_layout(kernel, variant["layout"]).split("\n") if not line.startswith("//"))
    for macro in ("TILE_M", "TILE_N", "TILE_K"):
        text = re.sub(rf"#define {macro} \d+", f"#define {macro} {variant[macro]}", text)
    for old, new in RENAMES.items():
        if rng.random() < 0.5:
            text = re.sub(rf"\b{old}\b", new, text)
    lines = text.split("\n")
    for _ in range(rng.randrange(4)):
        lines.insert(rng.randrange(len(lines)), rng.choice(["", "    // my notes", "    /* load the tiles */"]))
    text = "\n".join(lines)
    return re.sub(r"\+\+(\w+)\)", r"\1++)", text) if rng.random() < 0.5 else text


def write_class(course, students, seed=0):
    """nbgrader's course folder in `course`: source/ and submitted/<student>/<assignment>/."""
    rng = random.Random(seed)
    part = rubric.part(ASSIGNMENT, VARIABLE)
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(SOURCE, course / "source" / ASSIGNMENT)
    notebook = json.loads(SOURCE.read_text())
    cell = next(c for c in notebook["cells"] if "".join(c["source"]).startswith(f"%%cuda {VARIABLE}"))
    kernels = [k.read_text() for k in KERNELS]
    for i in range(students):
        sid = f"s{i:04d}"
        folder = course / "submitted" / sid / ASSIGNMENT
        folder.mkdir(parents=True)
        text = student_kernel(kernels[i % len(kernels)], variants.of(part, sid), rng)
        if i % 2:
            (folder / f"{VARIABLE}.cu").write_text(text)
        else:
            cell["source"] = f"%%cuda {VARIABLE}\n{text}"
            (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--keep", default=None, help="write the class here and keep it (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(args.keep or tmp) / "course"
        write_class(course, args.students)
        # What the command does, without printing: read the class, compare, write the Markdown.
        start, cpu = time.perf_counter(), time.process_time()
        found = similarity.nbgrader_class(course / "submitted", ASSIGNMENT)
        (part,) = similarity.report(ASSIGNMENT, found, similarity.templates(course, ASSIGNMENT))
        (course / "similarity.md").write_text(part.markdown())
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{args.students} submissions ({len(part.compared)} compared, {len(part.not_compared)} not), "
          f"{args.students * (args.students - 1) // 2} pairs, {len(part.pairs)} listed at {part.threshold:.0%}: "
          f"{elapsed:.1f} s ({cpu:.1f} s of CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
