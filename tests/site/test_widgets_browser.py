"""The book's widgets on the built site, clicked in a real (headless, offline) Chromium.

The site has no kernel: a widget there responds only if every state its controls can reach
was embedded when the notebook ran and the page switches between them by itself
(tiling_course.switch). For every widget of WIDGETS this test opens its page, clicks every
option of every control, and after each click requires that exactly one state is shown, that
it is the state of the options now selected (its data-state), and that what it shows (its
text, and the SHA-256 of each image) is what tiling_course.widgets computes for that state
in this process. A page that keeps showing the old state after a click (a dead widget, as
chapter 2's was when it updated an Output from a Python callback) fails.

Every switch widget found on the site must be in WIDGETS (tiling_course.registry), so a new one
is tested.
Element screenshots of each widget in its first and last state go to
$TC_WIDGET_SCREENSHOTS (default _build/screenshots/widgets/).

The site is the ``built_site`` fixture's fresh build; set TC_SITE=_build/html to test an
existing build instead (quicker while working on a widget).
"""
import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.browser import SiteServer, find_pages, next_frames, reach_widgets, site_html, sweep_states
from tiling_course import registry, switch

pytestmark = [pytest.mark.browser, pytest.mark.slow]   # slow: the site is built, unless TC_SITE names one

# name -> (its chapter's page, the spec of the widget as the chapter calls it: the chapters call
# them with their defaults, which on the site, built without a GPU, hold no live measurement),
# every widget of the course's registry.
WIDGETS = {w.name: (c.page, w.spec) for c in registry.CHAPTERS for w in c.widgets}
SCREENSHOTS = Path(os.environ.get("TC_WIDGET_SCREENSHOTS", ROOT / "_build" / "screenshots" / "widgets"))
NOT_NAMES = {"stack", "state", "control", "hint"}  # tc-switch-* classes that are not a widget's name
SWITCH_WAIT_S = 5

# What one widget shows now: its controls' selected labels, and every state that is visible.
PROBE_JS = r"""
const root = document.querySelector('.tc-switch-' + arguments[0]);
if (!root) return null;
const visible = el => el.getClientRects().length > 0 && el.offsetWidth > 0 && el.offsetHeight > 0
    && getComputedStyle(el).visibility !== 'hidden';
const norm = s => s.replace(/\s+/g, ' ').trim();
const describe = el => ({key: el.dataset.state, text: norm(el.textContent),
                         imgs: [...el.querySelectorAll('img')].map(i => i.getAttribute('src'))});
const controls = [...root.querySelectorAll('.tc-switch-control')].map(c =>
    [...c.querySelectorAll('button')].map(b => ({label: norm(b.textContent),
                                                 active: b.classList.contains('mod-active')})));
const states = [...root.querySelectorAll('.tc-switch-state')];
const tabbars = [...root.querySelectorAll('.lm-TabBar, .p-TabBar')].filter(visible).length;
return {controls, count: states.length, shown: states.filter(visible).map(describe), tabbars};
"""

# The same description of an expected state, parsed (not rendered) by the browser's own parser.
PARSE_JS = r"""
const doc = new DOMParser().parseFromString(arguments[0], 'text/html');
const el = doc.querySelector('.tc-switch-state');
const norm = s => s.replace(/\s+/g, ' ').trim();
return {key: el.dataset.state, text: norm(el.textContent),
        imgs: [...el.querySelectorAll('img')].map(i => i.getAttribute('src'))};
"""


def _sha(src):
    return hashlib.sha256(src.encode()).hexdigest()[:16]


def _summary(state):
    return {"key": state["key"], "text": state["text"], "imgs": [_sha(s) for s in state["imgs"]]}


@pytest.fixture(scope="module")
def site(request):
    if os.environ.get("TC_SITE"):
        return Path(os.environ["TC_SITE"]).resolve()
    return site_html(request.getfixturevalue("built_site"))


def _widget_names(page_source):
    classes = re.findall(r'"tc-switch-([a-z0-9-]+)"', page_source)
    return {c for c in classes if c not in NOT_NAMES}


def widget_state_file(site, page):
    """The file a page's widget state is written to (book/_ext/widgets_on_demand.py: beside the
    page, named by its state script's data-src), or None when the page has no widgets."""
    m = re.search(r'<script data-src="([^"]+)" type="application/vnd.jupyter.widget-state\+json">',
                  (site / page).read_text(errors="replace"))
    return (site / page).parent / m.group(1) if m else None


def test_every_switch_widget_of_the_site_is_tested(site):
    found = {}
    for page in find_pages(site):
        state = widget_state_file(site, page)
        text = (site / page).read_text(errors="replace") + (state.read_text() if state else "")
        for name in _widget_names(text):
            found.setdefault(name, []).append(page)
    assert set(found) == set(WIDGETS), f"widgets on the site {found}, tested here {sorted(WIDGETS)}"
    for name, pages in found.items():
        assert pages == [WIDGETS[name][0]], f"{name} is on {pages}, expected on {WIDGETS[name][0]}"


