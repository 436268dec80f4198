"""Where the book's CUDA C kernels are. They live once, in the repository's top-level
kernels/ folder; a wheel ships them inside this package, as tiling_course/kernels/ (the
build step in setup.py copies them there). FOLDER is the one this copy of the course has:
the package's own kernels/ when installed from a wheel, else the checkout's (an editable
install, or the repository on sys.path).

    from tiling_course import sources
    sources.read("tiled.cu")        # the text of a kernel file
    sources.path("tiled.cu")        # a real file, for nvcc
"""
import re
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
INSTALLED = _PACKAGE / "kernels"                # where a wheel puts them
CHECKOUT = _PACKAGE.parents[1] / "kernels"      # <repository>/kernels, beside course/
FOLDER = next((d for d in (INSTALLED, CHECKOUT) if d.is_dir()), INSTALLED)


def path(name):
    """The file `name` (e.g. "tiled.cu") of the book's kernels."""
    return FOLDER / name


def read(name):
    """The text of the book's kernel file `name`."""
    return path(name).read_text(encoding="utf-8")


def files():
    """Every kernel file, sorted by name."""
    return sorted(FOLDER.glob("*.cu"))


# ---- One definition of a file, by name ------------------------------------------------------
# A chapter shows a long file a piece at a time, and an exercise hands a reader one function of
# it to edit: both take the piece out of the file itself, so the file stays the one source.

def _code_only(line):
    """The line with its // comment and the insides of its string and character literals blanked
    (the braces that count are the code's own)."""
    out, quote, i = [], None, 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
            i += 1
            continue
        if ch in "\"'":
            quote = ch
        elif line.startswith("//", i):
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _heads(lines, name):
    """Indices of the lines at column 0 where a definition of `name` starts to be named: a
    function (`name(` or `name<...>(` after its return type, or alone on the line after an
    extern "C" __global__ one), a struct or a #define."""
    pattern = re.compile(rf"^(?:[^\s/#].*[\s*&]|){re.escape(name)}\s*(?:<[^;]*>)?\s*\(|^struct\s+(?:alignas\(\d+\)\s+)?"
                         rf"{re.escape(name)}\b|^#define\s+{re.escape(name)}\b")
    return [i for i, line in enumerate(lines) if pattern.match(_code_only(line))]


def span(text, name):
    """(first, last) lines, 0-based and inclusive, of the definition of `name` at the top level of
    the C++ source `text`: the comment right above it, its template and extern lines, and its
    body to the closing brace (a struct's `};` included). KeyError when there is none, or more
    than one (a template's specialisations: name one of them by a line of its own instead)."""
    lines = text.splitlines()
    heads = [i for i in _heads(lines, name)
             if not lines[i].rstrip().endswith(";") or lines[i].startswith("#define")]
    if len(heads) != 1:
        raise KeyError(f"{name!r}: {len(heads)} definitions at the top level, not one")
    first = last = heads[0]
    if lines[first].startswith("#define"):
        while lines[last].rstrip().endswith("\\"):
            last += 1
        return first, last
    # Up through the lines of the same declaration (template <...>, extern "C" __global__ ...),
    # then its comment, less a section's rule (// ---- ...) and what precedes it.
    while first > 0 and lines[first - 1].strip() and not lines[first - 1].lstrip().startswith("//") \
            and not _code_only(lines[first - 1]).rstrip().endswith((";", "}")):
        first -= 1
    while first > 0 and lines[first - 1].startswith("//") and not re.match(r"// -{3,}", lines[first - 1]):
        first -= 1
    depth, opened = 0, False
    for last in range(heads[0], len(lines)):
        code = _code_only(lines[last])
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if opened and depth == 0:
            break
    else:
        raise KeyError(f"{name!r}: its body never closes")
    return first, last


def definition(text, name):
    """The definition of `name` in `text` (span's lines), as text ending in a newline."""
    first, last = span(text, name)
    return "\n".join(text.splitlines()[first:last + 1]) + "\n"


def splice(text, name, new):
    """`text` with the definition of `name` replaced by `new` (a reader's version of it); returns
    (the whole text, the 1-based line numbers where `new` starts and ends in it)."""
    first, _ = span(text, name)
    lines = text.splitlines(keepends=True)
    _, last = span(text, name)
    new = new if new.endswith("\n") else new + "\n"
    whole = "".join(lines[:first]) + new + "".join(lines[last + 1:])
    return whole, (first + 1, first + new.count("\n"))
