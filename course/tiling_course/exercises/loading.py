"""Loading the exercises' data: the TOML files of an edition (the package's docstring
describes their keys), each table checked against the schema below before it becomes an
Exercise; DataError names the file, the exercise and what is wrong."""
import tomllib
from importlib import resources

from .. import corpus, matmul, programs, sources, tasks
from . import requirements
from .model import DataError, Exercise, Source, Wrong

# The keys each kind of table may hold, and their types.
_EXERCISE = {"id": str, "title": str, "kind": str, "statement": str, "hint": str, "explanation": str,
             "starter": (str, dict), "solution": (str, dict), "starter_fails": str, "wrong": list,
             "check_seconds": list}
# Optional keys of every exercise: check_seconds, [first check, later checks], what checking the
# solution took on a 2-core machine (the chapter says so under the exercise).
_OPTIONAL = {"explanation", "check_seconds"}
# What the student edition has in place of solution, explanation and wrong: the keys it
# drops may not be there, and a value exercise carries its answer.
_STUDENT_DROPS = {"solution", "explanation", "wrong"}
_KERNEL = {"launch": dict, "tiles": list, "shapes": list, "trace": list, "requirement": list,
           "requirement_passed": str, "region": dict}
_VALUE = {"variable": str, "unit": str, "tolerance": (int, float), "answer_from": str, "answer_sha256": str,
          "salt": str}
_PROGRAM = {"runs": list}
_KINDS = {"write": (_KERNEL, {"launch", "shapes"}), "fix": (_KERNEL, {"launch", "shapes"}),
          "value": (_VALUE, {"variable", "unit"}), "program": (_PROGRAM, {"runs"})}
_WRONG = {"name": str, "what": str, "expect": str}
_SOURCE = {"book": str, "kernel_file": str, "file": str, "wrong": str, "solution": bool, "program": bool,
           "host_bug": str, "edits": list}


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
    _keys(t, _EXERCISE | types, (set(_EXERCISE) - _OPTIONAL - (_STUDENT_DROPS if student else set()))
          | required, where)
    if student and set(t) & _STUDENT_DROPS:
        raise DataError(f"{where}: an exercise without solution is the student edition's, which holds no "
                        f"{', '.join(sorted(set(t) & _STUDENT_DROPS))}")
    solution = None if student else _source(t["solution"], t, root, where)
    seconds = t.get("check_seconds", [])
    if seconds and (len(seconds) != 2 or not all(type(s) in (int, float) and s >= 0 for s in seconds)):
        raise DataError(f"{where}: check_seconds should be [first check, later checks] in seconds, not {seconds!r}")
    fields = dict(id=t["id"], chapter=chapter, title=t["title"], kind=t["kind"], statement=t["statement"],
                  hint=t["hint"], explanation=t.get("explanation", ""), starter_fails=t["starter_fails"],
                  solution=solution, starter=_source(t["starter"], t, root, where, solution),
                  wrong=tuple(_wrong(w, t, root, where, solution) for w in t.get("wrong", [])),
                  check_seconds=tuple(seconds))
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
    ex = Exercise(**fields, task=task, launch=getattr(task, "launch", None), tiles=tiles,
                  shapes=_int_lists(t["shapes"], task.rank, "shapes", where), requirement=requirement,
                  requirement_passed=t.get("requirement_passed", ""), trace=trace, region=_region(t, where))
    if ex.region:
        try:   # the reader's part must be in the starter and in the solution, once each
            ex.part(ex.starter.text())
            if ex.solution is not None:
                ex.part(ex.solution.text())
        except KeyError as e:
            raise DataError(f"{where}: region: {e.args[0]}") from None
    return ex


def _region(t, where):
    """(file, function) of a kernel exercise's `region = {file = ..., function = ...}`: the one
    function of a file of the book's kernels that the reader sees and edits; () without one."""
    if "region" not in t:
        return ()
    _keys(t["region"], {"file": str, "function": str}, {"file", "function"}, f"{where}, region")
    region = (t["region"]["file"], t["region"]["function"])
    if region[0] not in {f.name for f in sources.files()}:
        raise DataError(f"{where}: region: no file {region[0]!r} among the book's kernels")
    return region


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
        raise DataError(f"{where}: a source has one of book, kernel_file, file, wrong, solution, program, "
                        f"host_bug: {spec!r}")
    base, value = bases[0], spec[bases[0]]
    if base == "book" and value in matmul.KERNELS:
        return Source(t["id"], book=value, edits=edits)
    if base == "kernel_file" and value in {f.name for f in sources.files()}:
        return Source(t["id"], kernel_file=value, edits=edits)
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
