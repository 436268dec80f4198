"""How the differential test (tests/runtime/test_cuda_corpus.py) builds the corpus with few
builds; most of a build is fixed cost (g++ reading the precompiled runtime header, clang's
parse), so fewer, larger modules cost less.

sharing_one_build: the cases of one source and options each build with every instance any of
them names, so that their plain and checked runs share one library per mode.

seeded_builds: the bugs of one source and options whose edits all lie in the kernel their
case launches are built as one module, the source with a copy of that kernel after it for
each bug, its edits made and its name its own: one front-end pass, one g++ and one link for
all of them. Each copy is the kernel as Case.edited(bug) writes it, beside the same helpers,
macros and declarations, so it computes and fails as the bug built alone does; only the
kernel's name and its lines differ in the report. A bug whose edits reach outside that
kernel (a macro, a helper, a shared declaration) is built alone, from Case.edited(bug), with
its case's own instances (its edit may break one that only another case launches).
"""
import re
from dataclasses import replace

from cudacheck import analyze


def sharing_one_build(cases):
    """{case name: the case with the template instances of every case of its source and options}."""
    names = {}
    for c in cases:
        names.setdefault((c.source, c.options), {}).update(dict.fromkeys(c.name_expressions))
    return {c.name: replace(c, name_expressions=tuple(names[c.source, c.options])) for c in cases}


def seeded_builds(cases):
    """{(case name, bug name): (case, source)} for every seeded bug of `cases`: run(case,
    source, spec, check=True) runs the bug (case: the bug's case, its kernel the bug's copy
    and its name_expressions the module's where the bug shares a module)."""
    builds, groups = {}, {}
    shared = sharing_one_build(cases)   # read as the plain runs read it: the front end's cache has it
    for case in cases:
        if not case.bugs:
            continue
        s = shared[case.name]
        kernel = analyze(s.code(), s.options, s.name_expressions).kernels.get(" ".join(case.kernel.split()))
        for bug in case.bugs:
            if kernel is not None and all(_inside(case.code(), old, kernel) for old, _ in bug.edits):
                groups.setdefault((case.source, case.options), []).append((case, bug, kernel))
            else:
                builds[case.name, bug.name] = (case, case.edited(bug))
    for members in groups.values():
        builds.update(_together(members))
    return builds


def _inside(source, old, kernel):
    """Whether the edit's text lies within the kernel's lines (line to end_line)."""
    first = source.count("\n", 0, source.index(old)) + 1
    return kernel.line <= first and first + old.count("\n") <= kernel.end_line


def _together(members):
    """{(case name, bug name): (case, source)} for bugs of one source and options
    (`members`: (case, bug, the front end's Kernel of the case's kernel)), all in one source."""
    source = members[0][0].code()
    lines = source.splitlines(keepends=True)
    after = {}        # a kernel's last line -> the copies that follow it
    runs = []
    for i, (case, bug, kernel) in enumerate(members):
        name = f"{kernel.function}__seeded{i}"
        if re.search(rf"\b{name}\b", source):
            raise ValueError(f"{case.name}/{bug.name}: the source already names {name}, the name of the bug's copy")
        copy = "".join(lines[kernel.line - 1:kernel.end_line])
        for old, new in bug.edits:
            copy = copy.replace(old, new)
        copy = re.sub(rf"\b{kernel.function}\b", name, copy)
        after.setdefault(kernel.end_line, []).append(copy if copy.endswith("\n") else copy + "\n")
        runs.append((case, bug, re.sub(rf"\b{kernel.function}(?=\s*(<|$))", name, case.kernel)))
    together = "".join(line + ("\n" if n in after and not line.endswith("\n") else "") + "".join(after.get(n, ()))
                       for n, line in enumerate(lines, 1))
    names = tuple(dict.fromkeys(k for _, _, k in runs if "<" in k))
    return {(case.name, bug.name): (replace(case, kernel=k, name_expressions=names), together) for case, bug, k in runs}
