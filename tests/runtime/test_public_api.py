"""The runtime's public API is `cudacheck` itself: everything it exports exists and is
documented, and the course, the book, the benchmarks and the scripts use nothing else of the
runtime (no submodule, by import or by attribute)."""
import ast
import inspect
import json
import re
from pathlib import Path

import pytest

import cudacheck

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file


@pytest.mark.parametrize("name", cudacheck.__all__)
def test_every_public_name_exists_and_is_documented(name):
    assert hasattr(cudacheck, name), f"cudacheck.__all__ names {name}, which cudacheck does not have"
    obj = getattr(cudacheck, name)
    if inspect.isclass(obj) or inspect.isroutine(obj):
        assert (obj.__doc__ or "").strip(), f"cudacheck.{name} has no docstring"
    else:   # a constant or the config: documented in the module's docstring, its type too
        assert re.search(rf"\b{name}\b", cudacheck.__doc__), f"cudacheck's docstring does not document {name}"
        if not isinstance(obj, (int, float, str, tuple)):
            assert (type(obj).__doc__ or "").strip(), f"the type of cudacheck.{name} has no docstring"


def _sources():
    """(path, Python source) of every file outside the runtime that may use it."""
    for folder in ("course", "benchmarks", "scripts", "book"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, path.read_text()
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            text = "".join(cell["source"])
            if cell["cell_type"] == "code" and not text.lstrip().startswith("%%"):
                # IPython's line magics and shell escapes, as statements that parse
                lines = [re.sub(r"^(\s*)[%!].*", r"\1pass", line) for line in text.splitlines()]
                yield path.with_name(f"{path.name}[cell {i}]"), "\n".join(lines)


def _private_uses(tree):
    """Where a tree reaches past cudacheck's public API: imports of its submodules, and
    attributes of `cudacheck` (or an alias of it) that __all__ does not export."""
    public = set(cudacheck.__all__)
    names = set()   # what `cudacheck` is called here
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "cudacheck":
                    names.add(alias.asname or "cudacheck")
                elif alias.name.startswith("cudacheck."):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("cudacheck."):
                yield node.lineno, f"from {node.module} import ..."
            elif node.module == "cudacheck":
                for alias in node.names:
                    if alias.name != "*" and alias.name not in public:
                        yield node.lineno, f"from cudacheck import {alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names \
                and node.attr not in public and not node.attr.startswith("__"):
            yield node.lineno, f"{node.value.id}.{node.attr}"


def test_the_course_benchmarks_and_scripts_use_only_the_public_api():
    found = []
    for path, text in _sources():
        for line, what in _private_uses(ast.parse(text)):
            found.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not found, "not in cudacheck.__all__ (export it from cudacheck, documented, or do not use it):\n" + \
        "\n".join(found)


def test_the_check_finds_a_submodule_however_it_is_reached():
    tree = ast.parse("import cudacheck as cc\nfrom cudacheck.cpu import cores\nfrom cudacheck import frontend\n"
                     "import cudacheck.launch\ncc.cpu.cores()\ncc.config.time_limit = 1\n")
    assert [line for line, _ in _private_uses(tree)] == [2, 3, 4, 5]
