"""Keep what the notebooks repeat in step with its one source:

  * the set-up cell (tagged colab-setup), first code cell of every chapter, installs
    cudacheck and tiling-course in Colab from the repository named in _config.yml
    (repository.url);
  * every cell tagged `kernel:<file>` holds `%%cuda <name>` and course/tiling_course/cuda/<file>;
  * a chapter's exercise section, from its "## Exercises" heading to the end, is what
    tiling_course.exercises.authoring(<chapter>) defines.

    python scripts/sync_notebooks.py          # rewrite the notebooks
    python scripts/sync_notebooks.py --check  # exit 1 if any is out of step (tests run this)
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "runtime"), str(ROOT / "course")]
from tiling_course import exercises  # noqa: E402  (the repository's package, not an installed copy)


def repository_url():
    m = re.search(r"^repository:\s*\n(?:\s+.*\n)*?\s+url:\s*(\S+)", (ROOT / "_config.yml").read_text(), re.M)
    return m.group(1)


def colab_requirements(url=None):
    """What the set-up cell asks pip for in Colab: the two packages, from the repository's
    subfolders (tests/test_wheel.py resolves the same list against Colab's versions)."""
    url = url or repository_url()
    return [f"cudacheck @ git+{url}#subdirectory=runtime", f"tiling-course @ git+{url}#subdirectory=course"]


def setup_cell_source():
    packages = " ".join(f'"{r}"' for r in colab_requirements())
    return (
        "# Set-up. In Colab this installs the book's two packages from its repository, the cudacheck\n"
        "# runtime and the tiling_course material, with what Colab lacks (libclang, jupyterquiz); its own\n"
        "# CuPy, ipywidgets, IPython, matplotlib and NumPy are left alone. Elsewhere it installs nothing.\n"
        "import sys\n"
        "if \"google.colab\" in sys.modules:\n"
        f"    %pip install --quiet {packages}\n"
        "from tiling_course import notebook\n"
        "backend = notebook.setup()  # says where the kernels will run")


def cells_from_authoring(text):
    """Notebook cells from the authoring format: Markdown cells separated by `+++` lines,
    code cells fenced as ```{code-cell} ipython3 ... ```, an optional `:tags: [...]` first."""
    cells, pos = [], 0

    def markdown(part):
        for piece in part.split("\n+++\n"):
            if piece.strip():
                cells.append({"cell_type": "markdown", "metadata": {}, "source": piece.strip("\n")})
    for m in re.finditer(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", text, re.S | re.M):
        markdown(text[pos:m.start()])
        body, tags = m.group(1), []
        t = re.match(r":tags:\s*\[(.*?)\]\n", body)
        if t:
            tags, body = [x.strip() for x in t.group(1).split(",") if x.strip()], body[t.end():]
        cells.append({"cell_type": "code", "metadata": {"tags": tags} if tags else {}, "source": body.rstrip("\n"),
                      "outputs": [], "execution_count": None})
        pos = m.end()
    markdown(text[pos:])
    return cells


def _same(a, b):
    return (a["cell_type"] == b["cell_type"] and "".join(a["source"]) == "".join(b["source"])
            and a.get("metadata", {}).get("tags", []) == b.get("metadata", {}).get("tags", []))


def sync_exercises(nb, stem):
    """Bring the chapter's exercise section in step with tiling_course.exercises; returns changed."""
    if not exercises.chapter(stem):
        return False
    want = cells_from_authoring(exercises.authoring(stem))
    cells = nb["cells"]
    start = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                  and "".join(c["source"]).startswith("## Exercises")), len(cells))
    have = cells[start:]
    if len(have) == len(want) and all(_same(a, b) for a, b in zip(have, want)):
        return False
    for i, cell in enumerate(want):
        cell["id"] = f"exercise-{i:03d}"
    nb["cells"] = cells[:start] + want
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
        first["source"], changed = setup, True
    for cell in code:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith("kernel:"):
                head = "".join(cell["source"]).split("\n", 1)[0]
                want = head + "\n" + (ROOT / "course" / "tiling_course" / "cuda" / tag[len("kernel:"):]).read_text().rstrip("\n")
                if "".join(cell["source"]) != want:
                    cell["source"], changed = want, True
    return nb, changed


def main(check=False):
    stale = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
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
