"""Widgets that answer a click without a kernel: on the static site, in Jupyter and in Colab.

A kernel-less page (the book's site) cannot run a Python callback, so a widget there must
not compute anything when a control changes. Instead every state its controls can reach is
computed when the notebook runs, each as one HTML widget, and the browser only chooses which
one to show:

* each control is a ToggleButtons; its ``index`` is synced to the front end in ipywidgets
  7.7.1 (Colab) and 8.x alike (``value`` and ``label`` are not, so they cannot be linked);
* the states sit in ``Tab`` widgets, nested one level per control, and ``Tab.selected_index``
  shows exactly one child; both versions have had ``Tab`` and ``selected_index`` for years
  (``Stack``, which would fit better, is new in 8.0 and absent from 7.7.1);
* ``widgets.jslink((control, "index"), (tab, "selected_index"))`` for every Tab of that
  control's level: a ``Link`` model, which the front end runs by itself (no comm, no kernel),
  so it works in the embedded widget state of the static site (@jupyter-widgets/html-manager
  creates every model of the state, the links included) as in a live notebook;
* the tab bars are hidden by a scoped ``<style>`` in the widget's first line (an HTML widget),
  since the buttons above them do the choosing. If a front end dropped that style, the tab
  bars would show and still work (the links are two-way).

So nothing here observes a trait in Python: live and static behave the same.
"""
import html
import itertools

STACK_CLASS = "tc-switch-stack"
STATE_CLASS = "tc-switch-state"
SWITCH_CLASS = "tc-switch"
# Tab bars of the state stacks, in 7.x (phosphor: p-TabBar) and 8.x (lumino: lm-TabBar)
# markup; and the contents' own border and padding, which would frame every level again.
STYLE = (f"<style>.{STACK_CLASS} > .p-TabBar, .{STACK_CLASS} > .lm-TabBar, .{STACK_CLASS} > .widget-tab-bar "
         "{display: none !important;} "
         f".{STACK_CLASS} > .widget-tab-contents, .{STACK_CLASS} > .p-TabPanel-stackedPanel, "
         f".{STACK_CLASS} > .lm-TabPanel-stackedPanel {{border: none !important; padding: 0 !important;}} "
         f".{SWITCH_CLASS} .tc-switch-hint {{font-style: italic; margin: 0.2em 0 0.4em 0;}}</style>")


def state_key(labels):
    """The name of one state: its controls' labels joined by '|', e.g. '16' or 'Width 6|4 x 4'."""
    return "|".join(labels)


def state_html(labels, body):
    """One state's HTML: `body` in a div that names the state (the browser test reads it)."""
    return f"<div class='{STATE_CLASS}' data-state='{html.escape(state_key(labels), quote=True)}'>{body}</div>"


def switch(name, hint, controls, render, initial=None):
    """A widget showing render(*values) for the values its controls select.

    name: a short identifier (CSS class tc-switch-<name>); hint: one line that says what to
    do with the widget; controls: [(description, [(label, value), ...]), ...]; render: a
    function of one value per control that returns HTML; initial: one label per control
    (default the first of each). Every combination is rendered now; returns a VBox whose
    attributes ``controls`` (the ToggleButtons), ``states`` ({key: HTML}) and ``links``
    (the jslinks) are there for tests."""
    import ipywidgets as w

    labels = [[str(label) for label, _ in options] for _, options in controls]
    initial = [str(x) for x in initial] if initial is not None else [opts[0] for opts in labels]
    start = [opts.index(x) for opts, x in zip(labels, initial)]
    buttons = []
    for (description, _), opts, i in zip(controls, labels, start):
        b = w.ToggleButtons(options=opts, description=description,
                            style={"description_width": "initial", "button_width": "auto"})
        b.index = i
        b.add_class(f"{SWITCH_CLASS}-control")
        buttons.append(b)

    states = {}
    levels = [[] for _ in controls]  # the Tabs of each level, linked to that level's control

    def stack(level, chosen):
        if level == len(controls):
            values = [controls[k][1][i][1] for k, i in enumerate(chosen)]
            key_labels = [labels[k][i] for k, i in enumerate(chosen)]
            content = state_html(key_labels, render(*values))
            states[state_key(key_labels)] = content
            return w.HTML(value=content)
        children = [stack(level + 1, chosen + [i]) for i in range(len(labels[level]))]
        tab = w.Tab(children=children)
        for i, label in enumerate(labels[level]):
            tab.set_title(i, label)
        tab.selected_index = start[level]
        tab.add_class(STACK_CLASS)
        levels[level].append(tab)
        return tab

    top = stack(0, [])
    links = [w.jslink((b, "index"), (tab, "selected_index")) for b, tabs in zip(buttons, levels) for tab in tabs]
    head = w.HTML(value=f"{STYLE}<div class='tc-switch-hint'>{html.escape(hint)}</div>")
    box = w.VBox([head, *buttons, top])
    box.add_class(SWITCH_CLASS)
    box.add_class(f"{SWITCH_CLASS}-{name}")
    box.controls, box.states, box.links = buttons, states, links
    return box


def all_states(controls, render):
    """{state key: HTML} for every combination, as switch() renders them (for tests and
    for a static page without the widget)."""
    out = {}
    for combo in itertools.product(*(options for _, options in controls)):
        key_labels = [str(label) for label, _ in combo]
        out[state_key(key_labels)] = state_html(key_labels, render(*(v for _, v in combo)))
    return out
