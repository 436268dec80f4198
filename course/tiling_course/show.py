"""What the book puts on the page. Kernel source: whole files, the lecture's steps, a long
file's functions by name (piece), and a
wrong kernel as a diff of the right one, rendered as Markdown code blocks marked `cuda`,
so the site and Jupyter both highlight them, and always read from
kernels/ (one source). And the one HTML table every table of the book is."""
import difflib
import html
import re

from . import corpus, matmul, sources


def _markdown(text):
    from IPython.display import Markdown
    return Markdown(text)


def _fence(code, lang="cuda"):
    return f"```{lang}\n{code.rstrip()}\n```"


def source(kernel):
    """The whole .cu file of one of the book's kernels."""
    return _markdown(_fence(matmul.source(kernel)))


def piece(file, *names):
    """Definitions of the book's kernel file `file` (kernels/<file>), by name, in the order
    given, as one code block: a long file shown a piece at a time, each piece read from the
    file itself (tiling_course.sources.definition: a function or struct with the comment above
    it, or a #define)."""
    text = sources.read(file)
    return _markdown(_fence("\n".join(sources.definition(text, name) for name in names)))


def step(kernel, n):
    """The lines of a kernel's file under its `// Step n:` comment, up to the next step."""
    return step_of(matmul.source(kernel), n, kernel)


def step_of(text, n, name):
    """The lines of source `text` (called `name` in errors) under its `// Step n:`
    comment, up to the next step; the last step runs to the closing brace."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"\s*// Step \d+:", line)]
    which = [i for i in starts if re.match(rf"\s*// Step {n}:", lines[i])]
    if not which:
        raise KeyError(f"{name} has no '// Step {n}:' comment")
    start = which[0]
    later = [i for i in starts if i > start]
    end = later[0] if later else len(lines) - 1
    return _markdown(_fence("\n".join(lines[start:end]).strip("\n")))


def diff(name):
    """A wrong kernel of tiling_course.corpus as a diff against the right one."""
    bug = corpus.WRONG[name]
    return _markdown(diff_of(matmul.source(bug.kernel), bug.source(), bug.kernel, name, bug.what))


def diff_of(right, wrong, right_name, wrong_name, what):
    """Markdown: `what`, then a unified diff of two sources."""
    body = "\n".join(difflib.unified_diff(right.splitlines(), wrong.splitlines(), f"{right_name} (right)",
                                          f"{wrong_name} (wrong)", n=2, lineterm=""))
    return f"{what}\n\n" + _fence(body, "diff")


def table(header, rows, caption):
    """An HTML table (the site's 'kernels-table' style). Header and cells are HTML; the
    caption is text."""
    from IPython.display import HTML
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return HTML(f"<table class='kernels-table'><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr>"
                f"</thead><tbody>{body}</tbody></table>")
