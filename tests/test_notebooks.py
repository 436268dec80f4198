"""The notebooks' kernel cells are the kernel files, character for character: a cell
tagged `kernel:<file>` holds `%%cuda <name>` and then exactly kernels/cuda/<file>, so the
.cu file stays the one source of truth. (nbval executes the notebooks themselves.)"""
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def kernel_cells():
    for nb in NOTEBOOKS:
        for cell in json.loads(nb.read_text())["cells"]:
            for tag in cell.get("metadata", {}).get("tags", []):
                if tag.startswith("kernel:"):
                    yield pytest.param(nb.name, tag[len("kernel:"):], "".join(cell["source"]),
                                       id=f"{nb.stem}:{tag}")


@pytest.mark.parametrize("notebook,file,source", list(kernel_cells()))
def test_kernel_cell_matches_its_file(notebook, file, source):
    first, _, body = source.partition("\n")
    assert first.startswith("%%cuda ")
    assert body.strip() == (ROOT / "kernels" / "cuda" / file).read_text().strip(), \
        f"{notebook}: the cell tagged kernel:{file} differs from kernels/cuda/{file}"


def test_every_chapter_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    for nb in NOTEBOOKS:
        assert f"book/{nb.stem}" in toc


def test_notebooks_hold_no_error_outputs():
    for nb in NOTEBOOKS:
        for cell in json.loads(nb.read_text())["cells"]:
            for out in cell.get("outputs", []):
                assert out.get("output_type") != "error", f"{nb.name} holds an error output"
