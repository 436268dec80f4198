"""The book's exercises and their checker.

    from tiling_course import exercises
    print(exercises.starter("naive-1"))          # the kernel the reader edits
    exercises.check("naive-1", source)           # truthy on a pass; shows what failed
    exercises.show_solution("naive-1")           # the solution, as a cuda code block

The exercises are data: one TOML file per chapter (01_naive.toml, ..., named after its
notebook), each an array of [[exercise]] tables with

    id, title, kind ("write", "fix", "value" or "program"), statement, hint, explanation (Markdown)
    starter, solution      sources (below)
    starter_fails          the failure the starter gives, as a wrong answer's expect
    [[exercise.wrong]]     known wrong answers: name, what (the mistake), expect (the
                           failure the checker must report: an exception's class name,
                           "wrong values", "requirement"; for a value exercise "wrong value"
                           or "not a number"), and source, or value for a value exercise
  kernel exercises:
    launch                 the task (tiling_course.tasks): what the kernel computes, how it is
                           launched and judged. A matrix product: {kernel = "tiled", function = ...,
                           columns_per_thread = ...}, a matmul.Launch; another task: {task =
                           "block_transpose" or "histogram", function = ...}
    tiles, shapes          the tiles to try (a transpose's BLOCK_WIDTH, a histogram's threads per
                           block), and the shapes on each: (m, k, n) for a product, (height, width)
                           for a transpose, (values, bins) for a histogram
    [[exercise.requirement]], requirement_passed, trace
                           what is asked of the kernel besides its product (requirements.py),
                           the line a pass adds, and the blocks checked mode traces for it
  program exercises (chapter 7: whole programs, host code included):
    runs                   the command lines to run the program with, each a list of strings; the
                           program passes when every run, in checked mode on the CPU runtime,
                           exits with 0, with no finding and no warning, and prints PASSED for
                           each of its checks and FAILED for none
  value exercises:
    variable, unit, tolerance (relative)
                           the reader's code sets `variable` to a number; the expected one is
                           what the solution's code sets it to, run once; code that launches
                           a kernel of its own reads it from cu/ with cu_file(name)
    answer_from            where the right number comes from, as the verdict says it (default
                           "what a checked run of the kernel counts"; "what the roofline
                           allows" for an exercise that computes rather than counts)

A kernel's source is one of
    "x.cu"                                a file of cu/ in this package
    {book = "tiled"}                      a kernel of the book (tiling_course.matmul; of a
                                          file of several, only its own function)
    {wrong = "no_zero_fill"}              a wrong kernel of tiling_course.corpus
    {solution = true}                     the exercise's solution, where that has no name
                                          of its own (it is itself an edit)
    {program = true}                      chapter 7's whole program (tiling_course.programs)
    {host_bug = "missing copy back"}      one of its host-side bugs (programs.BUGS)
each with an optional edits = [["old", "new"], ...], applied in order to the first
occurrence of old, which must be there. So a change to a book kernel reaches every
exercise made from it, or stops with the exercise and the text named. A value
exercise's starter and solution are Python code, written in the TOML.

Every exercise lists known wrong answers and the failure each must give; the tests run
them all (tests/test_exercises.py).

Two editions of the data. The files above (this folder's *.toml and cu/) are the
instructor's: they hold the solutions, their explanations and the wrong answers, and the
installed package leaves them out (pyproject.toml). student/ holds what a student's copy
needs and nothing more: each exercise without solution, explanation or wrong answers, its
starter written out in full (student/cu/<id>.starter.cu: some starters are edits of the
solution), and for a value exercise not its answer but a salted hash of it (`answer_sha256`,
`salt`), which the check compares with the hashes of the answers it is given.
scripts/sync_notebooks.py writes student/ from the instructor's files. load() reads the
instructor's files where they are (a checkout of the repository) and student/ otherwise.

A value exercise's rule, the same in both editions: with `tolerance` 0 an answer is right
when it is the expected whole number (within 1e-9); with a relative `tolerance` t, when the
expected value, rounded to a geometric grid of ratio 1 + t/8, lies within t of it (so within
t of the exact value, give or take t/16). The grid lets the student edition check without
the number: it hashes the few grid points within t of an answer and looks for the expected
one's hash among them. (Anyone may still try numbers one by one, as the check allows; the
hash keeps the answer out of the installed files.)
"""
import contextlib
import hashlib
import io
import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from cudacheck import KernelError

