"""Keep what the notebooks repeat in step with its one source:

  * the set-up cell (tagged colab-setup), first code cell of every chapter, installs
    `kernels` in Colab from the repository named in _config.yml (repository.url);
  * every cell tagged `kernel:<file>` holds `%%cuda <name>` and kernels/cuda/<file>.

    python scripts/sync_notebooks.py          # rewrite the notebooks
    python scripts/sync_notebooks.py --check  # exit 1 if any is out of step (tests run this)
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def repository_url():
    m = re.search(r"^repository:\s*\n(?:\s+.*\n)*?\s+url:\s*(\S+)", (ROOT / "_config.yml").read_text(), re.M)
    return m.group(1)


def setup_cell_source():
    return (
        "# Set-up. In Colab this installs the book's `kernels` package from its repository (CuPy and\n"
        "# ipywidgets are already there and are left alone); anywhere else it installs nothing.\n"
        "import sys\n"
        "if \"google.colab\" in sys.modules:\n"
        f"    %pip install --quiet --no-deps \"git+{repository_url()}\"\n"
        "from kernels import notebook\n"
        "backend = notebook.setup()  # says where the kernels will run")


def sync(nb):
    """The notebook with its set-up and kernel cells brought in step; returns (nb, changed)."""
    changed = False
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
                want = head + "\n" + (ROOT / "kernels" / "cuda" / tag[len("kernel:"):]).read_text().rstrip("\n")
                if "".join(cell["source"]) != want:
                    cell["source"], changed = want, True
    return nb, changed


def main(check=False):
    stale = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        nb, changed = sync(json.loads(path.read_text()))
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
