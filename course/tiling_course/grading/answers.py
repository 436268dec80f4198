"""A submission's answers, read as text: the CUDA of each graded part, and nothing else.
The grader never runs a submission's Python; it reads the notebook's JSON (or a .cu file)
and takes the CUDA out.

    answers.from_notebook(notebook, variables)   # {variable: Answer}; notebook: JSON text or bytes, or parsed
    answers.from_folder(folder, variables)       # a Gradescope upload: notebooks and .cu files (a Found)

The answer to part `v` is the source of the last code cell that is a `%%cuda v` cell (the
cell a top-to-bottom run would leave in `v`), with the compiler options of its magic line
(tiling_course.cudacell reads the line, as the magic does), or, in a folder, the file
`v.cu`, which wins over any notebook (a `%%cuda v ...` first line in it is read as in a
cell). Markdown and raw cells, cell metadata, outputs and Python cells are ignored: editing
a graded cell, its nbgrader metadata or its output changes nothing, since the grade is
computed from the CUDA alone. Text is UTF-8, with or without a byte-order mark, with any
line ends.

A folder is read by tiling_course.grading.submission, which follows no link and reads only
regular files, within limits; what it did not read is in Found.unread, with why.
"""
import json
from dataclasses import dataclass

from .. import cudacell
from . import submission

SOURCE_LIMIT = 64 * 1024     # bytes of CUDA per part (the judge grades none longer)


@dataclass(frozen=True)
class Answer:
    variable: str
    source: str
    where: str                # "cell 5 of a2.ipynb", "rect_src.cu"
    options: tuple = ()       # compiler options from the %%cuda line
    problem: str = ""         # why there is no source to grade (a %%cuda line that cannot be read, a file not read)


class Found(dict):
    """{variable: Answer}, and `unread`: {path: why} for the submission's files that were
    not read (links, special files, files too large, notebooks that are not notebooks)."""

    def __init__(self, found=(), unread=None):
        super().__init__(found)
        self.unread = dict(unread or {})


class Unreadable(ValueError):
    """The file is not a notebook the grader can read (the message says why, of "it")."""


def _cell_text(cell):
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _answer(text, variables, where, default=None):
    """The Answer that a cell's (or a file's) text gives, or None: `default` is the
    variable of a file without a %%cuda line (a .cu file), None for a cell."""
    cell = cudacell.split(text)
    if cell is None:
        return None if default is None else Answer(default, cudacell.normalize(text), where)
    line, body = cell
    try:
        parsed = cudacell.parse(line)
    except cudacell.CudaLineError as e:
        variable = default or e.variable
        return Answer(variable, "", where, problem=f"in {where}, {e}") if variable in variables else None
    variable = default or parsed.variable
    return Answer(variable, body, where, parsed.options) if variable in variables else None


def from_notebook(notebook, variables, name="the notebook"):
    """{variable: Answer} from a notebook: its JSON (text or bytes), or the parsed dict."""
    if isinstance(notebook, (str, bytes)):
        try:
            notebook = json.loads(notebook)   # bytes: UTF-8 with or without a byte-order mark
        except (ValueError, RecursionError) as e:
            raise Unreadable(f"it is not a notebook (not JSON: {str(e)[:200]})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise Unreadable("it is not a notebook (it has no cells)")
    found = {}
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        answer = _answer(_cell_text(cell), variables, f"cell {i} of {name}")
        if answer is not None:
            found[answer.variable] = answer
    return found


def from_folder(folder, variables):
    """Found: every notebook in `folder` (in path order; a later one's cell wins), then
    its `<variable>.cu` files (which win over notebooks; the first in path order), read by
    tiling_course.grading.submission. A `<variable>.cu` that was not read is that part's answer,
    with its reason, where no notebook answers it."""
    files_of = {f"{v}.cu": v for v in variables}
    files = submission.read_folder(folder, lambda name: name.endswith(".ipynb") or name in files_of)
    found = Found(unread=files.unread)
    for path, data in files.read.items():
        if path.endswith(".ipynb"):
            try:
                found.update(from_notebook(data, variables, name=path))
            except Unreadable as e:
                found.unread[path] = str(e)
    from_files = set()
    for path, data in files.read.items():
        variable = files_of.get(path.rsplit("/", 1)[-1])
        if variable and variable not in from_files:
            found[variable] = _answer(data.decode("utf-8-sig", errors="replace"), variables, path, variable)
            from_files.add(variable)
    for path, why in found.unread.items():
        variable = files_of.get(path.rsplit("/", 1)[-1])
        if variable and variable not in found:
            found[variable] = Answer(variable, "", path, problem=f"`{path}` was not read: {why}.")
    return found
