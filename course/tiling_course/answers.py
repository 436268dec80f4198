"""A submission's answers, read as text: the CUDA of each graded part, and nothing else.
The grader never runs a submission's Python; it reads the notebook's JSON (or a .cu file)
and takes the CUDA out.

    answers.from_notebook(path_or_json, variables)   # {variable: Answer}
    answers.from_folder(folder, variables)            # a Gradescope upload: notebooks and .cu files

The answer to part `v` is the source of the last code cell whose first line is
`%%cuda v` (the cell a top-to-bottom run would leave in `v`), or, in a folder, the file
`v.cu`, which wins over any notebook. Markdown and raw cells, cell metadata, outputs and
Python cells are ignored: editing a graded cell, its nbgrader metadata or its output
changes nothing, since the grade is computed from the CUDA alone.
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

NOTEBOOK_LIMIT = 16 << 20     # bytes of a notebook the grader reads
_MAGIC = re.compile(r"%%cuda[ \t]+([A-Za-z_]\w*)[ \t]*$")


@dataclass(frozen=True)
class Answer:
    variable: str
    source: str
    where: str                # "cell 5 of a2.ipynb", "rect_src.cu"


class Unreadable(ValueError):
    """The submission is not a notebook the grader can read."""


def _cell_text(cell):
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def from_notebook(notebook, variables, name="the notebook"):
    """{variable: Answer} from a notebook: a path, its JSON text, or the parsed dict."""
    if isinstance(notebook, (str, Path)) and not str(notebook).lstrip().startswith("{"):
        path = Path(notebook)
        name = path.name
        if path.stat().st_size > NOTEBOOK_LIMIT:
            raise Unreadable(f"{name} is over {NOTEBOOK_LIMIT >> 20} MiB")
        notebook = path.read_text(encoding="utf-8", errors="replace")
    if isinstance(notebook, str):
        try:
            notebook = json.loads(notebook)
        except ValueError as e:
            raise Unreadable(f"{name} is not a notebook (not JSON: {e})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise Unreadable(f"{name} is not a notebook (it has no cells)")
    found = {}
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        first, _, rest = _cell_text(cell).partition("\n")
        m = _MAGIC.fullmatch(first.strip())
        if m and m.group(1) in variables:
            found[m.group(1)] = Answer(m.group(1), rest, f"cell {i} of {name}")
    return found


def from_folder(folder, variables):
    """{variable: Answer} from every notebook in `folder` (in name order; a later one's
    cell wins) and its `<variable>.cu` files (which win over notebooks)."""
    folder = Path(folder)
    found = {}
    for path in sorted(folder.rglob("*.ipynb")):
        if any(part.startswith(".") or part == "__MACOSX" for part in path.relative_to(folder).parts):
            continue
        try:
            found.update(from_notebook(path, variables))
        except (Unreadable, OSError):
            continue
    for variable in variables:
        matches = sorted(p for p in folder.rglob(f"{variable}.cu") if p.is_file())
        if matches and matches[0].stat().st_size <= NOTEBOOK_LIMIT:
            found[variable] = Answer(variable, matches[0].read_text(encoding="utf-8", errors="replace"),
                                     str(matches[0].relative_to(folder)))
    return found
