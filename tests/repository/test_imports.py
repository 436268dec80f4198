"""No import circle between the modules of the two packages, cudacheck and tiling_course:
every import is followed, those inside functions too (a circle hidden by an import inside a
function is still a circle: the two modules cannot be read, tested or moved apart), and a
circle is reported with the modules it passes through."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
PACKAGES = {"cudacheck": ROOT / "runtime" / "cudacheck", "tiling_course": ROOT / "course" / "tiling_course"}


def modules(packages):
    """{dotted module name: its file} for every .py file under each package's folder."""
    out = {}
    for folder in packages.values():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder.parent).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _known(dotted, known):
    """The longest prefix of `dotted` that is one of the modules, or None (another package's)."""
    while dotted and dotted not in known:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def imports(name, path, known):
    """The modules of `known` that module `name` (at `path`) imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import name`: the submodule if `name` is one, else the package
            found.update(_known(f"{base}.{alias.name}", known) if f"{base}.{alias.name}" in known
                         else _known(base, known) for alias in node.names)
    return found - {None, name}


def import_graph(packages):
    known = modules(packages)
    return {name: imports(name, path, known) for name, path in known.items()}


def circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): each is a set of modules that import each other in a circle."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(component)
    return out


def _describe(component, graph):
    return "; ".join(f"{m} imports {', '.join(sorted(graph[m] & component))}" for m in sorted(component))


def test_no_import_circle_in_the_packages():
    graph = import_graph(PACKAGES)
    assert len(graph) > 100 and "tiling_course.grading.judge" in graph   # the walk found the packages
    found = circles(graph)
    assert not found, "import circles (break each by moving what both sides need into a module of its own):\n" + \
        "\n".join(_describe(c, graph) for c in found)


def test_only_the_notebooks_import_the_self_check():
    """The assignments' self-check (grading.selfcheck) is the notebooks' own: no module of the
    packages imports it, so the grader never runs what a student can patch in a notebook."""
    graph = import_graph(PACKAGES)
    importers = sorted(m for m, imported in graph.items() if "tiling_course.grading.selfcheck" in imported)
    assert "tiling_course.grading.selfcheck" in graph and not importers, importers


def test_the_walk_finds_a_circle_hidden_in_a_function(tmp_path):
    """The check itself: a circle closed by an import inside a function, through a relative
    `from . import`, a `from .module import name` and an absolute import, is found, and a
    package importing its own submodules is not one."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("import os\n\ndef thing():\n    from .sub import c\n    return c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("def f():\n    import pkg.a\n    return pkg.a\n")
    (pkg / "d.py").write_text("from . import a, b\n")
    graph = import_graph({"pkg": pkg})
    assert graph["pkg.b"] == {"pkg.sub.c"} and graph["pkg.sub.c"] == {"pkg.a"} and graph["pkg.d"] == {"pkg.a", "pkg.b"}
    assert circles(graph) == [{"pkg.a", "pkg.b", "pkg.sub.c"}]
    (pkg / "sub" / "c.py").write_text("def f():\n    import json\n    return json\n")
    assert circles(import_graph({"pkg": pkg})) == []
