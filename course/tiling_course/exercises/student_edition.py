"""The student edition's exercise data (student/, see the package's docstring), written
from the instructor's: what a student's copy of the course needs to show and check each
exercise, and no solution, explanation, wrong answer or value exercise's answer (a
salted hash of it instead).

    files()          {relative path: text} of student/, as it should be
    write(folder)    write them there (scripts/sync_notebooks.py does, for the package)
"""
import hashlib
import json
import tomllib
from pathlib import Path

from . import EXERCISES, Exercise, answer, answer_hash, chapter, grid_point, starter

# The keys the student edition keeps, in the order it writes them; the rest (solution,
# explanation, wrong) stay with the instructor.
_KEPT = ("id", "title", "kind", "statement", "hint", "starter", "starter_fails", "variable", "unit", "tolerance",
         "answer_from", "answer_sha256", "salt", "launch", "tiles", "shapes", "requirement", "requirement_passed",
         "trace", "runs", "region", "check_seconds")
_HEADER = ("# The student edition of {stem}'s exercises, written by scripts/sync_notebooks.py from\n"
           "# ../{stem}.toml, which holds the solutions: edit that file, not this one.\n")


def files():
    """{path relative to student/: text} for every chapter with exercises."""
    out = {}
    for stem in dict.fromkeys(e.chapter for e in EXERCISES.values()):
        tables = []
        for ex in chapter(stem):
            table = _table(ex)
            if ex.kind != "value":
                out[f"cu/{ex.id}.starter.cu"] = starter(ex.id)
                table["starter"] = f"{ex.id}.starter.cu"
            tables.append(table)
        out[f"{stem}.toml"] = _HEADER.format(stem=stem) + "".join(
            "\n[[exercise]]\n" + "".join(f"{key} = {_toml(table[key])}\n" for key in _KEPT if key in table)
            for table in tables)
    # The kernels that value exercises' starters launch (exercises.cu_file) are no answers.
    for ex in EXERCISES.values():
        if ex.kind == "value":
            for name in _cu_files(ex.starter.text()):
                out[f"cu/{name}"] = (Path(__file__).parent / "cu" / name).read_text(encoding="utf-8")
    return out


def write(folder):
    folder = Path(folder)
    for stale in [*folder.glob("*.toml"), *folder.glob("cu/*.cu")]:
        stale.unlink()
    for name, text in files().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def _table(ex):
    """The exercise as the instructor's TOML gives it, less what the student edition drops."""
    table = {"id": ex.id, "title": ex.title, "kind": ex.kind, "statement": ex.statement, "hint": ex.hint,
             "starter_fails": ex.starter_fails}
    if ex.check_seconds:
        table["check_seconds"] = list(ex.check_seconds)
    if ex.kind == "value":
        # Not the answer: its grid point's hash (the rule: the package's docstring). The salt
        # comes from the solution's code, so that each sync writes the same file.
        salt = hashlib.sha256(f"{ex.id}\0{ex.solution.text()}".encode()).hexdigest()[:16]
        table.update(variable=ex.variable, unit=ex.unit, starter=starter(ex.id))
        if ex.tolerance:
            table["tolerance"] = ex.tolerance
        if ex.answer_from != Exercise.answer_from:
            table["answer_from"] = ex.answer_from
        table.update(answer_sha256=answer_hash(ex.id, salt, grid_point(answer(ex.id), ex.tolerance)), salt=salt)
        return table
    table.update(_raw(ex))
    return table


def _raw(ex):
    """A kernel or program exercise's launch and checking keys, as its chapter's TOML writes them."""
    data = tomllib.loads((Path(__file__).parent / f"{ex.chapter}.toml").read_text(encoding="utf-8"))
    table = next(t for t in data["exercise"] if t["id"] == ex.id)
    return {key: table[key] for key in ("launch", "tiles", "shapes", "requirement", "requirement_passed", "trace",
                                        "runs", "region") if key in table}


def _cu_files(code):
    return [part.split('"')[1] for part in code.split("cu_file(")[1:]]


def _toml(value):
    """`value` as TOML: JSON's strings, numbers and booleans are TOML's; lists and tables
    of them are written inline."""
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} as TOML")