from .. import corpus, matmul, programs, tasks, tryout
from . import requirements


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

    @property
    def var(self):
        """The notebook variable the starter cell sets."""
        return self.variable or self.id.replace("-", "") + "_src"


# ---------------------------------------------------------------------------- loading

# The keys each kind of table may hold, and their types.
_EXERCISE = {"id": str, "title": str, "kind": str, "statement": str, "hint": str, "explanation": str,
             "starter": (str, dict), "solution": (str, dict), "starter_fails": str, "wrong": list}
# What the student edition has in place of solution, explanation and wrong: the keys it
# drops may not be there, and a value exercise carries its answer.
_STUDENT_DROPS = {"solution", "explanation", "wrong"}
_KERNEL = {"launch": dict, "tiles": list, "shapes": list, "trace": list, "requirement": list,
           "requirement_passed": str}
_VALUE = {"variable": str, "unit": str, "tolerance": (int, float), "answer_from": str, "answer_sha256": str,
          "salt": str}
_PROGRAM = {"runs": list}
_KINDS = {"write": (_KERNEL, {"launch", "shapes"}), "fix": (_KERNEL, {"launch", "shapes"}),
          "value": (_VALUE, {"variable", "unit"}), "program": (_PROGRAM, {"runs"})}
_WRONG = {"name": str, "what": str, "expect": str}
_SOURCE = {"book": str, "file": str, "wrong": str, "solution": bool, "program": bool, "host_bug": str,
           "edits": list}


def default_root():
    """The instructor's data where it is there (a checkout), else the student edition's."""
    here = resources.files(__package__)
    has_solutions = any(f.name.endswith(".toml") for f in here.iterdir())
    return here if has_solutions else here.joinpath("student")


