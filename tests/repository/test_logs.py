"""logs/ is evidence, never a fixture (issue 47): no test opens a file under logs/ (a number a test
checks lives in a data file of the one measurement model, tiling_course.measure.model), and
logs/README.md, the index, names every file and folder of logs/ and nothing that is not there
(this file alone reads the index and lists the folder).

How a test file is read for the first rule (its syntax tree, so comments never count):
  * a string that is a path into logs/ ("logs/...", ".../logs/...") is a read, wherever it
    appears, except in a docstring (prose) or as the pattern of an `re` call (a pattern finds
    citations in a text; it names no file); "logs" alone is one where it is joined into a path
    (an operand of `/`, an argument of a call: Path("logs"), os.path.join(root, "logs"));
  * a name bound from an `re` call whose pattern mentions logs/ (a path cited by a README or a
    chapter) is a read if it then reaches open(), .open(), .read_text() or .read_bytes(); it may
    be checked with .is_file() or .exists(): a citation that must resolve, read by nobody.
"""
import ast
import fnmatch
import re
from pathlib import Path

from tests.support import ROOT

LOGS = ROOT / "logs"
READS = {"open", "read_text", "read_bytes"}


def _is_logs_path(text, joined):
    return (text == "logs" and joined) or text.startswith(("logs/", "./logs/", "../logs/")) or "/logs/" in text


def _docstrings(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _is_re_call(node):
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "re"


def _names(target):
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def reads_of_logs(source, name="<test>"):
    """The lines of `source` (a test file's text) that open a path under logs/, by the rules above."""
    tree = ast.parse(source, name)
    docs = _docstrings(tree)
    patterns = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call) and _is_re_call(node)
                for arg in node.args[:1]}
    joined = {id(operand) for node in ast.walk(tree) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              for operand in (node.left, node.right)}
    joined |= {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call) for arg in node.args}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _is_logs_path(node.value, id(node) in joined) and id(node) not in docs and id(node) not in patterns:
            found.append(node.lineno)
    # names bound from a regex that finds logs/ paths in a text, then opened
    cited = set()

    def finds_logs(value):
        return any(isinstance(n, ast.Call) and _is_re_call(n) and n.args and isinstance(n.args[0], ast.Constant)
                   and isinstance(n.args[0].value, str) and "logs" in n.args[0].value for n in ast.walk(value))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and finds_logs(node.value):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                cited |= _names(target)
        elif isinstance(node, (ast.For, ast.comprehension)) and finds_logs(node.iter):
            cited |= _names(node.target)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if called in READS:
            reached = set().union(*(_names(a) for a in node.args), _names(f.value) if isinstance(f, ast.Attribute)
                                  else set())
            if reached & cited:
                found.append(node.lineno)
    return sorted(set(found))


def test_no_test_opens_a_file_under_logs():
    """Every test file but this one, which reads the index (logs/README.md) and lists the folder."""
    offenders = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        lines = reads_of_logs(path.read_text(encoding="utf-8"), str(path))
        if lines:
            offenders[path.relative_to(ROOT).as_posix()] = lines
    assert offenders == {}, f"tests that read logs/ (move the numbers into a data file): {offenders}"


def test_the_rule_tells_a_read_from_a_citation():
    """The ways the tests used to read logs/, caught; a citation checked to exist, a docstring and
    a comment, let be."""
    read = '''
from pathlib import Path
ROOT = Path(".")
def test_a():
    log = (ROOT / "logs" / "2026-11-21-ladder-tuning.md").read_text()
def test_b(text):
    billions, log = re.search(r"about (\\d+) billion.*?`(logs/[^`]+\\.md)`", text).groups()
    rows = (ROOT / log).read_text()
def test_c():
    return open("logs/x.log").read()
def test_e():
    return os.path.join(ROOT, "logs", "x.md")
'''
    assert reads_of_logs(read) == [5, 8, 10, 12]
    cited = '''
"""Reads nothing in logs/, only cites them."""
import re
def test_d(text, ROOT):
    """A chapter links to logs/x.md."""
    for path in re.findall(r"\\blogs/[\\w.-]+\\.md", text):   # logs/ cited, must exist
        assert (ROOT / path).is_file()
    assert "logs" in "the logs say"
'''
    assert reads_of_logs(cited) == []


def indexed(text):
    """The files the index's last column names: a bare name, a glob, a folder (name/), or a path
    from the root; ".csv" after a name is that name with another extension, and a bare name after
    a path is in the path's folder."""
    names = []
    for line in text.splitlines():
        if not line.startswith("| 20"):
            continue
        folder, previous = "", None
        for part in (p.strip().strip("`") for p in line.rstrip().rstrip("|").split("|")[-1].split(",")):
            if part.startswith(".") and previous:
                part = re.sub(r"\.\w+$", part, previous)
            elif "/" in part.rstrip("/"):
                folder = part.rsplit("/", 1)[0] + "/"
            elif folder:
                part = folder + part
            names.append(part)
            previous = part
    return names


def test_the_index_names_every_file_of_logs_and_only_those():
    names = indexed((LOGS / "README.md").read_text())
    present = [p.name + ("/" if p.is_dir() else "") for p in sorted(LOGS.iterdir()) if p.name != "README.md"]
    unlisted = [f for f in present if not any(fnmatch.fnmatch(f, n) for n in names if "/" not in n.rstrip("/"))]
    assert unlisted == [], f"files of logs/ the index (logs/README.md) does not describe: {unlisted}"
    for n in names:
        if "/" in n.rstrip("/"):                       # a file elsewhere in the repository
            assert (ROOT / n).exists(), n
        else:
            assert any(fnmatch.fnmatch(f, n) for f in present), f"the index names {n}, which logs/ lacks"


def test_every_data_file_transcribed_from_a_log_names_an_existing_log():
    from tiling_course.measure import model
    for path in sorted((ROOT / "course" / "tiling_course" / "data").glob("*.json")) + \
            sorted((ROOT / "tests" / "data").glob("*.json")):
        run = model.read(path)
        assert run.meta.device and run.meta.date and run.meta.software, path.name   # labelled, as the model asks
        if run.kind == "counts":
            assert (ROOT / run.meta.extra["log"]).is_file(), (path.name, run.meta.extra["log"])
