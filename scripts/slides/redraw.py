"""A chapter's figures and its widgets' pictures drawn again at slide size (issue 43, item 1:
labels of at least 20 px on a 1280 x 720 slide).

The site's figures are drawn for a column of about 690 px: at most 8.5 inches at 100 dpi with
9-point labels, 12.5 px, and a widget's pictures at 72 dpi. Here each figure cell of the
notebook runs again (the book's figure functions return a matplotlib Figure), after the
notebook's imports and with `live = None` (the stored GPU measurements, as the site shows
them), under style.drawing_for_slides(): a figure function that has a slide version draws it
(the thread map one line a cell; hopperdata.plot a figure a GPU, each then its own output and
so its own slide). style.slide_version then draws the figure in a slide's room with its
smallest text 22 px and parts the texts that would overlap. A widget cell whose stored
states hold pictures runs the same way (widgets.base.png_data_uri draws each picture at
slide size, in the room the widget's controls leave) and its stored states take the new
pictures. A cell that does not run so (it needs a GPU, or a variable of an earlier cell), or
a figure whose texts would still overlap, keeps the site's drawing and is named in the
warnings.
"""
import ast
import base64
import copy
import html
import io
import re
from warnings import catch_warnings, simplefilter

from matplotlib.figure import Figure

from tiling_course import style, switch

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATE = re.compile(rf"class='{switch.STATE_CLASS}' data-state='([^']*)'")
IMG_SRC = re.compile(r"<img src='[^']*'")


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


def _widget_states(nb):
    """The stored widget models (the notebook's embedded state) whose HTML holds a picture."""
    models = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    return [m["state"] for m in models.values() if "<img" in str(m.get("state", {}).get("value", ""))]


def redraw_widget(stored, widget):
    """Each stored state of a widget's pictures drawn again: `widget` is the same widget built
    for slides (switch.switch's VBox, with its states by key); a stored state is replaced
    where the new one is the same HTML but for its pictures. Returns the ids of those."""
    done = set()
    for model in stored:
        key = STATE.search(model["value"])
        new = getattr(widget, "states", {}).get(html.unescape(key.group(1))) if key else None
        if new is not None and IMG_SRC.sub("", new) == IMG_SRC.sub("", model["value"]):
            model["value"] = new
            done.add(id(model))
    return done


def redraw(nb):
    """The notebook's figure cells with their PNG drawn at slide size (see the module
    docstring), in place; returns the warnings for the cells left as they were."""
    namespace, warnings = {"live": None, "backend": "cpu"}, []
    exec(compile(ast.Module(imports(nb), type_ignores=[]), "<imports>", "exec"), namespace)
    pictures, redrawn = _widget_states(nb), set()
    for i, cell in enumerate(nb.cells):
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        views = [o for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]
        if views and pictures:
            try:
                with style.drawing_for_slides(), catch_warnings(record=True) as said:
                    simplefilter("always")
                    widget = _value(cell.source, namespace)
            except Exception as exc:   # as for a figure: keep the site's pictures
                warnings.append(f"cell {i}: widget not drawn again ({type(exc).__name__}: {exc})")
                continue
            warnings += sorted({f"cell {i}: {w.message}" for w in said})
            redrawn |= redraw_widget(pictures, widget)
            continue
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
    warnings += [f"a widget's picture not drawn again: {IMG_SRC.sub('', m['value'])[:80]!r}"
                 for m in pictures if id(m) not in redrawn]
    return warnings