def load(root=None):
    """{id: Exercise} from every *.toml file of `root` (a folder, as a Path or an
    importlib.resources Traversable; default_root() by default), in file order."""
    root = root or default_root()
    files = sorted((f for f in root.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    if not files:
        raise DataError(f"{root}: no exercise data (*.toml) there")
    found = {}
    for f in files:
        try:
            data = tomllib.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise DataError(f"{f}: cannot read it as TOML: {e}") from None
        _keys(data, {"exercise": list}, {"exercise"}, str(f))
        for table in data["exercise"]:
            ex = _exercise(table, f.name.removesuffix(".toml"), root, f"{f}, exercise {_name(table, 'id')}")
            if ex.id in found:
                raise DataError(f"{f}: exercise {ex.id} is defined twice")
            found[ex.id] = ex
    return found


def _name(table, key):
    return table.get(key, "?") if isinstance(table, dict) else "?"


def _keys(table, types, required, where):
    """Check that `table` holds only keys of `types`, all of `required`, each of its type."""
    if not isinstance(table, dict):
        raise DataError(f"{where}: expected a table, not {table!r}")
    unknown = sorted(set(table) - set(types))
    if unknown:
        raise DataError(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(types)})")
    missing = [key for key in types if key in required and key not in table]
    if missing:
        raise DataError(f"{where}: {', '.join(missing)} missing")
    for key, value in table.items():
        kinds = types[key] if isinstance(types[key], tuple) else (types[key],)
        if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
            raise DataError(f"{where}: {key} should be {' or '.join(k.__name__ for k in kinds)}, not {value!r}")


def _exercise(t, chapter, root, where):
    if _name(t, "kind") not in _KINDS:
        raise DataError(f"{where}: kind should be one of {', '.join(_KINDS)}, not {_name(t, 'kind')!r}")
    types, required = _KINDS[t["kind"]]
    student = "solution" not in t
    if student:
        required = required | ({"answer_sha256", "salt"} if t["kind"] == "value" else set())
    else:
        types = {key: kind for key, kind in types.items() if key not in ("answer_sha256", "salt")}
    _keys(t, _EXERCISE | types, (set(_EXERCISE) - {"explanation"} - (_STUDENT_DROPS if student else set()))
          | required, where)
    if student and set(t) & _STUDENT_DROPS:
        raise DataError(f"{where}: an exercise without solution is the student edition's, which holds no "
                        f"{', '.join(sorted(set(t) & _STUDENT_DROPS))}")
    solution = None if student else _source(t["solution"], t, root, where)
    fields = dict(id=t["id"], chapter=chapter, title=t["title"], kind=t["kind"], statement=t["statement"],
                  hint=t["hint"], explanation=t.get("explanation", ""), starter_fails=t["starter_fails"],
                  solution=solution, starter=_source(t["starter"], t, root, where, solution),
                  wrong=tuple(_wrong(w, t, root, where, solution) for w in t.get("wrong", [])))
    if t["kind"] == "value":
        extra = {"answer_from": t["answer_from"]} if "answer_from" in t else {}
        return Exercise(**fields, variable=t["variable"], unit=t["unit"], tolerance=float(t.get("tolerance", 0)),
                        answer_sha256=t.get("answer_sha256", ""), salt=t.get("salt", ""), **extra)
    if t["kind"] == "program":
        runs = t["runs"]
        if not runs or not all(isinstance(r, list) and all(isinstance(a, str) for a in r) for r in runs):
            raise DataError(f"{where}: runs should be a list of command lines, each a list of strings, not {runs!r}")
        return Exercise(**fields, runs=tuple(map(tuple, runs)))
    if ("requirement" in t) != ("requirement_passed" in t):
        raise DataError(f"{where}: requirement and requirement_passed go together")
    tiles = tuple(t.get("tiles", (16,)))
    if not tiles or not all(type(tile) is int and tile > 0 for tile in tiles):
        raise DataError(f"{where}: tiles should be a list of positive integers, not {tiles!r}")
    try:
        task = tasks.from_table(t["launch"])
        requirement = requirements.build(t["requirement"]) if "requirement" in t else None
    except (TypeError, KeyError, ValueError) as e:
        raise DataError(f"{where}: {e.args[0] if isinstance(e, KeyError) and e.args else e}") from None
    trace = _int_lists(t["trace"], 2, "trace", where) if "trace" in t else None
    return Exercise(**fields, task=task, launch=getattr(task, "launch", None), tiles=tiles,
                    shapes=_int_lists(t["shapes"], task.rank, "shapes", where), requirement=requirement,
                    requirement_passed=t.get("requirement_passed", ""), trace=trace)


def _int_lists(value, length, key, where):
    """`value`, a list of lists of `length` integers, as a tuple of tuples."""
    rows = tuple(tuple(row) if isinstance(row, list) else () for row in value)
    if not rows or any(len(row) != length or not all(type(d) is int and d >= 0 for d in row) for row in rows):
        raise DataError(f"{where}: {key} should be a list of lists of {length} integers, not {value!r}")
    return rows


def _source(spec, t, root, where, solution=None):
    """The Source the data writes as `spec` (see the module's docstring)."""
    if t["kind"] == "value":
        if not isinstance(spec, str):
            raise DataError(f"{where}: a value exercise's starter and solution are Python code, not {spec!r}")
        return Source(t["id"], code=spec)
    if isinstance(spec, str):
        spec = {"file": spec}
    _keys(spec, _SOURCE, set(), where)
    edits = spec.get("edits", [])
    if not all(isinstance(e, list) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in edits):
        raise DataError(f"{where}: edits should be [old, new] pairs of strings, not {edits!r}")
    edits = tuple(map(tuple, edits))
    bases = [key for key in spec if key != "edits"]
    if len(bases) != 1:
        raise DataError(f"{where}: a source has one of book, file, wrong, solution, program, host_bug: {spec!r}")
    base, value = bases[0], spec[bases[0]]
    if base == "book" and value in matmul.KERNELS:
        return Source(t["id"], book=value, edits=edits)
    if base == "wrong" and value in corpus.WRONG:
        return Source(t["id"], wrong=value, edits=edits)
    if base == "program" and value and t["kind"] == "program":
        return Source(t["id"], program=True, edits=edits)
    if base == "host_bug" and value in programs.BUGS and t["kind"] == "program":
        return Source(t["id"], host_bug=value, edits=edits)
    if base == "solution" and value and solution is not None:
        return Source(t["id"], base=solution, edits=edits)
    if base == "file" and value.endswith(".cu") and "/" not in value:
        path = root.joinpath("cu", value)
        try:
            return Source(t["id"], file=value, code=path.read_text(encoding="utf-8"), edits=edits)
        except (OSError, UnicodeDecodeError) as e:
            raise DataError(f"{where}: cannot read {path}: {e}") from None
    raise DataError(f"{where}: no such source: {base} = {value!r}")


def _wrong(w, t, root, where, solution):
    where = f"{where}, wrong answer {_name(w, 'name')}"
    payload = {"value": (int, float, str)} if t["kind"] == "value" else {"source": (str, dict)}
    _keys(w, _WRONG | payload, set(_WRONG) | set(payload), where)
    value = w["value"] if "value" in payload else _source(w["source"], t, root, where, solution)
    return Wrong(w["name"], w["what"], value, w["expect"])


EXERCISES = load()
CHAPTERS = tuple(dict.fromkeys(e.chapter for e in EXERCISES.values()))


# ------------------------------------------------------------------------- the API

def chapter(stem):
    """The exercises of one chapter (its notebook's stem), in order."""
    return [e for e in EXERCISES.values() if e.chapter == stem]


def starter(exercise_id):
    """The source the reader starts from (Python code for a value exercise)."""
    return EXERCISES[exercise_id].starter.text()


def solution(exercise_id):
    """The solution's source (Python code for a value exercise); NotInThisEdition in the
    student edition."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        raise NotInThisEdition(f"exercise {exercise_id}: {INSTRUCTOR_EDITION}")
    return ex.solution.text()


def wrong_answers(exercise_id):
    """The known wrong answers: (Wrong, its source or value)."""
    ex = EXERCISES[exercise_id]
    return [(w, w.source if ex.kind == "value" else w.source.text()) for w in ex.wrong]


def cu_file(name):
    """The text of a file of cu/: a kernel that a value exercise's code launches. Read from
    the edition at hand (default_root()): the student edition's package has no other cu/."""
    return default_root().joinpath("cu", name).read_text(encoding="utf-8")


def answer(exercise_id):
    """A value exercise's expected answer: what its solution's code sets its variable to;
    NotInThisEdition in the student edition, which stores only its hash."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        raise NotInThisEdition(f"exercise {exercise_id}: this edition holds only a hash of the answer. "
                               f"{INSTRUCTOR_EDITION}")
    return _run(ex.solution.text(), ex.variable)


def grid_point(value, tolerance):
    """The point of the answers' grid (the module's docstring) that `value` rounds to: the
    whole number itself for tolerance 0, else the exponent j of (1 + tolerance/8)**j.
    ValueError for a value that has none (not whole with tolerance 0, not positive)."""
    value = float(value)
    if tolerance == 0:
        if not math.isfinite(value) or abs(value - round(value)) > 1e-9:
            raise ValueError(f"{value!r}: an answer checked exactly is a whole number")
        return round(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{value!r}: an answer checked within a tolerance is a positive number")
    return round(math.log(value) / math.log1p(tolerance / 8))


def _points_near(got, tolerance):
    """The grid points whose value lies within `tolerance` (relative) of the answer `got`."""
    if tolerance == 0:
        return [round(got)] if abs(got - round(got)) <= 1e-9 else []
    if got <= 0 or tolerance >= 1:
        return []
    step = math.log1p(tolerance / 8)
    lo = math.ceil(math.log(got / (1 + tolerance)) / step)
    hi = math.floor(math.log(got / (1 - tolerance)) / step)
    return list(range(lo, hi + 1))


def answer_hash(exercise_id, salt, point):
    """The student edition's hash of grid point `point` of exercise `exercise_id`."""
    return hashlib.sha256(f"{salt}:{exercise_id}:{point}".encode()).hexdigest()


