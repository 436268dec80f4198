"""Where the book's CUDA C kernels are. They live once, in the repository's top-level
kernels/ folder; a wheel ships them inside this package, as tiling_course/kernels/ (the
build step in setup.py copies them there). FOLDER is the one this copy of the course has:
the package's own kernels/ when installed from a wheel, else the checkout's (an editable
install, or the repository on sys.path).

    from tiling_course import sources
    sources.read("tiled.cu")        # the text of a kernel file
    sources.path("tiled.cu")        # a real file, for nvcc
"""
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