def _wait_for(driver, name, predicate, timeout):
    end = time.monotonic() + timeout
    probe = None
    while time.monotonic() < end:
        probe = driver.execute_script(PROBE_JS, name)
        if probe and predicate(probe):
            return probe
        time.sleep(0.1)
    return probe


def _screenshot(driver, name, key):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    root = driver.find_element("css selector", f".tc-switch-{name}")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start', behavior: 'instant'})", root)
    next_frames(driver)   # (scrolled and painted)
    path = SCREENSHOTS / (re.sub(r"[^A-Za-z0-9.-]+", "_", f"{name}-{key}") + ".png")
    path.write_bytes(root.screenshot_as_png)
    return path


def click_through(driver, base_url, page, name, spec):
    """Open `page`, click the widget `name` through every state, and check each (see the
    module docstring); returns (states checked, screenshot paths). Fails with an
    AssertionError naming the first wrong state."""
    _, _, controls, render, initial = spec
    expected = switch.all_states(controls, render)
    labels = [[str(label) for label, _ in options] for _, options in controls]
    selected = [opts.index(str(x)) for opts, x in zip(labels, initial)]

    driver.get(base_url + page)
    reach_widgets(driver)   # (the page loads its widget manager when a reader nears a widget)
    probe = _wait_for(driver, name, lambda p: p["count"] == len(expected) and p["shown"], 30)
    assert probe is not None, f"{page}: no widget .tc-switch-{name} on the page"
    assert probe["count"] == len(expected), (
        f"{page}: {name} embeds {probe['count']} states, the Python side has {len(expected)} "
        f"(did the widget render? is the build stale?)")
    assert probe["tabbars"] == 0, f"{page}: {name} shows {probe['tabbars']} tab bar(s); they should be hidden"
    assert [[b["label"] for b in c] for c in probe["controls"]] == labels, probe["controls"]

    def check(what):
        key = switch.state_key([labels[k][i] for k, i in enumerate(selected)])
        probe = _wait_for(driver, name, lambda p: [s["key"] for s in p["shown"]] == [key], SWITCH_WAIT_S)
        shown = [s["key"] for s in probe["shown"]]
        assert shown == [key], f"{page}: {name} after {what}: shows states {shown}, expected exactly [{key!r}]"
        want = _summary(driver.execute_script(PARSE_JS, expected[key]))
        got = _summary(probe["shown"][0])
        assert got == want, f"{page}: {name} state {key!r} shows {got}, the Python side computes {want}"
        active = [[b["label"] for b in c if b["active"]] for c in probe["controls"]]
        assert active == [[labels[k][i]] for k, i in enumerate(selected)], (
            f"{page}: {name} after {what}: buttons {active} look selected")
        return key

    seen = [check("loading")]
    shots = [_screenshot(driver, name, seen[0])]
    for combo in sweep_states(selected, [len(opts) for opts in labels]):
        for c, i in enumerate(combo):
            if i == selected[c]:
                continue
            button = driver.find_elements("css selector", f".tc-switch-{name} .tc-switch-control")[c] \
                .find_elements("css selector", "button")[i]
            driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", button)
            button.click()
            selected[c] = i
            seen.append(check(f"clicking {labels[c][i]!r} of control {c} ({controls[c][0]})"))
        if len(shots) == 1:
            shots.append(_screenshot(driver, name, seen[-1]))
    assert set(seen) == set(expected), f"{page}: {name}: states never reached {set(expected) - set(seen)}"
    return len(seen), shots


@pytest.mark.parametrize("name", sorted(WIDGETS))
def test_widget_shows_the_right_state_after_every_click(site, browser, name):  # noqa: F811
    page, make_spec = WIDGETS[name]
    with SiteServer(site) as server:
        checked, shots = click_through(browser, server.url, page, name, make_spec())
    print(f"\n{name}: {checked} clicks checked on {page}; screenshots {', '.join(str(s) for s in shots)}")


def test_a_dead_widget_fails(site, browser, tmp_path):  # noqa: F811
    """Self-test: in a copy of the site whose embedded widget state has lost its links, the
    buttons still toggle but the state shown does not follow, and click_through must fail."""
    page, make_spec = WIDGETS["tile"]
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    path = widget_state_file(copy, page)   # (the page fetches it when a reader nears a widget)
    assert path is not None and path.is_file(), f"{page}: no widget state file"
    state = json.loads(path.read_text())
    models = state["state"]
    links = [k for k, m in models.items() if m["model_name"] == "LinkModel"]
    assert links, "found no links in the page's widget state"
    for k in links:
        del models[k]
    path.write_text(json.dumps(state))
    with SiteServer(copy) as server, pytest.raises(AssertionError, match="shows states"):
        click_through(browser, server.url, page, "tile", make_spec())
