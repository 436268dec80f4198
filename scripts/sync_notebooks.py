"""Keep what the notebooks repeat in step with its one source:

  * the set-up cell (tagged colab-setup), first code cell of every chapter, installs
    the book's package in Colab from the repository named in _config.yml (repository.url);
  * every cell tagged `kernel:<file>` holds `%%cuda <name>` and kernels/<file>;
  * every cell tagged `program:<file>` holds `%%cuda_program [options]` and the whole program
    tiling_course.programs.source() gives (the file with the book's kernels pasted in);
  * a chapter's exercise section, from its "## Exercises" heading to the end, holds the
    cells tiling_course.exercises.cells(<chapter>) gives (no solutions: the notebooks
    are the student edition);
  * course/tiling_course/exercises/student/, the exercise data the installed package
    ships, is what tiling_course.exercises.student_edition writes from the instructor's data.

The chapters are tiling_course.registry's; a notebook of book/ that is not one stops it.

    python scripts/sync_notebooks.py          # rewrite the notebooks
    python scripts/sync_notebooks.py --check  # exit 1 if any is out of step (tests run this)
"""
import json
import re
import sys
from pathlib import Path

from tiling_course import exercises, programs, registry
from tiling_course.exercises import student_edition

ROOT = Path(__file__).resolve().parent.parent

STUDENT_DATA = ROOT / "course" / "tiling_course" / "exercises" / "student"


def repository_url():
    m = re.search(r"^repository:\s*\n(?:\s+.*\n)*?\s+url:\s*(\S+)", (ROOT / "_config.yml").read_text(), re.M)
    return m.group(1)


def setup_cell_source():
    return (
        "# Set-up. In Colab this installs the book's package from its repository: the cudacheck\n"
        "# runtime and the tiling_course material, with what Colab lacks (libclang, jupyterquiz); its own\n"
        "# CuPy, ipywidgets, IPython, matplotlib and NumPy are left alone. Elsewhere it installs nothing.\n"
        "import sys\n"
        "if \"google.colab\" in sys.modules:\n"
        f"    %pip install --quiet \"git+{repository_url()}\"\n"
        "from tiling_course import notebook\n"
        "backend = notebook.setup()  # says where the kernels will run")


def _same(a, b):
    return (a["cell_type"] == b["cell_type"] and "".join(a["source"]) == "".join(b["source"])
            and a.get("metadata", {}).get("tags", []) == b.get("metadata", {}).get("tags", []))


def sync_exercises(nb, stem):
    """Bring the chapter's exercise section in step with tiling_course.exercises; returns changed."""
    if not exercises.chapter(stem):
        return False
    want = exercises.cells(stem)
    cells = nb["cells"]
    start = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                  and "".join(c["source"]).startswith("## Exercises")), len(cells))
    have = cells[start:]
    if len(have) == len(want) and all(_same(a, b) for a, b in zip(have, want)):
        return False
    # A cell that did not change keeps its outputs (and its id); a changed one takes the new
    # text and an id no other cell of the notebook has.
    kept = {("".join(c["source"]), c["cell_type"]): c for c in have}
    section = []
    for cell in want:
        same = kept.pop(("".join(cell["source"]), cell["cell_type"]), None)
        if same is not None and _same(same, cell):
            section.append(same)
            continue
        cell["source"] = "".join(cell["source"]).splitlines(keepends=True)
        section.append(cell)
    taken = {c.get("id") for c in cells[:start] + section if "id" in c}
    for i, cell in enumerate(section):
        if "id" not in cell:
            cell["id"] = next(cid for cid in (f"exercise-{i:03d}", *(f"exercise-{i:03d}-{n}" for n in range(1, 100)))
                              if cid not in taken)
            taken.add(cell["id"])
    nb["cells"] = cells[:start] + section
    return True


def sync(nb, stem=""):
    """The notebook with its set-up, kernel and exercise cells brought in step; returns
    (nb, changed)."""
    changed = sync_exercises(nb, stem)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    setup = setup_cell_source()
    first = code[0]
    if "colab-setup" not in first.get("metadata", {}).get("tags", []):
        first = {"cell_type": "code", "metadata": {"tags": ["colab-setup"]}, "source": "", "outputs": [],
                 "execution_count": None, "id": "colab-setup"}
        nb["cells"].insert(nb["cells"].index(code[0]), first)
        changed = True
    if "".join(first["source"]) != setup:
        first["source"], changed = setup.splitlines(keepends=True), True
    for cell in code:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith(("kernel:", "program:")):
                head = "".join(cell["source"]).split("\n", 1)[0]
                kind, name = tag.split(":", 1)
                if kind == "program":
                    assert name == programs.FILE, f"{tag}: the book has one whole program, {programs.FILE}"
                    body = programs.source()
                else:
                    body = (ROOT / "kernels" / name).read_text()
                want = head + "\n" + body.rstrip("\n")
                if "".join(cell["source"]) != want:
                    cell["source"], changed = want.splitlines(keepends=True), True
    return nb, changed


def student_data_stale():
    """The files of the student edition's exercise data that differ from what it should be."""
    want = student_edition.files()
    have = {str(p.relative_to(STUDENT_DATA)): p.read_text(encoding="utf-8")
            for p in [*STUDENT_DATA.glob("*.toml"), *STUDENT_DATA.glob("cu/*.cu")]}
    return sorted(name for name in set(want) | set(have) if want.get(name) != have.get(name))


def main(check=False):
    stale = []
    if student_data_stale():
        stale.append("exercises/student/")
        if not check:
            student_edition.write(STUDENT_DATA)
    unknown = sorted({p.name for p in (ROOT / "book").glob("*.ipynb")} - {c.notebook for c in registry.CHAPTERS})
    if unknown:
        print(f"not a chapter of tiling_course.registry: {', '.join(unknown)} (add it there)")
        return 1
    for path in (ROOT / "book" / c.notebook for c in registry.CHAPTERS):
        nb, changed = sync(json.loads(path.read_text()), path.stem)
        if changed:
            stale.append(path.name)
            if not check:
                path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    if check and stale:
        print("out of step with their sources: " + ", ".join(stale) + " (run python scripts/sync_notebooks.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv))