def _accepts(ex, got):
    """Whether the number `got` answers value exercise `ex` (the module's docstring's rule)."""
    near = _points_near(got, ex.tolerance)
    if ex.solution is None:
        return any(answer_hash(ex.id, ex.salt, j) == ex.answer_sha256 for j in near)
    return grid_point(answer(ex.id), ex.tolerance) in near


@lru_cache(maxsize=None)
def _run(code, variable):
    # The solution prints for the reader who runs it, not for check()'s output; and its
    # checked runs take seconds, so each code runs once.
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, f"<the solution that sets {variable}>", "exec"), namespace)
    return namespace[variable]


def show_solution(exercise_id):
    """Display the solution as a Markdown code block, with a word on why it works; in the
    student edition, where the solutions are."""
    tryout.show_markdown(solution_markdown(exercise_id))


def solution_markdown(exercise_id):
    """The solution as show_solution displays it (the instructor edition's notebooks hold
    this text in a Markdown cell under each check)."""
    ex = EXERCISES[exercise_id]
    if ex.solution is None:
        return f"**Exercise {ex.id}, {ex.title}:** {INSTRUCTOR_EDITION}"
    lang = "python" if ex.kind == "value" else "cuda"
    text = f"**Solution to exercise {ex.id}, {ex.title}**\n\n```{lang}\n{solution(exercise_id).rstrip()}\n```"
    if ex.explanation:
        text += f"\n\n{ex.explanation}"
    return text


