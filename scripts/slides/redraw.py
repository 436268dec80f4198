"""A chapter's figures drawn again at slide size (issue 43, item 1: labels of at least 20 px on
a 1280 x 720 slide).

The site's figures are drawn for a column of about 690 px: at most 8.5 inches at 100 dpi with
9-point labels, 12.5 px. A slide shows them at most at that size, so their labels stayed 12.5 px
or less on a projector. Here each figure cell of the notebook runs again (the book's figure
functions return a matplotlib Figure), after the notebook's imports and with `live = None`
(the stored GPU measurements, as the site shows them), and the figure is enlarged before it is
saved: as large as a slide's room (ROOM_PX) and its smallest text LABEL_PX, every font scaled
alike, so that the text is at most about a quarter denser in the figure than on the site.
The deck fits a figure to the room left on its slide, shrinking a tall one. A figure whose
texts would run into each other at that size (the thread map's labels of its cells, say,
which the cells do not grow to hold) keeps the site's drawing, as does a cell that does not
run so (it needs a GPU, or a variable of an earlier cell); each is named in the warnings.
"""
import ast
import base64
import copy
import io

from matplotlib.figure import Figure

from tiling_course import style


def imports(nb):
    """The import statements of the notebook's code cells (the Colab set-up and cell magics
    aside), as statements to run."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.source.lstrip().startswith("%") \
                or "colab-setup" in cell.metadata.get("tags", []):
            continue
        try:
            found += [node for node in ast.parse(cell.source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
        except SyntaxError:
            continue
    return found


def _value(source, namespace):
    """Run a cell's code in `namespace` and return the value of its last expression, as
    IPython shows it (None if it ends in a statement)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace) if last else None


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor="white")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def redraw(nb):
    """The notebook's figure cells with their PNG drawn at slide size (see the module
    docstring), in place; returns the warnings for the cells left as they were."""
    namespace, warnings = {"live": None, "backend": "cpu"}, []
    exec(compile(ast.Module(imports(nb), type_ignores=[]), "<imports>", "exec"), namespace)
    for i, cell in enumerate(nb.cells):
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if len(pngs) != 1 or cell.source.lstrip().startswith("%%"):
            continue
        try:
            with style.drawing_for_slides():
                value = _value(cell.source, namespace)
        except Exception as exc:   # a cell that needs more than the imports: keep the site's figure
            warnings.append(f"cell {i}: not drawn again ({type(exc).__name__}: {exc}); the site's figure kept")
            continue
        figs = value if isinstance(value, list) else [value]
        if not figs or not all(isinstance(fig, Figure) for fig in figs):
            continue
        clashes = [pair for fig in figs for pair in style.slide_version(fig)]
        if clashes:
            a, b = clashes[0]
            warnings.append(f"cell {i}: {len(clashes)} pair(s) of its texts would overlap at slide size "
                            f"({a.get_text()[:30]!r} and {b.get_text()[:30]!r}); the site's figure kept")
            continue
        # a figure of several panels drawn as several: one output (so one slide) each
        at = cell.outputs.index(pngs[0])
        drawn = []
        for fig in figs:
            output = copy.deepcopy(pngs[0])
            output["data"]["image/png"] = _png(fig)
            drawn.append(output)
        cell.outputs[at:at + 1] = drawn
    return warnings
