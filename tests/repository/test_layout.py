"""Scripts and tests that don't lean on each other: no script, benchmark or test edits
sys.path (pyproject.toml's pytest `pythonpath` is the one place that says where tests import
from; a script that needs tests.support runs as `python -m scripts.NAME`), no test imports
conftest (a fixture comes from the conftest.py of its folder, a helper from tests.support),
and no test imports another test module."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
FOLDERS = ("scripts", "benchmarks", "tests")


def python_files(root, folders=FOLDERS):
    for folder in folders:
        yield from sorted((root / folder).rglob("*.py"))


def sys_path_uses(path):
    """Lines of `path` that touch sys.path (any use: reading it is how editing it starts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
            and node.value.id == "sys"]


def leaning_imports(path):
    """(line, module) of each import of conftest or of a test module (test_*) in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        out += [(node.lineno, n) for n in names
                if n.split(".")[0] == "conftest" or n.split(".")[-1].startswith("test_")]
    return out


def test_no_script_benchmark_or_test_edits_sys_path():
    found = {str(p.relative_to(ROOT)): lines for p in python_files(ROOT) if (lines := sys_path_uses(p))}
    assert not found, f"sys.path used at {found}: import tests.support (scripts: run as python -m scripts.NAME)"


def test_no_test_imports_conftest_or_another_test():
    files = list(python_files(ROOT, ("tests",)))
    assert len(files) > 60   # the walk found the tests
    found = {str(p.relative_to(ROOT)): imports for p in files if (imports := leaning_imports(p))}
    assert not found, (f"imports of conftest or of test modules: {found}; a fixture belongs in the conftest.py of "
                       "its folder, a shared helper in tests/support/")


def test_the_checks_see_what_they_forbid(tmp_path):
    """The two walks themselves, on files that do what is forbidden, and on one that does not."""
    (tmp_path / "scripts").mkdir()
    bad = tmp_path / "scripts" / "bad.py"
    bad.write_text('import sys\n\ndef f():\n    sys.path[:0] = ["tests"]\n\nsys.path.insert(0, "x")\n')
    (tmp_path / "scripts" / "good.py").write_text('import sys\n\nprint(sys.argv, "sys.path")\n')
    assert {p.name: sys_path_uses(p) for p in python_files(tmp_path, ("scripts",))} == {"bad.py": [4, 6],
                                                                                         "good.py": []}
    leaning = tmp_path / "test_x.py"
    leaning.write_text("import os\nfrom conftest import ROOT\n\ndef test():\n    from test_other import helper\n"
                       "    import tests.support.numerics\n")
    assert leaning_imports(leaning) == [(2, "conftest"), (5, "test_other")]