# --------------------------------------------------------------------------- checker

class Result:
    """What check() found; truthy on a pass. Shown once in a notebook, wherever check()
    is called: check() displays it, and the cell's result does not display it again."""

    def __init__(self, passed, message, kind, outcome=None):
        self.passed = passed
        self.message = message
        self.kind = kind                 # "pass", an exception's class name, "wrong values", ...
        self.outcome = outcome           # the tiling_course.tryout.Outcome, for kernel exercises
        self.error = getattr(outcome, "error", None)
        self.shape = getattr(outcome, "shape", None)
        self.details = getattr(outcome, "details", {})
        self._shown_in = None

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return self.message

    def _repr_markdown_(self):
        return self.message

    def _ipython_display_(self):
        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        tryout.show_markdown(self.message)


def _execution_count():
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError:
        return None
    return None if ip is None else ip.execution_count


def check(exercise_id, source, quiet=False):
    """Check an answer to exercise `exercise_id`: for a kernel exercise `source` is the
    CUDA C (the variable the %%cuda cell saved), for a value exercise the number. Shows
    and returns a Result, truthy on a pass; never raises for a wrong answer."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        result = Result(False, f"✗ There is no exercise {exercise_id!r}; the exercises are "
                               f"{', '.join(EXERCISES)}.", "no exercise")
    else:
        try:
            result = {"value": _check_value, "program": _check_program}.get(ex.kind, _check_kernel)(ex, source)
        except Exception as e:   # a checker must never stop the notebook
            result = Result(False, f"✗ **Exercise {ex.id}**: the check itself failed: "
                                   f"{type(e).__name__}: {e}", "checker error")
    if not quiet:
        tryout.show_markdown(result.message)
        result._shown_in = _execution_count()
    return result


def _head(ex, passed):
    return f"✓ **Exercise {ex.id} solved.** " if passed else f"**Exercise {ex.id} ({ex.title}): not yet.**\n\n"


def _check_kernel(ex, source):
    if not isinstance(source, str) or not source.strip():
        return Result(False, _head(ex, False) + "✗ `check` takes the kernel's CUDA C source as a string: the "
                      f"variable the `%%cuda` cell saved (`{ex.var}`).\n\n**Hint:** {ex.hint}", "no source")
    passes = []
    for tile in ex.tiles:
        out = tryout.run(source, ex.task, tile=tile, shapes=list(ex.shapes), quiet=True, hint=ex.hint,
                         requirement=ex.requirement, trace=ex.trace)
        if not out:
            return Result(False, _head(ex, False) + out.message, out.kind, out)
        passes.append(out)
    message = passes[0].message.removeprefix("✓ ")
    note = ex.task.tile_note(ex.tiles[:1])
    if len(ex.tiles) > 1 and note:
        message = message.replace(note, ex.task.tile_note(ex.tiles), 1)
    if ex.requirement is not None:
        message += " " + ex.requirement_passed
    return Result(True, _head(ex, True) + message, "pass", passes[-1])


def _check_program(ex, source):
    """Run the program in checked mode with each of the exercise's command lines; the
    first thing wrong fails it: an exception (its class, the line), a non-zero exit code,
    a warning, then its own checks (PASSED for each, FAILED for none)."""
    hint = f"\n\n**Hint:** {ex.hint}"
    if not isinstance(source, str) or not source.strip():
        return Result(False, _head(ex, False) + "✗ `check` takes the program's source as a string: the variable "
                      f"the `%%cuda_program --save {ex.var}` cell saved.{hint}", "no source")
    for args in ex.runs:
        how = f"`program {' '.join(args)}`" if args else "the program with its default shape"
        try:
            with tryout.every_check():
                result = programs.run(source, check=True, args=args)
        except KernelError as e:
            return Result(False, _head(ex, False) + f"✗ {how}, checked mode: **{type(e).__name__}**\n\n"
                          f"```text\n{e}\n```{hint}", type(e).__name__)
        if result.exit_code:
            said = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["(nothing)"]
            return Result(False, _head(ex, False) + f"✗ {how} exited with code {result.exit_code}; its last words: "
                          f"`{said[0]}`{hint}", "exit code")
        if result.warnings:
            w = result.warnings[0]
            return Result(False, _head(ex, False) + f"✗ {how}, checked mode: **{type(w).__name__}** (line "
                          f"{w.line})\n\n```text\n{w}\n```{hint}", type(w).__name__)
        passed, failed = result.stdout.count("PASSED"), result.stdout.count("FAILED")
        if failed or not passed:
            return Result(False, _head(ex, False) + f"✗ {how} ran cleanly, but its own check says FAILED "
                          f"{failed} time(s) and PASSED {passed}:\n\n```text\n{result.stdout.rstrip()}\n```{hint}",
                          "wrong values")
    return Result(True, _head(ex, True) + f"It ran {len(ex.runs)} time(s) in checked mode: every check PASSED, "
                  "no finding, no warning, exit code 0.", "pass")


def _check_value(ex, value):
    head = _head(ex, False)
    hint = f"\n\n**Hint:** {ex.hint}"
    if value is None:
        return Result(False, head + f"✗ No answer yet: set `{ex.var}` to your number and run the cell again."
                      + hint, "no answer")
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    try:
        got = float(value)
    except (TypeError, ValueError):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    if math.isfinite(got) and _accepts(ex, got):
        return Result(True, _head(ex, True) + f"{_fmt(got)} {ex.unit}: that is {ex.answer_from}.", "pass")
    return Result(False, head + f"✗ {_fmt(got)} is not {ex.answer_from}." + hint, "wrong value")


def _fmt(x):
    return f"{int(x):,}" if float(x).is_integer() else f"{x:.4g}"


# -------------------------------------------------------------------- notebook cells

_INTRO = ("## Exercises\n\nEach exercise gives you a kernel to write or to fix (or a number to find). Edit the cell, "
          "run it, then run the check below it: it runs your kernel in checked mode on the CPU runtime, on fresh "
          "random matrices of awkward shapes, then on the GPU if there is one, compares every element with NumPy, "
          "and tells you the first thing that is wrong, with a hint. The solutions are in the instructor edition "
          "of the book, which your instructor has.")


_PROGRAM_INTRO = ("## Exercises\n\nEach exercise gives you a whole program with a bug in its host code. Fix it "
                  "in the cell and run the cell (it runs the program in checked mode on the CPU runtime), then "
                  "run the check below it: it runs your program in checked mode with more than one shape and "
                  "tells you the first thing that is wrong, with a hint. The solutions are in the instructor "
                  "edition of the book, which your instructor has.")


def cells(stem):
    """Chapter `stem`'s exercise section, as the notebook holds it (scripts/sync_notebooks.py
    writes it there): nbformat-4 cells, an introduction, then per exercise its statement,
    the starter cell and the check. No solution: the book's notebooks are the student
    edition; scripts/build_editions.py adds a solution cell under each check for the
    instructor's."""
    found = chapter(stem)
    intro = _PROGRAM_INTRO if found and all(ex.kind == "program" for ex in found) else _INTRO
    out = [_cell("markdown", intro), _cell("code", "from tiling_course import exercises")]
    head = {"value": "", "program": "%%cuda_program --cpu --check --save {var}\n"}
    for i, ex in enumerate(found, 1):
        start = starter(ex.id).rstrip()
        out += [_cell("markdown", f"### Exercise {i}: {ex.title}\n\n{ex.statement.rstrip()}"),
                _cell("code", head.get(ex.kind, "%%cuda {var}\n").format(var=ex.var) + start),
                _cell("code", f'exercises.check("{ex.id}", {ex.var})')]
    return out


def _cell(kind, source):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell
