"""The exercises' data model: an Exercise, its sources (Source: a kernel of the book, a
wrong kernel, a file of cu/, an edit of another source, ...) and its known wrong answers
(Wrong), as the loader (loading.py) builds them from the TOML files; and the errors of the
data and of the student edition."""
import re
from dataclasses import dataclass

from .. import corpus, matmul, programs, sources, tasks


class DataError(ValueError):
    """An exercise data file that is missing, not TOML, or not what the loader expects."""


class NotInThisEdition(LookupError):
    """A solution asked of the student edition, which does not hold any."""


INSTRUCTOR_EDITION = ("The solutions are in the instructor edition of the book, which your instructor has "
                      "(`make editions` in the book's repository builds it).")


@dataclass(frozen=True)
class Source:
    """A source as the data gives it; text() builds it."""
    exercise: str                   # whose source it is, for the errors
    book: str = ""                  # a kernel of tiling_course.matmul
    kernel_file: str = ""           # a whole file of the book's kernels (tiling_course.sources)
    wrong: str = ""                 # a wrong kernel of tiling_course.corpus
    file: str = ""                  # a file of cu/, read into `code` when the data is loaded
    code: str = ""                  # that file's text, or a value exercise's Python code
    base: "Source | None" = None    # the exercise's solution, for {solution = true}
    program: bool = False           # chapter 7's whole program, for {program = true}
    host_bug: str = ""              # one of its host-side bugs (programs.BUGS)
    edits: tuple = ()               # (old, new) pairs

    def text(self):
        # Built on every call, never stored: a change to a book kernel shows at once.
        if self.book:
            src, base = _book(self.book), f"the book's {self.book}"
        elif self.kernel_file:
            src, base = sources.read(self.kernel_file), self.kernel_file
        elif self.wrong:
            src, base = corpus.WRONG[self.wrong].source(), f"the wrong kernel {self.wrong}"
        elif self.base is not None:
            src, base = self.base.text(), "its solution"
        elif self.program:
            src, base = programs.source(), programs.FILE
        elif self.host_bug:
            src, base = programs.BUGS[self.host_bug].source(), f"the host-side bug {self.host_bug}"
        else:
            src, base = self.code, self.file or "its code"
        return matmul.apply_edits(src, self.edits, f"exercise {self.exercise}", base)


def _book(kernel):
    """A kernel of the book. For a .cu file that holds several kernels: its #ifndef block and
    this kernel's own comment and function; but the whole file where it #includes headers,
    whose types and helpers its kernels share (tensor_cores.cu)."""
    src = matmul.source(kernel)
    name = matmul.KERNELS[kernel].function
    paragraphs = src.split("\n\n")
    if sum("__global__" in p for p in paragraphs) <= 1 or "#include" in src:
        return src
    keep = [p[p.index("#ifndef"):] if "#ifndef" in p else p for p in paragraphs
            if "#ifndef" in p or f" {name}(" in p]
    return "\n\n".join(keep).rstrip() + "\n"


@dataclass(frozen=True)
class Wrong:
    """A known wrong answer and the failure the checker must report for it."""
    name: str
    what: str
    source: object      # a Source (kernel exercises) or the wrong number (value exercises)
    expect: str


@dataclass(frozen=True)
class Exercise:
    id: str
    chapter: str            # the chapter notebook's stem, e.g. "01_naive"
    title: str
    kind: str
    statement: str
    hint: str
    starter: Source
    solution: "Source | None"   # None in the student edition
    starter_fails: str
    wrong: tuple
    explanation: str = ""
    variable: str = ""
    task: tasks.Task | None = None      # a kernel exercise's: what its kernel computes, how it is launched
    launch: matmul.Launch | None = None   # a matrix product's launch (task.launch); None for other tasks
    tiles: tuple = (16,)
    shapes: tuple = ()
    requirement: object = None      # requirement(report, shape, tile, code) -> None or why not
    requirement_passed: str = ""
    trace: tuple | None = None
    tolerance: float = 0.0
    unit: str = ""
    answer_from: str = "what a checked run of the kernel counts"
    runs: tuple = ()                # a program exercise's command lines
    answer_sha256: str = ""         # the student edition's hash of a value exercise's answer (grid_point)
    salt: str = ""
    region: tuple = ()              # (file, function): the one function of a long file the reader edits
    check_seconds: tuple = ()       # (first check, later checks): seconds on a 2-core machine

    def part(self, source):
        """What the reader sees of a source: with a region, its function alone (a source that
        is that function already gives itself); else all of it."""
        return sources.definition(source, self.region[1]) if self.region else source

    def whole(self, source):
        """(the source the checker compiles, the 1-based lines the reader's part takes in it, or
        None): with a region, a part is put in place of its function in the book's file; a whole
        file (one that defines every kernel of it) is taken as it is."""
        if not self.region:
            return source, None
        book = sources.read(self.region[0])
        kernels = re.findall(r'^extern "C" __global__[^\n]*\n(\w+)\(', book, re.M)
        if all(re.search(rf"^{k}\(", source, re.M) for k in kernels):
            return source, None
        return sources.splice(book, self.region[1], source)

    @property
    def var(self):
        """The notebook variable the starter cell sets."""
        return self.variable or self.id.replace("-", "") + "_src"
