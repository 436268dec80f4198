"""What a `%%cuda` cell says: the one reading of its magic line, shared by the magic
(tiling_course.magic), which IPython hands the line, and the grader
(tiling_course.grading.answers), which finds the cell in a notebook's text. So a cell graded is
a cell run: the same variable, the same compiler options.

    cudacell.parse("rect_src -std=c++17 -DUNROLL=4")   # CudaLine("rect_src", ("-std=c++17", "-DUNROLL=4"))
    cudacell.split(text)                                # (line, body) of a %%cuda cell, else None
    cudacell.normalize(text)                            # no byte-order mark, LF line ends

The line is the variable, then compiler options as a shell would split them (quotes
allowed: `-DNAME="a b"`).
"""
import re
import shlex
from dataclasses import dataclass

USAGE = "Usage: %%cuda VARIABLE [OPTIONS], then the CUDA C source on the following lines."
_VARIABLE = re.compile(r"[A-Za-z_]\w*")
# The cell magic's line: `%%cuda`, then whitespace and the rest, or nothing.
_MAGIC = re.compile(r"%%cuda(?:[ \t]+(.*))?")


@dataclass(frozen=True)
class CudaLine:
    variable: str
    options: tuple = ()


class CudaLineError(ValueError):
    """A %%cuda line that names no variable or cannot be split; `variable` is the first
    word where it is a variable's name (so the grader can say which part it spoils)."""

    def __init__(self, message, variable=""):
        super().__init__(message)
        self.variable = variable


def parse(line):
    """The CudaLine of the magic's line (what follows `%%cuda`); CudaLineError naming
    what is wrong and the usage."""
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    variable = first if _VARIABLE.fullmatch(first) else ""
    try:
        words = shlex.split(line)
    except ValueError as e:   # shlex's own words: "No closing quotation", "No escaped character"
        raise CudaLineError(f"`%%cuda {line.strip()}`: its options cannot be split ({e}). {USAGE}", variable) from None
    if not words or not variable or words[0] != variable:
        raise CudaLineError(f"`%%cuda {line.strip()}` names no Python variable to store the source in. {USAGE}")
    return CudaLine(variable, tuple(words[1:]))


def normalize(text):
    """Text as the compiler should see it: no byte-order mark, every line ending in LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split(text):
    """(the magic's line, the source below it) if `text` is a %%cuda cell, else None.

    As IPython reads a cell: blank lines before the magic are dropped, and the magic must
    start its line. The grader also forgives what an editor adds or a student writes that
    changes nothing in the CUDA: a byte-order mark, CRLF or CR line ends, and Python
    comment lines before the magic (IPython would refuse that cell, so the student saw
    the error; the CUDA is still theirs)."""
    lines = normalize(text).split("\n")
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
        lines.pop(0)
    if not lines:
        return None
    m = _MAGIC.fullmatch(lines[0].rstrip())
    if m is None:
        return None
    return m.group(1) or "", "\n".join(lines[1:])
