r"""Every page of the built site, opened in a real (headless) Chromium.

The site is built once per session by the ``built_site`` fixture (tests/conftest.py),
served from a thread on a free localhost port by Python's http.server, and every HTML
page found in the build (the intro, every chapter in _toc.yml, and whatever page is
added later, plus genindex/search) is opened in Debian's Chromium, driven through
Selenium and Debian's matching chromedriver. A page fails when:

* it does not load (HTTP error), or links to a page of the site that is missing;
* any request to the local server fails or answers 4xx/5xx: a missing image, script,
  stylesheet, font, ...;
* JavaScript reports an error: an uncaught exception, or console.error (minus the
  short, commented list HARMLESS_CONSOLE_ERRORS);
* an <img> of the page's content served by the site has not loaded, is tiny
  (naturalWidth or naturalHeight <= 50 px) or is blank (every pixel the same colour);
* an ipywidgets output has neither rendered nor a visible static fallback (below);
* a jupyterquiz quiz has not rendered its questions, or an underscore of its code is not
  visibly drawn (pixels, below);
* a link to Colab does not open this repository's notebook (below);
* it has math that MathJax has not typeset offline (below).

A full-page screenshot of every page goes to _build/screenshots/ (git-ignored) for a
person to look at; the test prints where.

A second pass, at the projector width of issue 13 (1024 px, NARROW_PX), checks that no
code, output or table is cut off (below); its screenshots go to _build/screenshots/1024px/.

Offline by design. The browser can reach nothing but 127.0.0.1: Chromium's
--host-resolver-rules resolves every other host name to "not found", so requests to
CDNs (MathJax, require.js, the ipywidgets HTML manager, thebe, ...) fail at once and
are ignored: failed requests to non-localhost URLs, and the console's "Failed to load
resource" lines for them, are not counted as problems (the hosts are listed in the
test's output). Other JavaScript errors count even if a missing CDN script caused them.

Math: the site serves its own MathJax 3 (book/_static/mathjax, _config.yml's
mathjax_path), so formulas must be typeset offline. On a page with math (an element of
class "math", which is what Sphinx makes of $...$ and $$...$$, or TeX delimiters \( \)
\[ \] $$ in the visible text), the test scrolls to the first formula (MathJax loads when one
nears the window: book/_static/mathjax-on-demand.js), waits for MathJax's first typesetting
(MathJax.startup.promise) and fails when MathJax did not load, when a math element holds
no <mjx-container>, when MathJax drew an error (<mjx-merror>: a formula it could not
parse), or when TeX delimiters are still visible in the text (outside code). jupyterquiz's
inline script, which looks for MathJax 3 and otherwise replaces it with a CDN's copy
("Trying to force load MathJax 3" in the console), must find the site's.

Widgets: the static site embeds each widget as
<script type="application/vnd.jupyter.widget-view+json"> plus the widget state, and the
book serves the JavaScript that draws it (book/_static/widgets: on-demand.js, which draws the
book's widgets with switch.js, or @jupyter-widgets/html-manager's embed-amd.js and require.js
for others) from the site itself, so widgets must render
offline: on a page that loads the site's own widget loader or manager, a widget that did not draw
is a problem. Where a page would take the manager from a CDN (not this book's pages),
a visible static fallback is accepted instead: text in the widget's own output, or a
visible table, image or text in the next cell output of the same section.

Quizzes (jupyterquiz) carry all their JavaScript inline in the page, so they must render
offline: every quiz container (a <div data-shufflequestions=...>) must hold a visible
question (class "Quiz"). Pages without quizzes pass. The page's text is not enough for
code: `__syncthreads()` can be in the text and still be drawn as "  syncthreads()" (an
underscore hangs below the baseline, and a style can put it outside its code's box, dark
on a dark background). So for every visible code element of a quiz that holds "_", the
test draws the element twice, with its underscores in their colour and made transparent,
and compares screenshots of the region around it: the pixels that differ are the
underscores' ink, and each underscore must leave at least MIN_UNDERSCORE_INK of them at a
contrast of at least MIN_INK_CONTRAST (WCAG's minimum for graphics) with what is drawn
there without it, and as many at DARK_INK_CONTRAST (WCAG's enhanced contrast for text):
an underscore drawn as a grey line across two rows of pixels, as a thin one is at a
device pixel ratio of 1 (a projector; the browser runs at 1), is "drawn pale".

Colab: a link to https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>
must name the repository and branch of _config.yml's ``repository`` and a notebook
(.ipynb) that exists in the repository; a launch button (a Colab link outside the
page's article, i.e. in the header) must open exactly this page's own notebook,
<path_to_book>/<page>.ipynb. Pages without Colab links pass.

Projector width (issue 13: "the browser test renders the site at that width and checks
... no code line is clipped"): a second Chromium renders every page at NARROW_PX wide.
Every visible pre, .highlight, .output and table of the article whose content is wider than
its box (scrollWidth > clientWidth), or that runs past the box of an ancestor that clips
(overflow-x not visible), is a problem unless that box scrolls *visibly*: overflow-x auto
or scroll and a horizontal scrollbar that takes room (offsetHeight - clientHeight -
borders > 0). Content that wraps fits its box and passes. Scrollbars, honestly: the first
pass runs with --hide-scrollbars (steady screenshots), which would hide every scrollbar,
so this pass runs without it and emulates overlay scrollbars, as a reader on macOS or a
phone has them (DevTools' mobile device metrics, at the same width; the pages' viewport
meta tag is width=device-width, so the layout is the desktop one): a box whose scrollbar
only shows while scrolling counts as cut off, and one whose scrollbar the site always
draws (book/_static/site.css, ::-webkit-scrollbar) as visibly scrolling.

Figures (issue 13: "fonts readable at 100% zoom ... every figure with alt text and a
caption"), in both passes, for every image of the article that is served by the site and
not part of a widget: in the first pass it must have alt text (not myst-nb's default, the
file's path) and sit in a <figure> with a non-empty <figcaption> (the figure cell's
mystnb metadata). In both passes its smallest text must be shown at MIN_TEXT_PX or more:
every PNG the book draws goes through tiling_course.style, whose canvas writes into the
PNG itself (tEXt chunks) the smallest font of the figure in points and the dpi it was drawn
at; the test reads those back from the very file the page shows and measures, in the
browser, the width the page shows it at, so the size on screen is
min_font_pt * dpi / 72 * shown_px / natural_px. The site's content column is narrower at
1280 px (the right-hand table of contents takes room) than at 1024 px, which is why both
passes check. A PNG without the stamp is a problem: its text cannot be checked. Widget
images are left out (a control's state, described by the widget's own labels, not a
figure cell); the test notes each one.

Phone, window and projector (issue 28): a third pass renders every page at 390, 900 and
1280 px (WIDTHS; a phone's mobile viewport below MOBILE_BELOW, device pixel ratio 1) and
fails a page that is wider than the screen (it scrolls sideways: document scrollWidth past
the window), an end-of-line comment of code whose `//` or `/*` is broken between its two
characters (a line that starts `/ rows and columns` reads as a division), and, where the
page has the theme's sidebars, a chapter list or contents that a reader cannot open and
close. It clicks the buttons a reader sees: below the theme's breakpoint the menu button
must open the chapter list (MIN_NAV_LINKS of its links inside the window) and Escape close
it, and the same for the contents; at 1280 px the chapter list shows, and its button must
hide it (a projector needs the room) and show it again. At 390 px a screenshot of each page
with its menu open goes to _build/screenshots/390px/ (`*__menu.png`).

This pass, the reading checks and the page weights (READING_SIZES) share one walk (the
`walked` fixture): each page is loaded once at each of their sizes and each check of that
size looks at that load.

When Chromium or chromedriver is missing, the session fixture runs
scripts/install_browser.sh (apt-get, as root); where that cannot install (not root,
no apt-get) the tests skip with the reason.
"""
import base64
import io
import json
import re
import shutil
import struct
import time
import zlib
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urljoin, urlsplit

import pytest
import yaml

webdriver = pytest.importorskip("selenium.webdriver",
                                reason="selenium is not installed (pip install -r requirements.txt)")
import site_weight  # noqa: E402  (scripts/: what a page weighs and how long it takes to load)
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.support.browser import (  # noqa: E402
    CHROMIUM_FLAGS,
    MATH_TIMEOUT_S,
    SiteServer,
    drain_logs,
    find_pages,
    is_local,
    network_requests,
    next_frames,
    reach_widgets,
    screenshot_png,
    site_html,
    start_chromium,
    wait_until_still,
)
from tiling_course.style import MIN_TEXT_PX, STAMP_DPI, STAMP_FONT, png_text  # noqa: E402

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
SCREENSHOTS = ROOT / "_build" / "screenshots"


# Console errors that are not problems of the site; keep this list short, and say why.
HARMLESS_CONSOLE_ERRORS = [
    # pydata-sphinx-theme (under sphinx-book-theme) logs this with console.error on a
    # visitor's first page: localStorage has no colour mode yet and html_theme_options has
    # no default_mode, so it falls back to "auto", which is what it should do.
    re.compile(r"Got invalid theme mode: \. Resetting to auto\."),
]
# Chromium asks every server for /favicon.ico by itself; the site declares no favicon.
IGNORED_LOCAL_PATHS = {"/favicon.ico"}
MIN_IMAGE_PX = 50          # an image of the content narrower or lower than this is "tiny"
MAX_SCREENSHOT_PX = 16000  # full-page screenshots are cut at this height (Chromium's limit is ~16k)
SETTLE_S = 0.5             # after the load event, time for late errors (timers, promises)
MIN_INK_CONTRAST = 3.0     # WCAG 2.1's minimum contrast ratio for graphics and large text
MIN_UNDERSCORE_INK = 4     # pixels at that contrast per underscore (one is about 8 x 1 px at 14 px)
DARK_INK_CONTRAST = 7.0    # WCAG 2.1's enhanced contrast for text: an underscore "dark" as its letters
NARROW_PX = 1024           # issue 13's projector width, for the second pass
# Console messages (any level) that are problems: jupyterquiz logs this when it finds no
# MathJax 3 to typeset with, and then replaces window.MathJax by a CDN's copy.
PROBLEM_CONSOLE_MESSAGES = [re.compile(r"Trying to force load MathJax")]




# --------------------------------------------------------------------------- the site

def toc_docnames(toc_file):
    """The root and every file of a Jupyter Book _toc.yml, at any depth."""
    names = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    names.append(re.sub(r"\.(md|ipynb|rst)$", "", node[key]))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(Path(toc_file).read_text()))
    return names


def launch_config(config_file=ROOT / "_config.yml", repo_root=ROOT):
    """What a Colab link may point to, from _config.yml's ``repository``."""
    config = yaml.safe_load(Path(config_file).read_text()) or {}
    repo = config.get("repository") or {}
    url = (repo.get("url") or "").rstrip("/")
    owner_repo = urlsplit(url).path.strip("/").removesuffix(".git") if url else None
    return {"owner_repo": owner_repo, "branch": repo.get("branch") or "main",
            "path_to_book": (repo.get("path_to_book") or "").strip("/"), "repo_root": Path(repo_root)}


# --------------------------------------------------------------------------- server, browser

# The projector pass: the scrollbars are not hidden, and each page is laid out at
# NARROW_PX with overlay scrollbars (NARROW_METRICS, see the module docstring).
NARROW_FLAGS = [f for f in CHROMIUM_FLAGS if f != "--hide-scrollbars" and not f.startswith("--window-size=")] \
    + [f"--window-size={NARROW_PX},1000"]
NARROW_METRICS = {"width": NARROW_PX, "height": 1000, "deviceScaleFactor": 1, "mobile": True}


@pytest.fixture(scope="session")
def narrow_browser():
    """A second headless Chromium for the projector pass (NARROW_FLAGS)."""
    yield from start_chromium(NARROW_FLAGS)


# --------------------------------------------------------------------------- one page

# Runs in the page after it has loaded; returns what the checks need.
# What the figure checks need of one <img>: its alt text, the caption of the <figure> around
# it, the width it is shown at (CSS px), and whether it belongs to a widget.
FIGURE_FACTS_JS = r"""
const FIGURE_FACTS = img => {
  const figure = img.closest('figure');
  const caption = figure && figure.querySelector('figcaption');
  return {alt: (img.getAttribute('alt') || '').trim(), caption: caption ? caption.innerText.trim() : '',
          shown: img.getBoundingClientRect().width,
          widget: !!img.closest('.jupyter-widgets, .widget-subarea, .widget-output, [class*="widget-"]')};
};
"""

PAGE_PROBE_JS = r"""
const visible = el => !!el && el.getClientRects().length > 0 && el.offsetWidth > 0 && el.offsetHeight > 0
    && getComputedStyle(el).visibility !== 'hidden';
const text = el => (el && el.innerText || '').trim();
const main = document.querySelector('main#main-content') || document.querySelector('main')
    || document.querySelector('[role=main]') || document.body;
const article = document.querySelector('article.bd-article') || document.querySelector('article') || main;

const images = [...article.querySelectorAll('img')].map(img => {
  const r = {src: img.currentSrc || img.src, w: img.naturalWidth, h: img.naturalHeight,
             complete: img.complete, range: null, error: null, ...FIGURE_FACTS(img)};
  if (img.naturalWidth > 0 && img.naturalHeight > 0) {
    try {  // colour range over all pixels (scaled to at most 800 px wide); 0 = blank
      const s = Math.min(1, 800 / img.naturalWidth);
      const c = document.createElement('canvas');
      c.width = Math.max(1, Math.round(img.naturalWidth * s));
      c.height = Math.max(1, Math.round(img.naturalHeight * s));
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0, c.width, c.height);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const lo = [255, 255, 255, 255], hi = [0, 0, 0, 0];
      for (let i = 0; i < d.length; i += 4)
        for (let k = 0; k < 4; k++) { const v = d[i + k]; if (v < lo[k]) lo[k] = v; if (v > hi[k]) hi[k] = v; }
      r.range = Math.max(...[0, 1, 2, 3].map(k => hi[k] - lo[k]));
    } catch (e) { r.error = String(e); }
  }
  return r;
});

const outputs = [...document.querySelectorAll('.cell_output')];
const widgets = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')].map(s => {
  let model = null;
  try { model = JSON.parse(s.textContent).model_id; } catch (e) {}
  const out = s.closest('.cell_output') || s.parentElement;
  const rendered = [...out.querySelectorAll('.widget-subarea, .jupyter-widgets, [class*="widget-"]')]
      .some(el => visible(el));
  const own = visible(out) ? text(out) : '';
  let next = null;
  const section = out.closest('section');
  for (let j = outputs.indexOf(out) + 1; j >= 1 && j < outputs.length; j++) {
    if (section && outputs[j].closest('section') !== section) break;
    if (visible(outputs[j]) && (text(outputs[j]) || outputs[j].querySelector('img'))) { next = outputs[j]; break; }
  }
  return {model, rendered, own: own.slice(0, 80),
          next_table: !!next && [...next.querySelectorAll('table')].some(visible),
          next_image: !!next && [...next.querySelectorAll('img')].some(visible),
          next_text: next ? text(next).slice(0, 80) : ''};
});

// jupyterquiz: a container <div id=... data-shufflequestions=... data-numquestions=...>
// that its inline script fills with one <div class="Quiz"> per question.
const quizzes = [...document.querySelectorAll('[data-shufflequestions], [data-numquestions]')].map(q => {
  const questions = [...q.querySelectorAll('.Quiz')];
  return {id: q.id, questions: questions.length,
          visible: questions.filter(el => visible(el) && text(el)).length,
          answers: q.querySelectorAll('.MCButton, .Input-text, input, button').length};
});
const loose_quiz_parts = [...document.querySelectorAll('.Quiz')]
    .filter(el => !el.closest('[data-shufflequestions], [data-numquestions]')).length;

const colab = [...document.querySelectorAll('a[href*="colab.research.google.com"]')].map(a => ({
  href: a.href, in_article: article.contains(a) && article !== document.body}));

const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
// The site's own: its loader (which draws the book's widgets with switch.js, or loads the
// widget manager for others) or the manager itself.
const local_widget_manager = !!document.querySelector(
    'script[src*="_static/widgets/on-demand.js"], script[src*="_static/widgets/embed-amd.js"]');
return {title: document.title, url: location.href, images, widgets, quizzes, loose_quiz_parts, colab, links,
        local_widget_manager};
"""
PAGE_PROBE_JS = FIGURE_FACTS_JS + PAGE_PROBE_JS

# The projector pass needs only the figure facts of the article's images.
FIGURES_PROBE_JS = FIGURE_FACTS_JS + r"""
const article = document.querySelector('article.bd-article') || document.querySelector('article')
    || document.querySelector('main') || document.body;
return [...article.querySelectorAll('img')].map(img => ({src: img.currentSrc || img.src, w: img.naturalWidth,
                                                         h: img.naturalHeight, ...FIGURE_FACTS(img)}));
"""

# Runs in the page (asynchronously: the last argument is the callback, arguments[0] the
# time limit in ms); waits for MathJax's first typesetting where the page has math, and
# returns what the math checks need (see the module docstring).
MATH_PROBE_JS = r"""
const done = arguments[arguments.length - 1], limit = arguments[0];
const sleep = ms => new Promise(r => setTimeout(r, ms));
const visible = el => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const article = document.querySelector('article.bd-article') || document.querySelector('article')
    || document.querySelector('main') || document.body;
// TeX delimiters in visible text outside code (and outside what MathJax drew).
const RAW = /\\\(|\\\)|\\\[|\\\]|\$\$/;
const rawTex = () => {
  const found = [], walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement, m = RAW.exec(node.textContent);
    if (!m || !el || el.closest('pre, code, kbd, samp, script, style, textarea, mjx-container, .highlight')
        || !visible(el)) continue;
    found.push(node.textContent.slice(Math.max(0, m.index - 30), m.index + 40).replace(/\s+/g, ' ').trim());
  }
  return found;
};
(async () => {
  const maths = [...article.querySelectorAll('.math')];
  const r = {count: maths.length, raw: rawTex(), loaded: false, version: null, error: null,
             untypeset: [], errors: []};
  if (!maths.length && !r.raw.length) return done(r);
  const ready = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
  // MathJax loads when a formula nears the window (book/_static/mathjax-on-demand.js): go to the
  // first, as a reader does, and back to the top once it has typeset them all.
  const scrolled = maths.length > 0;
  if (scrolled) maths[0].scrollIntoView({block: 'center', behavior: 'instant'});
  const t0 = performance.now();
  while (!ready() && performance.now() - t0 < 5000) await sleep(50);
  if (ready()) {
    r.loaded = true;
    r.version = MathJax.version || null;
    try {
      await Promise.race([MathJax.startup.promise, sleep(limit).then(() => {
        throw new Error(`did not finish typesetting within ${limit} ms`); })]);
    } catch (e) { r.error = String(e && e.message || e); }
  }
  r.untypeset = maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.trim().slice(0, 60));
  r.errors = [...article.querySelectorAll('mjx-merror')].map(e =>
      (e.getAttribute('data-mjx-error') || e.textContent || '').trim().slice(0, 120));
  r.raw = rawTex();
  if (scrolled) window.scrollTo({top: 0, behavior: 'instant'});
  done(r);
})();
"""

# Runs in the page at NARROW_PX: every pre, .highlight, .output and table of the article
# whose content is cut off (see the module docstring).
OVERFLOW_PROBE_JS = r"""
const visible = el => el.getClientRects().length > 0 && el.offsetWidth > 0 && el.offsetHeight > 0
    && getComputedStyle(el).visibility !== 'hidden';
const article = document.querySelector('article.bd-article') || document.querySelector('article')
    || document.querySelector('main') || document.body;
const px = v => parseFloat(v) || 0;
// Height of the horizontal scrollbar that is drawn and takes room (0: none, hidden or overlay).
const bar = el => { const cs = getComputedStyle(el);
  return el.offsetHeight - el.clientHeight - px(cs.borderTopWidth) - px(cs.borderBottomWidth); };
const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
const scrollsVisibly = el => scrolls(el) && bar(el) > 0;
const name = el => el.tagName.toLowerCase() + [...el.classList].slice(0, 2).map(c => '.' + c).join('');
const widest = el => (el.innerText || el.textContent || '').split('\n')
    .reduce((a, b) => b.length > a.length ? b : a, '').trim().slice(0, 70);
const how = el => { const o = getComputedStyle(el).overflowX;
  return `overflow-x: ${o}` + (scrolls(el) ? ', and its scrollbar is not drawn (hidden or overlay)' : ''); };
const out = {checked: 0, scrolling: 0, problems: []};
const page = document.documentElement.clientWidth;
for (const el of article.querySelectorAll('pre, .highlight, .output, table')) {
  if (!visible(el)) continue;
  out.checked++;
  const cs = getComputedStyle(el), r = el.getBoundingClientRect();
  const problem = (content, box, why) => out.problems.push(
      {what: name(el), text: widest(el), content: Math.round(content), box: Math.round(box), why});
  // Its own content wider than its box.
  if (el.scrollWidth > el.clientWidth + 1 && cs.overflowX !== 'visible') {
    if (scrollsVisibly(el)) out.scrolling++;
    else problem(el.scrollWidth, el.clientWidth, how(el));
    continue;
  }
  // The element (with what spills out of it) past the box of the nearest ancestor that clips.
  const right = cs.overflowX === 'visible' ? Math.max(r.right, r.left + el.clientLeft + el.scrollWidth) : r.right;
  let clipped = false;
  for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === 'visible') continue;
    const ar = a.getBoundingClientRect(), edge = ar.left + a.clientLeft + a.clientWidth;
    if (right > edge + 1) {
      clipped = true;
      if (scrollsVisibly(a)) out.scrolling++;
      else problem(right - r.left, edge - r.left, `cut by ${name(a)}, ${how(a)}`);
    }
    break;
  }
  if (!clipped && right > page + 1)
    problem(right - r.left, page - r.left, `runs past the right edge of the ${page} px window`);
}
return out;
"""


class PageReport:
    def __init__(self, page):
        self.page = page
        self.problems = []   # what fails the test
        self.notes = []      # what is worth knowing and is not a failure
        self.external = []   # blocked requests to other hosts
        self.screenshot = None
        self.checked = {}    # what was looked at: {"images": 3, ...}

    def __repr__(self):
        return f"PageReport({self.page!r}, problems={self.problems!r})"


def _check_colab(report, docname, colab_links, launch):
    for link in colab_links:
        href = link["href"]
        parts = urlsplit(href).path.strip("/").split("/")
        if not parts or parts[0] != "github":
            report.notes.append(f"Colab link that opens no notebook of a repository: {href}")
            continue
        # /github/<owner>/<repo>/blob/<branch>/<path...>
        if len(parts) < 6 or parts[3] != "blob":
            report.problems.append(f"Colab link is not .../github/<owner>/<repo>/blob/<branch>/<path>: {href}")
            continue
        owner_repo, branch, path = "/".join(parts[1:3]), parts[4], unquote("/".join(parts[5:]))
        where = "launch button" if not link["in_article"] else "Colab link in the text"
        if launch.get("owner_repo") and owner_repo != launch["owner_repo"]:
            report.problems.append(f"{where} opens repository {owner_repo}, _config.yml says "
                                   f"{launch['owner_repo']}: {href}")
        if launch.get("branch") and branch != launch["branch"]:
            report.problems.append(f"{where} opens branch {branch}, _config.yml says {launch.get('branch')}: {href}")
        if not path.endswith(".ipynb"):
            report.problems.append(f"{where} does not open a notebook (.ipynb): {href}")
        prefix = launch.get("path_to_book", "")
        expected = f"{prefix}/{docname}.ipynb" if prefix else f"{docname}.ipynb"
        if not link["in_article"] and path != expected:
            report.problems.append(f"launch button opens {path}, this page's notebook is {expected}: {href}")
        repo_root = launch.get("repo_root")
        if repo_root is not None and not (Path(repo_root) / path).is_file():
            report.problems.append(f"{where} opens {path}, which is not in the repository: {href}")


def _check_math(report, math):
    """Problems of MATH_PROBE_JS's answer (see the module docstring)."""
    if not (math["count"] or math["raw"]):
        return
    if not math["loaded"]:
        report.problems.append(f"MathJax did not load (no MathJax.startup), so the page's {math['count']} "
                               f"formula(s) show as TeX source")
    elif math["error"]:
        report.problems.append(f"MathJax {math['version']}: {math['error']}")
    else:
        report.notes.append(f"MathJax {math['version']} typeset {math['count'] - len(math['untypeset'])} "
                            f"formula(s)")
    if math["untypeset"]:
        report.problems.append(f"{len(math['untypeset'])} of {math['count']} formula(s) not typeset by MathJax, "
                               f"first {math['untypeset'][0]!r}")
    for error in math["errors"]:
        report.problems.append(f"MathJax error: {error}")
    for raw in math["raw"][:5]:
        report.problems.append(f"TeX delimiters visible in the text: {raw!r}")
    if len(math["raw"]) > 5:
        report.problems.append(f"... and {len(math['raw']) - 5} more places with visible TeX delimiters")


def _local_file(src, html_root):
    """The file of the served folder that a local URL names."""
    return Path(html_root) / unquote(urlsplit(src).path.lstrip("/"))


def _figure_problems(images, html_root, notes, captions=True):
    """Issue 13's figure checks on the images of one page as the browser shows them (see the
    module docstring). Widget images are left out: a widget's image is one state of a
    control that the widget's own label describes, drawn by the widget's code, not a
    figure cell, so it has no caption of its own."""
    problems = []
    for img in images:
        if not is_local(img["src"]) or img["w"] == 0:
            continue  # another host's image, or one that did not load (reported above)
        name = img["src"].rsplit("/", 1)[-1][:60]
        if img["widget"]:
            notes.append(f"image {name} is part of a widget: no caption or font stamp asked of it")
            continue
        if captions:
            src_path = urlsplit(img["src"]).path
            if not img["alt"] or img["alt"].endswith(src_path.rsplit("/", 1)[-1]):
                problems.append(f"image {name} has no alt text (myst-nb's default is the file's path)")
            if not img["caption"]:
                problems.append(f"image {name} is not in a figure with a caption")
        path = _local_file(img["src"], html_root)
        if path.suffix.lower() != ".png" or not path.is_file():
            continue
        stamp = png_text(path.read_bytes())
        if STAMP_FONT not in stamp or STAMP_DPI not in stamp:
            problems.append(f"image {name} carries no font stamp ({STAMP_FONT}): draw it through "
                            f"tiling_course.style, or its text size cannot be checked")
            continue
        if img["shown"] <= 0:
            continue  # not shown (a closed dropdown): nothing to read
        px = float(stamp[STAMP_FONT]) * float(stamp[STAMP_DPI]) / 72 * img["shown"] / img["w"]
        if px < MIN_TEXT_PX - 1e-6:
            problems.append(f"image {name}: smallest text {px:.1f} px at {img['shown']:.0f} px shown of "
                            f"{img['w']} px ({stamp[STAMP_FONT]} pt at {stamp[STAMP_DPI]} dpi), "
                            f"below {MIN_TEXT_PX} px")
    return problems


def check_page(driver, base_url, page, html_root, launch=None, screenshot_dir=None):
    """Open one page of a site served at base_url (page relative to it, 'book/x.html') and
    return a PageReport. html_root is the served folder (for internal links); launch is
    launch_config() or None (then Colab links are checked for the page's path only)."""
    report = PageReport(page)
    launch = launch if launch is not None else {"owner_repo": None, "branch": None, "path_to_book": ""}
    html_root = Path(html_root)
    url = urljoin(base_url, page)
    docname = re.sub(r"\.html$", "", page)
    source = (html_root / page).read_text(errors="replace") if (html_root / page).is_file() else ""
    redirect = re.search(r'http-equiv="refresh"[^>]*url=([^"\']+)', source, re.I)

    drain_logs(driver)
    try:
        driver.get(url)
        if redirect:
            target = urljoin(url, redirect.group(1).strip())
            WebDriverWait(driver, 10).until(lambda d: d.current_url.split("#")[0] == target)
        WebDriverWait(driver, 20).until(lambda d: d.execute_script(
            "return document.readyState === 'complete' && [...document.images].every(i => i.complete)"))
    except TimeoutException:
        report.problems.append(f"did not finish loading (or redirecting) within the time limit: {driver.current_url}")
    except WebDriverException as exc:
        report.problems.append(f"did not load: {exc.msg}")
        return report
    loaded = time.monotonic()
    math = driver.execute_async_script(MATH_PROBE_JS, MATH_TIMEOUT_S * 1000)
    reach_widgets(driver)
    # Late errors (timers, promises): the console is read no sooner than SETTLE_S after the
    # load, and after what the formulas and widgets started (waiting for them counts).
    time.sleep(max(0.0, SETTLE_S - (time.monotonic() - loaded)))
    probe = driver.execute_script(PAGE_PROBE_JS)

    # Network: every request of this page to the local server must succeed.
    console, perf = drain_logs(driver)
    failed_local = set()
    for req in network_requests(perf):
        u = req["url"]
        if u.startswith(("data:", "blob:", "about:", "chrome")):
            continue
        if not is_local(u):
            report.external.append(u)
            continue
        if urlsplit(u).path in IGNORED_LOCAL_PATHS:
            continue
        what = "page" if req.get("type") == "Document" else (req.get("type") or "resource").lower()
        if req.get("status") is not None and req["status"] >= 400:
            # (Chromium then also cancels a 4xx/5xx stylesheet or script: net::ERR_ABORTED)
            report.problems.append(f"{what} {urlsplit(u).path} answered HTTP {req['status']}")
            failed_local.add(u)
        elif req.get("error") and not req.get("canceled"):
            report.problems.append(f"{what} {urlsplit(u).path} failed: {req['error']}")
            failed_local.add(u)

    if redirect:  # a redirect stub: the page it leads to is checked on its own
        return report

    # Console: uncaught exceptions and console.error, minus failures of other hosts.
    for entry in console:
        message = entry["message"]
        if any(p.search(message) for p in PROBLEM_CONSOLE_MESSAGES):
            report.problems.append(f"console: {message[:300]}")
            continue
        if entry["level"] != "SEVERE":
            continue
        if entry.get("source") == "network":
            first = message.split(" ", 1)[0]
            if not is_local(first) or first in failed_local or urlsplit(first).path in IGNORED_LOCAL_PATHS:
                continue  # another host (offline on purpose), or already reported above
        if any(p.search(message) for p in HARMLESS_CONSOLE_ERRORS):
            report.notes.append(f"harmless console error (HARMLESS_CONSOLE_ERRORS): {message[:160]}")
            continue
        report.problems.append(f"JavaScript error: {message[:400]}")

    # Internal links must lead to pages that exist.
    for href in sorted(set(probe["links"])):
        parts = urlsplit(href)
        if is_local(href) and parts.path.endswith(".html"):
            target = html_root / unquote(parts.path.lstrip("/"))
            if not target.is_file():
                report.problems.append(f"link to a missing page: {parts.path}")

    # Figures of the content.
    for img in probe["images"]:
        name = img["src"].rsplit("/", 1)[-1][:60]
        if not is_local(img["src"]):
            if not img["src"].startswith("data:"):
                report.notes.append(f"image from another host, not checked offline: {img['src']}")
                continue
        if img["w"] == 0 or img["h"] == 0:
            report.problems.append(f"image {name} did not load (naturalWidth {img['w']})")
        elif img["w"] <= MIN_IMAGE_PX or img["h"] <= MIN_IMAGE_PX:
            report.problems.append(f"image {name} is tiny: {img['w']}x{img['h']} px")
        elif img["error"]:
            report.problems.append(f"image {name} could not be read back: {img['error']}")
        elif img["range"] is not None and img["range"] <= 2:
            report.problems.append(f"image {name} is blank ({img['w']}x{img['h']} px of one colour)")
    report.problems += _figure_problems(probe["images"], html_root, report.notes)

    # Widgets: rendered; or, where the manager would come from a CDN, a visible static
    # fallback (see the module docstring).
    for w in probe["widgets"]:
        if w["rendered"]:
            continue
        if probe.get("local_widget_manager"):
            report.problems.append(f"widget {w['model']} did not render, though the site serves its widget manager")
        elif w["own"]:
            report.notes.append(f"widget {w['model']} not rendered offline; its own output shows: {w['own']!r}")
        elif w["next_table"] or w["next_image"] or w["next_text"]:
            kind = "table" if w["next_table"] else "image" if w["next_image"] else "text"
            report.notes.append(f"widget {w['model']} not rendered offline (its JavaScript comes from a CDN); "
                                f"static fallback: the {kind} of the next output, {w['next_text'][:50]!r}")
        else:
            report.problems.append(f"widget {w['model']} neither rendered nor has a visible static fallback "
                                   f"(own output empty, no table/image/text after it in its section)")

    # Quizzes: jupyterquiz's JavaScript is inline, so they must render offline.
    for q in probe["quizzes"]:
        if q["visible"] == 0:
            report.problems.append(f"quiz {q['id'] or '?'} did not render: {q['questions']} question(s), "
                                   f"{q['visible']} visible")
    if probe["loose_quiz_parts"]:
        report.notes.append(f"{probe['loose_quiz_parts']} .Quiz element(s) outside a quiz container")

    report.problems += _undrawn_underscores(driver)

    _check_math(report, math)
    _check_colab(report, docname, probe["colab"], launch)
    report.checked = {"images": len(probe["images"]),
                      "figures": sum(1 for i in probe["images"] if is_local(i["src"]) and not i["widget"]),
                      "widgets": len(probe["widgets"]),
                      "quizzes": len(probe["quizzes"]), "Colab links": len(probe["colab"]),
                      "formulas": math["count"] - len(math["untypeset"])}

    if screenshot_dir is not None:
        report.screenshot = _screenshot(driver, Path(screenshot_dir) / (docname.replace("/", "__") + ".png"))
    return report


# Wraps each "_" of the text of a quiz's visible code elements in a <span data-underscore>,
# and returns how many underscores each element (by its index in the page's list) holds.
MARK_UNDERSCORES_JS = r"""
const visible = el => el.getClientRects().length > 0 && el.offsetWidth > 0
    && getComputedStyle(el).visibility !== 'hidden';
const codes = [...document.querySelectorAll('.Quiz code')].filter(c => visible(c) && c.textContent.includes('_'));
window.__quizCodes = codes;
return codes.map(c => {
  const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
  const nodes = []; while (walker.nextNode()) nodes.push(walker.currentNode);
  let n = 0;
  for (const node of nodes) {
    const parts = node.textContent.split('_');
    if (parts.length === 1) continue;
    const frag = document.createDocumentFragment();
    parts.forEach((part, i) => {
      if (i) {
        const s = document.createElement('span');
        s.dataset.underscore = ''; s.textContent = '_'; frag.append(s); n++;
      }
      if (part) frag.append(part);
    });
    node.replaceWith(frag);
  }
  return {text: c.textContent.slice(0, 60), underscores: n};
});
"""


def _luminance(rgb):
    """WCAG 2.1 relative luminance of an sRGB colour (0..255 channels)."""
    def linear(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a, b):
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _region(driver, element, margin=8):
    """The pixels around `element` (its box grown by `margin` px, inside the window) as the
    window shows them: a screenshot of that region alone (DevTools takes its clip in the
    document's coordinates, hence the scroll offsets, and draws the page afresh for it, so
    what was just scrolled or restyled shows)."""
    rect = driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, "
                                 "r.right, r.bottom, innerWidth, innerHeight, scrollX, scrollY];", element)
    left, top, right, bottom, width, height, sx, sy = rect
    box = (max(0, int(left) - margin), max(0, int(top) - margin),
           min(int(width), int(right) + margin + 1), min(int(height), int(bottom) + margin + 1))
    from PIL import Image  # matplotlib's dependency: in the book's requirements
    png = screenshot_png(driver, {"x": box[0] + sx, "y": box[1] + sy, "width": box[2] - box[0],
                                  "height": box[3] - box[1]})
    return Image.open(io.BytesIO(png)).convert("RGB")


def _undrawn_underscores(driver):
    """Problems for the quiz code elements whose underscores are not visibly drawn (see the
    module docstring): each is drawn with its underscores, then with them transparent."""
    problems = []
    marked = driver.execute_script(MARK_UNDERSCORES_JS)
    for i, code in enumerate(marked):
        element = driver.execute_script("return window.__quizCodes[arguments[0]]", i)
        # 'instant': the theme scrolls smoothly, and a screenshot taken mid-scroll compares
        # two different regions (every pixel "differs", and the check passes by accident).
        driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", element)
        drawn = _region(driver, element)
        driver.execute_script("arguments[0].querySelectorAll('[data-underscore]')"
                              ".forEach(s => s.style.color = 'transparent')", element)
        hidden = _region(driver, element)
        driver.execute_script("arguments[0].querySelectorAll('[data-underscore]')"
                              ".forEach(s => s.style.color = '')", element)
        contrasts = [_contrast(a, b) for a, b in zip(drawn.get_flattened_data(), hidden.get_flattened_data())
                     if a != b]
        ink = sum(c >= MIN_INK_CONTRAST for c in contrasts)
        dark = sum(c >= DARK_INK_CONTRAST for c in contrasts)
        needed = MIN_UNDERSCORE_INK * code["underscores"]
        if ink < needed:
            problems.append(f"quiz code {code['text']!r}: its {code['underscores']} underscore(s) are not visibly "
                            f"drawn ({ink} pixel(s) at contrast >= {MIN_INK_CONTRAST}, {needed} needed)")
        elif dark < needed:
            problems.append(f"quiz code {code['text']!r}: its {code['underscores']} underscore(s) are drawn pale "
                            f"({dark} pixel(s) at contrast >= {DARK_INK_CONTRAST}, {needed} needed; darkest "
                            f"{max(contrasts):.1f})")
    return problems


def _screenshot(driver, path, metrics=None):
    """Full page through DevTools: the viewport is made as tall as the page (so that the
    theme's sticky sidebars and header are laid out as a reader sees them), captured, and
    put back (to `metrics`, a device metrics override, where the page was laid out under one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    width = driver.execute_script("return window.innerWidth")
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    height = int(min(size["height"], MAX_SCREENSHOT_PX))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": bool(metrics and metrics.get("mobile"))})
    try:
        next_frames(driver)  # the page laid out at the new size
        shot = screenshot_png(driver)
    finally:
        if metrics:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        else:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.write_bytes(shot)
    return path


def check_narrow_page(driver, base_url, page, html_root, screenshot_dir=None):
    """The projector pass over one page (see the module docstring): open it at NARROW_PX
    with overlay scrollbars, wait for MathJax (formulas change the layout), and return a
    PageReport whose problems are the boxes whose content is cut off."""
    report = PageReport(page)
    # (a redirect stub: the page it leads to is checked on its own)
    if _is_redirect(html_root, page) or not _open(driver, urljoin(base_url, page), NARROW_METRICS, report):
        return report
    _settle(driver)
    width = driver.execute_script("return document.documentElement.clientWidth")
    if abs(width - NARROW_PX) > 1:
        report.problems.append(f"laid out {width} px wide, not {NARROW_PX} px")
    probe = driver.execute_script(OVERFLOW_PROBE_JS)
    for p in probe["problems"]:
        report.problems.append(f"{NARROW_PX} px: {p['what']} cut off, {p['content']} px of content in "
                               f"{p['box']} px ({p['why']}): {p['text']!r}")
    figures = driver.execute_script(FIGURES_PROBE_JS)
    report.problems += [f"{NARROW_PX} px: {p}" for p in _figure_problems(figures, html_root, report.notes,
                                                                         captions=False)]
    report.checked = {"boxes": probe["checked"], "scrolling visibly": probe["scrolling"],
                      "figures": sum(1 for f in figures if is_local(f["src"]) and not f["widget"])}
    if screenshot_dir is not None:
        report.screenshot = _screenshot(driver, Path(screenshot_dir) / (re.sub(r"\.html$", "", page)
                                                                        .replace("/", "__") + ".png"), NARROW_METRICS)
    return report


# --------------------------------------------------------------------------- phone, window, projector

# Issue 28: the site at a phone's width, a narrow window's and a projector's. At each, every
# page: no page wider than the screen, no end-of-line comment broken between its two
# slashes, and, on every page with the theme's sidebars, the chapter list and the page's
# contents open and close from the buttons a reader sees (WIDTH_NAV_JS, _check_nav).
WIDTHS = (390, 900, 1280)
MOBILE_BELOW = 600           # emulate a phone (mobile viewport, overlay scrollbars) below this width
MIN_NAV_LINKS = 5            # links of an open chapter list, or contents, in view (the book has 10 pages)


# The screen's height at each of WIDTHS: a phone's is READING_SIZES' phone's, so that one load
# of a page serves both checks at that size (see walk_page).
WIDTH_HEIGHTS = {390: 844}


def width_metrics(width):
    return size_metrics((width, WIDTH_HEIGHTS.get(width, 800)))


def size_metrics(size):
    """DevTools' device metrics for a screen of size (width, height): a phone below MOBILE_BELOW."""
    return {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < MOBILE_BELOW}


# The layout checks at one width: how wide the page is, the widest thing past the screen's
# right edge that nothing clips, and the end-of-line comments of code whose opening `//` or
# `/*` is broken across two lines.
WIDTH_LAYOUT_JS = r"""
const W = document.documentElement.clientWidth;
const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const out = {width: W, scroll: document.documentElement.scrollWidth, wide: [], comments: 0, split: []};
const main = document.querySelector('main') || document.body;
for (const el of main.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (!r.width || r.right <= W + 1 || !visible(el)) continue;
  let clipped = false;
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
    if (getComputedStyle(a).overflowX !== 'visible') { clipped = a.getBoundingClientRect().right <= W + 1; break; }
  const what = el.tagName.toLowerCase() + [...el.classList].slice(0, 2).map(c => '.' + c).join('');
  if (!clipped) out.wide.push({what, right: Math.round(r.right), text: (el.textContent || '').trim().slice(0, 60)});
}
out.wide.sort((a, b) => b.right - a.right);
const line = (node, i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
  const rs = r.getClientRects(); return rs.length ? Math.round(rs[0].top) : null; };
for (const el of main.querySelectorAll('pre .c1, pre .c, pre .cm, pre .cs')) {
  const t = el.firstChild;
  if (!t || t.nodeType !== 3 || !visible(el)) continue;
  const m = /\/\/|\/\*/.exec(t.data);
  if (!m) continue;
  out.comments++;
  const a = line(t, m.index), b = line(t, m.index + 1);
  if (a !== null && b !== null && a !== b) out.split.push(t.data.trim().slice(0, 60));
}
return out;
"""

# What of the chapter list (the theme's primary sidebar) and the page's contents (its
# secondary sidebar) a reader sees now: their links inside the window, and the buttons that
# toggle them.
WIDTH_NAV_JS = r"""
const shown = el => { if (!el || !el.getClientRects().length) return false;
  const cs = getComputedStyle(el); if (cs.visibility === 'hidden' || +cs.opacity === 0) return false;
  for (let a = el; a; a = a.parentElement) { const s = getComputedStyle(a);
    if (s.visibility === 'hidden' || +s.opacity === 0 || s.display === 'none') return false; }
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.right > 0 && r.left < innerWidth && r.bottom > 0 && r.top < innerHeight; };
const count = sel => [...document.querySelectorAll(sel)].filter(shown).length;
return {has_primary: !!document.querySelector('.bd-docs-nav a'),
        has_contents: !!document.querySelector('.bd-toc-nav a, .page-toc a'),
        primary: count('.bd-docs-nav a'), contents: count('.bd-toc-nav a, .page-toc a'),
        primary_toggle: count('.primary-toggle'), secondary_toggle: count('.secondary-toggle')};
"""


def _nav(driver):
    return driver.execute_script(WIDTH_NAV_JS)


def _click_visible(driver, selector):
    """Click the first button of `selector` that a reader sees, as a reader would (a real
    click, at its place); False if none is shown."""
    # A figure enlarged by a tap (site.js) is a modal dialog over the page: a reader closes it
    # before reaching for the menu. (On the damaged copy of test_width_checks_catch_..., whose
    # page is wider than the phone, a click meant for a button can open one.)
    if driver.execute_script("return document.querySelectorAll('dialog.tc-enlarged[open]').length"):
        _close_with_escape(driver)
    for element in driver.find_elements("css selector", selector):
        if element.is_displayed() and element.size["width"] > 0:
            element.click()
            wait_until_still(driver)   # the theme's transitions
            return True
    return False


def _close_with_escape(driver):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    wait_until_still(driver)


def _check_nav(driver, report, width):
    """The chapter list and the contents open and close from their visible buttons (see
    WIDTHS). Below the theme's breakpoint each is closed until its button is clicked, opens
    (MIN_NAV_LINKS of its links in view), and closes with Escape; on a wide screen the
    chapter list shows, its button hides it (a projector needs the room) and shows it again,
    and the contents show without a button."""
    tag = f"{width} px"
    nav = _nav(driver)
    if not nav["has_primary"]:
        return
    checked = []
    if nav["primary"] >= MIN_NAV_LINKS:   # shown beside the page: its button must hide it, then show it
        if not _click_visible(driver, ".primary-toggle"):
            report.problems.append(f"{tag}: the chapter list shows and no button to hide it is visible")
        else:
            hidden = _nav(driver)["primary"]
            if hidden:
                report.problems.append(f"{tag}: the menu button does not hide the chapter list "
                                       f"({hidden} of its links still in view)")
            _click_visible(driver, ".primary-toggle")
            if _nav(driver)["primary"] < MIN_NAV_LINKS:
                report.problems.append(f"{tag}: the menu button hid the chapter list and does not show it again")
            checked.append("chapter list hidden and shown")
    else:
        if nav["primary"]:
            report.problems.append(f"{tag}: the chapter list is half shown ({nav['primary']} links in view)")
        if not _click_visible(driver, ".primary-toggle"):
            report.problems.append(f"{tag}: the chapter list is hidden and no menu button is visible")
        else:
            opened = _nav(driver)["primary"]
            if opened < MIN_NAV_LINKS:
                report.problems.append(f"{tag}: the menu button does not open the chapter list "
                                       f"({opened} of its links in view)")
            else:
                report.menu_open = True
                _close_with_escape(driver)
                if _nav(driver)["primary"]:
                    report.problems.append(f"{tag}: the chapter list does not close (Escape)")
                checked.append("chapter list opened and closed")
    if nav["has_contents"]:
        nav = _nav(driver)
        if nav["secondary_toggle"]:
            if nav["contents"]:
                report.problems.append(f"{tag}: the contents are half shown ({nav['contents']} links in view)")
            _click_visible(driver, ".secondary-toggle")
            opened = _nav(driver)["contents"]
            if opened < min(MIN_NAV_LINKS, driver.execute_script(
                    "return document.querySelectorAll('.bd-toc-nav a, .page-toc a').length")):
                report.problems.append(f"{tag}: the contents button does not open the contents "
                                       f"({opened} of their links in view)")
            else:
                _close_with_escape(driver)
                if _nav(driver)["contents"]:
                    report.problems.append(f"{tag}: the contents do not close (Escape)")
                checked.append("contents opened and closed")
        elif not nav["contents"]:
            report.problems.append(f"{tag}: the page's contents are neither shown nor behind a visible button")
        else:
            checked.append("contents shown")
    report.checked["navigation"] = len(checked)
    report.notes += [f"{tag}: {c}" for c in checked]


def _is_redirect(html_root, page):
    """Whether `page` is a redirect stub (its target is checked on its own)."""
    source = (Path(html_root) / page).read_text(errors="replace") if (Path(html_root) / page).is_file() else ""
    return bool(re.search(r'http-equiv="refresh"', source, re.I))


def _wait_loaded(driver, report):
    """Wait until the page has loaded with its images; False (the problem in `report`) where the
    browser could not load it at all."""
    try:
        WebDriverWait(driver, 20).until(lambda d: d.execute_script(
            "return document.readyState === 'complete' && [...document.images].every(i => i.complete)"))
    except TimeoutException:
        report.problems.append(f"did not finish loading within the time limit: {driver.current_url}")
    except WebDriverException as exc:
        report.problems.append(f"did not load: {exc.msg}")
        return False
    return True


def _open(driver, url, metrics, report):
    """Load `url` on a screen of `metrics` and wait for it (_wait_loaded)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        driver.get(url)
    except WebDriverException as exc:
        report.problems.append(f"did not load: {exc.msg}")
        return False
    return _wait_loaded(driver, report)


# The page's fonts loaded (a font that comes late changes the layout), and the layout they
# make painted.
FONTS_JS = ("const done = arguments[0]; "
            "document.fonts.ready.then(() => requestAnimationFrame(() => requestAnimationFrame(() => done())));")


def _settle(driver):
    """After the load: the fonts (FONTS_JS), MathJax's first typesetting (formulas change the
    layout), every widget drawn (reach_widgets); then at the top of the page. (These passes
    read no console, so the main pass's SETTLE_S for late errors is not waited here.)"""
    driver.execute_async_script(FONTS_JS)
    driver.execute_async_script(MATH_PROBE_JS, MATH_TIMEOUT_S * 1000)
    reach_widgets(driver)
    driver.execute_script("window.scrollTo({top: 0, behavior: 'instant'})")


def check_width_page(driver, base_url, page, html_root, width, screenshot_dir=None):
    """One page at one of WIDTHS (a phone below MOBILE_BELOW), loaded for this check alone: see
    width_checks. Returns a PageReport."""
    report = PageReport(page)
    report.menu_open = False
    if not _is_redirect(html_root, page) and _open(driver, urljoin(base_url, page), width_metrics(width), report):
        _settle(driver)
        width_checks(driver, report, page, width, screenshot_dir)
    return report


def width_checks(driver, report, page, width, screenshot_dir=None):
    """The page loaded at one of WIDTHS: its layout (WIDTH_LAYOUT_JS) and its navigation
    (_check_nav), into `report`."""
    layout = driver.execute_script(WIDTH_LAYOUT_JS)
    tag = f"{width} px"
    if abs(layout["width"] - width) > 20:   # (a classic scrollbar takes its width off)
        report.problems.append(f"{tag}: laid out {layout['width']} px wide")
    if layout["scroll"] > layout["width"] + 1:   # (what is past the edge but cannot be scrolled to is not)
        first = layout["wide"][0] if layout["wide"] else None
        where = f", first {first['what']} to {first['right']} px: {first['text']!r}" if first else ""
        report.problems.append(f"{tag}: the page is wider than the screen ({layout['scroll']} px){where}")
    for text in layout["split"][:3]:
        report.problems.append(f"{tag}: a comment breaks between its two slashes: {text!r}")
    if len(layout["split"]) > 3:
        report.problems.append(f"{tag}: ... and {len(layout['split']) - 3} more comments broken so")
    report.checked["comments"] = layout["comments"]
    _check_nav(driver, report, width)
    if screenshot_dir is not None and width < MOBILE_BELOW:   # (the other widths: the pages as they are)
        path = Path(screenshot_dir) / (re.sub(r"\.html$", "", page).replace("/", "__") + ".png")
        path.parent.mkdir(parents=True, exist_ok=True)
        if report.menu_open and _click_visible(driver, ".primary-toggle"):
            path.with_name(path.stem + "__menu.png").write_bytes(screenshot_png(driver))  # the menu, open
            _close_with_escape(driver)
        report.screenshot = _screenshot(driver, path, width_metrics(width))


def _print_reports(reports):
    for r in reports:  # shown when the test fails, or with pytest -s
        hosts = sorted({urlsplit(u).hostname for u in r.external})
        counts = ", ".join(f"{what}: {n}" for what, n in r.checked.items() if n)
        print(f"  {r.page}: {len(r.problems)} problem(s)" + (f"; checked {counts}" if counts else "")
              + (f"; screenshot {r.screenshot.name}" if r.screenshot else "")
              + (f"; blocked offline: {', '.join(hosts)}" if hosts else ""))
        for note in r.notes:
            print(f"      note: {note}")
        for problem in r.problems:
            print(f"      PROBLEM: {problem}")


# --------------------------------------------------------------------------- the tests

def test_every_page_in_a_browser(built_site, browser, capsys):
    html = site_html(built_site)
    pages = find_pages(html)
    missing = [d for d in toc_docnames(ROOT / "_toc.yml") if f"{d}.html" not in pages]
    assert not missing, f"pages of _toc.yml not in the build: {missing}"

    if SCREENSHOTS.exists():
        for old in SCREENSHOTS.glob("*.png"):
            old.unlink()
    launch = launch_config()
    started = time.monotonic()
    with SiteServer(html) as server:
        reports = [check_page(browser, server.url, page, html, launch, SCREENSHOTS) for page in pages]
    elapsed = time.monotonic() - started
    failures = [f"{r.page}: {p}" for r in reports for p in r.problems]

    with capsys.disabled():  # shown even when the test passes
        print(f"\n[test_browser] {len(pages)} pages checked in Chromium in {elapsed:.1f} s, "
              f"{len(failures)} problem(s); screenshots in {SCREENSHOTS}/")
    _print_reports(reports)
    assert not failures, f"{len(failures)} problem(s) in the browser:\n" + "\n".join(failures)
    # The math check is not vacuous: the book has formulas, and they were typeset.
    assert sum(r.checked.get("formulas", 0) for r in reports) > 0, "no page has a typeset formula"
    # Nor is the figure check: the book's figures were found, captioned and their stamps read.
    assert sum(r.checked.get("figures", 0) for r in reports) >= 20, "fewer figures than the book draws"


def test_every_page_at_projector_width(built_site, narrow_browser, capsys):
    """Issue 13's projector check: at NARROW_PX no code line, output or table is cut off,
    and no figure's text is shown below MIN_TEXT_PX (see _figure_problems)."""
    html = site_html(built_site)
    pages = find_pages(html)
    shots = SCREENSHOTS / f"{NARROW_PX}px"
    if shots.exists():
        for old in shots.glob("*.png"):
            old.unlink()
    started = time.monotonic()
    with SiteServer(html) as server:
        reports = [check_narrow_page(narrow_browser, server.url, page, html, shots) for page in pages]
    elapsed = time.monotonic() - started
    failures = [f"{r.page}: {p}" for r in reports for p in r.problems]
    with capsys.disabled():
        print(f"\n[test_browser] {len(pages)} pages checked at {NARROW_PX} px in {elapsed:.1f} s, "
              f"{len(failures)} problem(s); screenshots in {shots}/")
    _print_reports(reports)
    assert not failures, f"{len(failures)} box(es) cut off at {NARROW_PX} px:\n" + "\n".join(failures)
    assert sum(r.checked.get("boxes", 0) for r in reports) > 0, "no code, output or table found on any page"
    assert sum(r.checked.get("figures", 0) for r in reports) >= 20, "fewer figures than the book draws"


def test_every_page_at_phone_window_and_projector_widths(walked, capsys):
    """Issue 28: at 390, 900 and 1280 px (WIDTHS) no page is wider than the screen, no
    comment breaks between its slashes, and the chapter list and contents open and close
    from the buttons a reader sees (the menu clicked at phone width)."""
    reports = [seen.width for seen in walked.values() if seen.width is not None]
    pages = {page for page, _ in walked}
    failures = [f"{r.page}: {p}" for r in reports for p in r.problems]
    with capsys.disabled():
        print(f"\n[test_browser] {len(pages)} pages at {', '.join(map(str, WIDTHS))} px, "
              f"{len(failures)} problem(s); screenshots in {SCREENSHOTS}/<width>px/")
    _print_reports(reports)
    assert not failures, f"{len(failures)} problem(s) at phone, window and projector widths:\n" + "\n".join(failures)
    # Not vacuous: the chapters' comments were looked at, and the menus clicked at every width.
    for width in WIDTHS:
        at = [r for r in reports if r.page.endswith(f" at {width} px")]
        assert sum(r.checked.get("comments", 0) for r in at) >= 100, f"few code comments found at {width} px"
        assert sum(r.checked.get("navigation", 0) for r in at) >= 2 * 8, f"few menus checked at {width} px"
    assert sum(r.menu_open for r in reports if r.page.endswith(" at 390 px")) >= 8, "the menu was not opened at 390 px"


def test_width_checks_catch_a_dead_menu_and_a_wide_page(built_site, narrow_browser, tmp_path):
    """A copy of the real build, damaged two ways in one chapter: its menu buttons do
    nothing (as pydata-sphinx-theme 0.17's did beside sphinx-book-theme 1.3), and a line of
    text is wider than a phone. Each is reported; the undamaged page passes, with no comment
    broken between its two slashes at any width. (Its third damage, comments allowed to break
    anywhere, no longer splits one since code cells wrap on a phone: a comment starts a line
    of its own and fits, so it was taken out.)"""
    html = site_html(built_site)
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    page = "book/04_boundaries.html"
    with SiteServer(copy) as server:
        for width in WIDTHS:
            report = check_width_page(narrow_browser, server.url, page, copy, width)
            assert report.problems == [], report.problems
            assert report.checked.get("navigation", 0) >= 2, (width, report.notes)
    text = (copy / page).read_text()
    dead = ("<script>document.addEventListener('click', e => { if (e.target.closest('.primary-toggle, "
            ".secondary-toggle')) e.stopImmediatePropagation(); }, true);</script>")
    wide = "<p><code>" + "x" * 120 + "</code></p>"
    damaged = text.replace("</head>", dead + "</head>", 1)
    damaged = damaged.replace('<article class="bd-article">', '<article class="bd-article">'
                              + wide.replace("<code>", '<code style="white-space: nowrap">'), 1)
    (copy / page).write_text(damaged)
    with SiteServer(copy) as server:
        phone = "\n".join(check_width_page(narrow_browser, server.url, page, copy, 390).problems)
        wide_screen = "\n".join(check_width_page(narrow_browser, server.url, page, copy, 1280).problems)
    for expected in ("390 px: the menu button does not open the chapter list (0 of its links in view)",
                     "390 px: the contents button does not open the contents",
                     "390 px: the page is wider than the screen"):
        assert expected in phone, f"not reported: {expected!r}\nreported:\n{phone}"
    assert "1280 px: the menu button does not hide the chapter list" in wide_screen, wide_screen
    narrow_browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# Issue 43, items 3 and 4: pages that read at every size, and light ones. At a phone
# (390 x 844), a laptop (1280 x 800) and a projector or wide monitor (1920 x 1080), every page:
# * every figure's smallest text reads at MIN_LABEL_PX or more, as shown or, where the page
#   shows it smaller, once tapped (site.js opens it at full size); the size is read from the
#   font stamp in the PNG, as in _figure_problems, and the width it is shown at;
# * every widget picture is as wide as the column or WIDGET_GROWTH times its drawn size (it
#   scales with the column; it was 340 px at every width), and its labels read at MIN_LABEL_PX
#   as shown or tapped, like a figure's;
# * every table caption shows whole: inside the screen and inside the box that scrolls it;
# * on a phone no code cell scrolls sideways (the set-up and import cells were cut mid-word);
# * at 1920 the text is at least WIDE_TEXT_PX (larger type, and with it a wider column).
# And every page weighs at most site_weight.MAX_PAGE_BYTES as served at load (the widget
# manager comes when a widget is reached) and site_weight.MAX_PAGE_GZIP gzipped, and chapter 9
# loads in under site_weight.MAX_LOAD_S.
READING_SIZES = ((390, 844), (1280, 800), (1920, 1080))
CHAPTER_9 = "book/09_hopper.html"
MIN_LABEL_PX = 11
WIDGET_GROWTH = 1.5
WIDE_TEXT_PX = 18
READING_SHOTS = SCREENSHOTS / "reading"

READING_JS = r"""
const W = document.documentElement.clientWidth;
const article = document.querySelector('article.bd-article');
if (!article) return null;
const shown = el => el.getClientRects().length > 0 && el.getBoundingClientRect().width > 0;
const clipBox = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
  if (getComputedStyle(a).overflowX !== 'visible') return a.getBoundingClientRect();
  return {left: 0, right: W}; };
const images = [...article.querySelectorAll('figure img, .tc-switch-state img')].filter(shown).map((img, i) => {
  img.dataset.readingIndex = i;
  return {i, src: img.currentSrc || img.src, w: img.naturalWidth, shown: img.getBoundingClientRect().width,
          widget: !!img.closest('.tc-switch-state'),
          column: (img.closest('.tc-switch-state') || img.parentElement).getBoundingClientRect().width}; });
const captions = [...article.querySelectorAll('caption')].map(c => {
  const moved = c.classList.contains('tc-caption-above');
  const el = moved ? c.closest('.output').previousElementSibling : c;
  if (!el || !shown(el)) return null;
  const r = el.getBoundingClientRect(), box = clipBox(el);
  return {text: el.textContent.trim().slice(0, 60), whole: r.left >= Math.max(0, box.left) - 1
          && r.right <= Math.min(W, box.right) + 1, left: Math.round(r.left), right: Math.round(r.right)};
}).filter(Boolean);
const scrolled = [...article.querySelectorAll('div.cell_input pre')].filter(p => shown(p)
    && p.scrollWidth > p.clientWidth + 1).map(p => p.innerText.split('\n')[0].slice(0, 70));
const para = article.querySelector('section > p') || article.querySelector('p');
return {width: W, images, captions, scrolled, text_px: para ? parseFloat(getComputedStyle(para).fontSize) : 0,
        cells: article.querySelectorAll('div.cell_input pre').length};
"""

ENLARGED_JS = r"""
const big = document.querySelector('dialog.tc-enlarged[open] img');
return big ? big.getBoundingClientRect().width : null;
"""


def _label_px(src, html_root, shown, natural):
    """The smallest text of a PNG (a file of the site or a widget's data: URI) at `shown` px
    wide, from its font stamp; None if it has none."""
    if src.startswith("data:image/png;base64,"):
        data = base64.b64decode(src.split(",", 1)[1])
    else:
        path = _local_file(src, html_root)
        if path.suffix.lower() != ".png" or not path.is_file():
            return None
        data = path.read_bytes()
    stamp = png_text(data)
    if STAMP_FONT not in stamp or STAMP_DPI not in stamp or not natural:
        return None
    return float(stamp[STAMP_FONT]) * float(stamp[STAMP_DPI]) / 72 * shown / natural


def _tapped_width(driver, index):
    """Tap the image (a real click, where it is) and return the width the enlarged view shows
    it at, or None if none opened; the view is closed again with Escape."""
    img = driver.find_element("css selector", f'[data-reading-index="{index}"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", img)
    img.click()
    wait_until_still(driver)
    width = driver.execute_script(ENLARGED_JS)
    if width is not None:
        _close_with_escape(driver)
        if driver.execute_script("return !!document.querySelector('dialog.tc-enlarged[open]')"):
            driver.execute_script("document.querySelector('dialog.tc-enlarged[open]').close()")
            return -1.0   # reported: it does not close
    return width


def check_reading(driver, base_url, page, html_root, size, screenshot_dir=None):
    """One page at one of READING_SIZES, loaded for this check alone: see reading_checks.
    Returns a PageReport."""
    report = PageReport(page)
    if _open(driver, urljoin(base_url, page), size_metrics(size), report):
        _settle(driver)
        reading_checks(driver, report, page, html_root, size, screenshot_dir)
    return report


def reading_checks(driver, report, page, html_root, size, screenshot_dir=None):
    """The page loaded at one of READING_SIZES, at its top (see above), into `report`; its
    first screen, as a reader opens it, to `screenshot_dir`."""
    width, height = size
    tag = f"{width}x{height}"
    if screenshot_dir is not None:
        path = Path(screenshot_dir) / f"{re.sub(r'[.]html$', '', page).replace('/', '__')}-{tag}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(screenshot_png(driver))
    facts = driver.execute_script(READING_JS)
    if facts is None:   # not a page of the book (a redirect stub)
        return
    labels = []
    for img in facts["images"]:
        name = "widget picture" if img["widget"] else "figure " + img["src"].rsplit("/", 1)[-1][:50]
        px = _label_px(img["src"], html_root, img["shown"], img["w"])
        if px is None:
            continue
        if img["widget"] and img["shown"] < min(img["column"], WIDGET_GROWTH * img["w"]) - 2:
            report.problems.append(f"{tag}: a {name} is {img['shown']:.0f} px wide in a column of "
                                   f"{img['column']:.0f} px: it does not scale with the column")
        if px < MIN_LABEL_PX:
            tapped = _tapped_width(driver, img["i"])
            if tapped is None:
                report.problems.append(f"{tag}: {name}: labels {px:.1f} px as shown and a tap does not enlarge it")
                continue
            if tapped < 0:
                report.problems.append(f"{tag}: {name}: its enlarged view does not close with Escape")
                continue
            px = _label_px(img["src"], html_root, tapped, img["w"])
            if px < MIN_LABEL_PX:
                report.problems.append(f"{tag}: {name}: labels {px:.1f} px even when tapped, below {MIN_LABEL_PX}")
        labels.append(px)
    for c in facts["captions"]:
        if not c["whole"]:
            report.problems.append(f"{tag}: table caption cut off ({c['left']}-{c['right']} px of "
                                   f"{facts['width']}): {c['text']!r}")
    if width < MOBILE_BELOW:
        for first_line in facts["scrolled"][:3]:
            report.problems.append(f"{tag}: a code cell scrolls sideways: {first_line!r}")
        if len(facts["scrolled"]) > 3:
            report.problems.append(f"{tag}: ... and {len(facts['scrolled']) - 3} more code cells scroll sideways")
    if width >= 1920 and 0 < facts["text_px"] < WIDE_TEXT_PX:   # (0: a page without paragraphs)
        report.problems.append(f"{tag}: text {facts['text_px']:.1f} px, below {WIDE_TEXT_PX} on a wide screen")
    report.checked = {"labels": len(labels), "captions": len(facts["captions"]), "cells": facts["cells"]}
    if labels:
        report.notes.append(f"{tag}: smallest figure text {min(labels):.1f} px (as shown or tapped)")


# --------------------------------------------------------------------------- one walk

# The width, reading and weight checks look at every page at sizes that overlap: each page is
# loaded once at each size of WALK_SIZES (weighed as it loads where it is one of
# READING_SIZES), and every check of that size looks at that one load.
WALK_SIZES = tuple(sorted({(w, width_metrics(w)["height"]) for w in WIDTHS} | set(READING_SIZES)))


class WalkedPage(NamedTuple):
    weight: dict | None       # site_weight.measure's row, at READING_SIZES
    width: PageReport | None  # width_checks', at WIDTHS
    reading: PageReport | None


def walk_page(driver, base_url, page, html_root, size, width_shots=None, reading_shots=None):
    """One page at one size of WALK_SIZES, loaded once, and what each check of that size found."""
    width = size[0]
    is_width, is_reading = size == (width, width_metrics(width)["height"]) and width in WIDTHS, size in READING_SIZES
    width_report = PageReport(f"{page} at {width} px")
    reading_report = PageReport(f"{page} at {size[0]}x{size[1]}")
    width_report.menu_open, weight = False, None
    if is_reading:   # weighed as it loads (the best of three loads for chapter 9), as a reader gets it
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", size_metrics(size))
        weight = site_weight.measure(driver, base_url, page, html_root, repeat=3 if page == CHAPTER_9 else 1,
                                     read=width < MOBILE_BELOW)
        weight["size"] = f"{size[0]}x{size[1]}"
        loaded = _wait_loaded(driver, width_report)
    else:
        loaded = _open(driver, urljoin(base_url, page), size_metrics(size), width_report)
    reading_report.problems += width_report.problems   # (a page that did not load fails both)
    if loaded and not _is_redirect(html_root, page):
        _settle(driver)
        if is_reading:
            reading_checks(driver, reading_report, page, html_root, size, reading_shots)
            driver.execute_script("window.scrollTo({top: 0, behavior: 'instant'})")   # (a tap scrolls)
        if is_width:
            width_checks(driver, width_report, page, width, width_shots)
    return WalkedPage(weight, width_report if is_width else None, reading_report if is_reading else None)


@pytest.fixture(scope="module")
def walked(built_site, narrow_browser):
    """{(page, size): WalkedPage} for every page of the site at every size of WALK_SIZES; the
    phone's and widths' screenshots to SCREENSHOTS/<width>px/ and READING_SHOTS."""
    html = site_html(built_site)
    pages = find_pages(html)
    for width in WIDTHS:
        shutil.rmtree(SCREENSHOTS / f"{width}px", ignore_errors=True)
    found = {}
    with SiteServer(html) as server:
        for size in WALK_SIZES:
            for page in pages:
                found[page, size] = walk_page(narrow_browser, server.url, page, html, size,
                                              SCREENSHOTS / f"{size[0]}px", READING_SHOTS)
    narrow_browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return found


def test_pages_read_on_a_phone_a_laptop_and_a_projector(walked, capsys):
    """Issue 43, item 3 (see READING_SIZES): figures, widget pictures, tables' captions, code
    cells and type at 390 x 844, 1280 x 800 and 1920 x 1080. The first screen of each page at
    each size goes to _build/screenshots/reading/."""
    reports = [seen.reading for seen in walked.values() if seen.reading is not None]
    pages = {page for page, _ in walked}
    failures = [f"{r.page}: {p}" for r in reports for p in r.problems]
    with capsys.disabled():
        print(f"\n[test_browser] {len(pages)} pages at {len(READING_SIZES)} sizes, {len(failures)} problem(s); "
              f"first screens in {READING_SHOTS}/")
    _print_reports(reports)
    assert not failures, f"{len(failures)} problem(s) reading the pages:\n" + "\n".join(failures)
    # Not vacuous: figures were measured (tapped on a phone), captions and code cells found.
    for width, _ in READING_SIZES:
        at = [r for r in reports if f" at {width}x" in r.page]
        assert sum(r.checked.get("labels", 0) for r in at) >= 20, f"few figures measured at {width} px"
        assert sum(r.checked.get("captions", 0) for r in at) >= 5, f"few table captions found at {width} px"
        assert sum(r.checked.get("cells", 0) for r in at) >= 100, f"few code cells found at {width} px"


def test_pages_are_light_and_chapter_9_loads_fast(walked, capsys):
    """Issue 43, item 4: at each of READING_SIZES every page weighs at most MAX_PAGE_BYTES as
    served (what a static host that does not compress sends) and MAX_PAGE_GZIP gzipped,
    counting everything it loads before the reader scrolls; on a phone, scrolled to its end
    (its formulas' MathJax, its widgets' state and drawing come as they near), at most
    MAX_READ_BYTES; chapter 9 loads (to the load event, the best of three) in under
    MAX_LOAD_S. The numbers go to _build/screenshots/reading/weights.json."""
    rows, failures = [seen.weight for seen in walked.values() if seen.weight is not None], []
    for row in rows:
        tag = f"{row['page']} at {row['size']}"
        failures += [f"{tag}: {problem}" for problem in site_weight.over_budget(row)]
        if row["page"] == CHAPTER_9 and row["load_s"] >= site_weight.MAX_LOAD_S:
            failures.append(f"{tag}: loads in {row['load_s']:.2f} s, not under {site_weight.MAX_LOAD_S}")
    READING_SHOTS.mkdir(parents=True, exist_ok=True)
    (READING_SHOTS / "weights.json").write_text(json.dumps(rows, indent=1))
    with capsys.disabled():
        print(f"\n[test_browser] page weights ({READING_SHOTS / 'weights.json'}):")
        for r in rows:
            read = f"  read {r['read'] / 1e6:5.2f} MB" if "read" in r else ""
            print(f"  {r['page']:28} {r['size']:>9}  {r['bytes'] / 1e6:5.2f} MB  {r['gzip'] / 1e6:5.2f} MB gzip"
                  f"  {r['load_s']:5.2f} s (DOM {r['dom_s']:5.2f} s){read}")
    assert not failures, "\n".join(failures)
    assert len({r["page"] for r in rows}) >= 10, "fewer pages than the book has"


def test_reading_checks_catch_the_pages_as_they_were(built_site, narrow_browser, tmp_path):
    """A copy of the real build without what issue 43 added to site.css and site.js: on a
    phone chapter 2's code cells scroll sideways, its figures cannot be tapped large, and its
    trace table's caption is cut off with the table; chapter 1's widget picture keeps its
    drawn width at 1920. Each is reported."""
    html = site_html(built_site)
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    css = copy / "_static" / "site.css"
    marker = "/* Pages that read at every width."
    assert marker in css.read_text(), f"site.css lost the heading {marker!r} that starts the reading styles"
    css.write_text(css.read_text().split(marker)[0])
    (copy / "_static" / "site.js").write_text("")
    with SiteServer(copy) as server:
        phone = "\n".join(check_reading(narrow_browser, server.url, "book/02_tiling.html", copy, (390, 844)).problems)
        wide = "\n".join(check_reading(narrow_browser, server.url, "book/01_naive.html", copy, (1920, 1080)).problems)
    narrow_browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    for expected in ("390x844: a code cell scrolls sideways", "a tap does not enlarge it", "table caption cut off"):
        assert expected in phone, f"not reported: {expected!r}\nreported:\n{phone}"
    assert "does not scale with the column" in wide, wide


# Self-tests: the checks run against small hand-made pages and against a damaged copy of
# the real build, and must report what was broken on purpose.

def _png(width, height, pixel, text=None):
    """A PNG file (RGB) whose pixel (x, y) is pixel(x, y) -> (r, g, b), with text chunks."""
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + b"".join(chunk(b"tEXt", k.encode() + b"\0" + v.encode()) for k, v in (text or {}).items())
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _quiz_html():
    """A quiz as jupyterquiz's display_quiz() puts it into a notebook's outputs, in the HTML
    that myst-nb makes of them (text/html output, then application/javascript as a script),
    with the book's style for its code (tiling_course.quiz.QUIZ_CODE_CSS)."""
    from jupyterquiz.dynamic import display as jq_display

    from tiling_course.quiz import QUIZ_CODE_CSS

    shown = []
    original = jq_display.display
    jq_display.display = shown.append
    try:
        jq_display.display_quiz([{"question": "How many threads does <code>__shared__ float s[16][16];</code> "
                                              "serve in a 16 x 16 block?", "type": "numeric",
                                  "answers": [{"type": "value", "value": 256, "correct": True,
                                               "feedback": "Right."}]}])
    finally:
        jq_display.display = original
    html, js = shown[0].data, shown[1].data
    return (f'<div class="cell_output docutils container"><div class="output text_html">{QUIZ_CODE_CSS}{html}'
            f'</div></div><script type="text/javascript">{js}</script>')


GOOD_BODY = """
<header class="bd-header-article">
<a class="btn" href="{colab}/github/owner/repo/blob/main/book/good.ipynb">Colab</a></header>
<main id="main-content"><article class="bd-article"><section>
<figure><img src="../_images/plot.png" alt="a plot"><figcaption>What to see in it.</figcaption></figure>
<p>A badge from another host (offline, ignored): <img src="https://img.shields.io/badge/x-y-blue.svg"></p>
<div class="cell_output docutils container">
<script type="application/vnd.jupyter.widget-view+json">
{{"version_major": 2, "version_minor": 0, "model_id": "abc"}}</script>
</div>
<p>All sizes at once:</p>
<div class="cell_output docutils container"><div class="output text_html">
<table><tr><td>16</td><td>256</td></tr></table></div></div>
{quiz}
<p><a href="{colab}/github/owner/repo/blob/main/book/other.ipynb">the other chapter on Colab</a>,
<a href="good.html#top">this page</a>, <a href="https://example.org/x.html">elsewhere</a></p>
</section></article></main>
<script src="https://cdn.jsdelivr.net/npm/nothing@1/x.js"></script>
"""
BROKEN_BODY = """
<header class="bd-header-article"><a href="{colab}/github/owner/repo/blob/main/book/good.ipynb">Colab</a>
<a href="{colab}/github/someone/else/blob/dev/book/broken.ipynb">Colab</a></header>
<main id="main-content"><article class="bd-article"><section>
<img src="../_images/missing.png"> <img src="../_images/blank.png"> <img src="../_images/tiny.png">
<figure><img src="../_images/smallfont.png" alt="a plot"><figcaption>Too small to read.</figcaption></figure>
<div class="cell_output docutils container">
<script type="application/vnd.jupyter.widget-view+json">
{{"version_major": 2, "version_minor": 0, "model_id": "lonely"}}</script>
</div>
<div id="emptyquiz" data-shufflequestions="False" data-numquestions="1000000"></div>
<a href="nowhere.html">a missing page</a>
</section></article></main>
<script>console.error("on purpose"); notDefinedAnywhere();</script>
"""


def _page(body, css="../_static/site.css", js="../_static/site.js"):
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>'
            f'<link rel="stylesheet" href="{css}"><script src="{js}"></script></head><body>{body}</body></html>')


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy_site")
    (root / "_static").mkdir()
    (root / "_images").mkdir()
    (root / "book").mkdir()
    (root / "_static" / "site.css").write_text("body { font-family: sans-serif; }")
    (root / "_static" / "site.js").write_text("window.siteLoaded = true;")
    stamp = {STAMP_DPI: "100"}
    (root / "_images" / "plot.png").write_bytes(_png(120, 90, lambda x, y: (2 * x, 2 * y, 128),
                                                     {**stamp, STAMP_FONT: "9"}))
    (root / "_images" / "smallfont.png").write_bytes(_png(120, 90, lambda x, y: (2 * x, 128, 2 * y),
                                                          {**stamp, STAMP_FONT: "5"}))
    (root / "_images" / "blank.png").write_bytes(_png(120, 90, lambda x, y: (255, 255, 255)))
    (root / "_images" / "tiny.png").write_bytes(_png(8, 8, lambda x, y: (30 * x, 30 * y, 0)))
    colab = "https://colab.research.google.com"
    (root / "book" / "good.html").write_text(_page(GOOD_BODY.format(colab=colab, quiz=_quiz_html())))
    (root / "book" / "broken.html").write_text(
        _page(BROKEN_BODY.format(colab=colab), css="../_static/gone.css", js="../_static/gone.js"))
    repo = tmp_path_factory.mktemp("toy_repo")
    (repo / "book").mkdir()
    for name in ("good", "other", "broken"):
        (repo / "book" / f"{name}.ipynb").write_text("{}")
    launch = {"owner_repo": "owner/repo", "branch": "main", "path_to_book": "", "repo_root": repo}
    return root, launch


def test_checks_pass_a_good_page(browser, toy_site, tmp_path):
    root, launch = toy_site
    with SiteServer(root) as server:
        report = check_page(browser, server.url, "book/good.html", root, launch, tmp_path)
    assert report.problems == []
    assert any("static fallback: the table" in n for n in report.notes), report.notes
    assert any("img.shields.io" in n for n in report.notes), report.notes
    assert {"cdn.jsdelivr.net", "img.shields.io"} <= {urlsplit(u).hostname for u in report.external}
    assert report.screenshot.stat().st_size > 1000


def test_checks_catch_a_broken_page(browser, toy_site):
    root, launch = toy_site
    with SiteServer(root) as server:
        report = check_page(browser, server.url, "book/broken.html", root, launch)
    text = "\n".join(report.problems)
    expected = [
        "stylesheet /_static/gone.css answered HTTP 404",
        "script /_static/gone.js answered HTTP 404",
        "image /_images/missing.png answered HTTP 404",
        "image missing.png did not load",
        "image blank.png is blank",
        "image tiny.png is tiny: 8x8",
        "image blank.png has no alt text",
        "image blank.png is not in a figure with a caption",
        "image blank.png carries no font stamp",
        "image smallfont.png: smallest text 6.9 px at 120 px shown of 120 px (5 pt at 100 dpi), below 9 px",
        "on purpose",
        "notDefinedAnywhere is not defined",
        "widget lonely neither rendered nor has a visible static fallback",
        "quiz emptyquiz did not render",
        "link to a missing page: /book/nowhere.html",
        "launch button opens book/good.ipynb, this page's notebook is book/broken.ipynb",
        "opens repository someone/else",
        "opens branch dev",
    ]
    missed = [e for e in expected if e not in text]
    assert not missed, f"not reported: {missed}\nreported:\n{text}"
    assert sum(p.startswith("JavaScript error: ") for p in report.problems) == 2, text
    # A page that does not exist answers 404.
    with SiteServer(root) as server:
        report = check_page(browser, server.url, "book/absent.html", root, launch)
    assert "page /book/absent.html answered HTTP 404" in report.problems, report.problems


def test_checks_catch_damage_to_a_copy_of_the_site(built_site, browser, tmp_path):
    """Delete a figure and inject a JavaScript error into a copy of the real build, and
    take the book's style for quiz code out of a chapter with quizzes."""
    html = site_html(built_site)
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    page = next(p for p in find_pages(copy) if re.search(r'src="\.\./_images/', (copy / p).read_text()))
    text = (copy / page).read_text()
    image = re.search(r'src="\.\./_images/([^"]+)"', text).group(1)
    (copy / "_images" / image).unlink()
    (copy / page).write_text(text.replace("</body>", "<script>brokenOnPurpose();</script></body>"))
    with SiteServer(copy) as server:
        report = check_page(browser, server.url, page, copy, launch_config())
    problems = "\n".join(report.problems)
    assert f"image /_images/{image} answered HTTP 404" in problems, problems
    assert f"image {image[:60]} did not load" in problems, problems
    assert "brokenOnPurpose is not defined" in problems, problems

    from tiling_course.quiz import QUIZ_CODE_CSS
    page = "book/03_syncthreads.html"
    text = (copy / page).read_text()
    assert QUIZ_CODE_CSS in text, f"{page} has lost the quiz code style; pick a page that has it"

    # Code whose box cuts its underscores off (as jupyterquiz's own style once drew them,
    # below the box, black on the question's dark background): not visibly drawn.
    clipped = "<style>div.Quiz code { display: inline-block; height: 0.75em; overflow: hidden; }</style>"
    (copy / page).write_text(text.replace(QUIZ_CODE_CSS, QUIZ_CODE_CSS + clipped))
    with SiteServer(copy) as server:
        problems = "\n".join(check_page(browser, server.url, page, copy, launch_config()).problems)
    assert "quiz code '__syncthreads()': its 2 underscore(s) are not visibly drawn" in problems, problems

    # Without the book's style for quiz code (its stroke), the answers' underscores are
    # drawn, but pale: a grey line across two rows of pixels at a device pixel ratio of 1.
    (copy / page).write_text(text.replace(QUIZ_CODE_CSS, ""))
    with SiteServer(copy) as server:
        problems = "\n".join(check_page(browser, server.url, page, copy, launch_config()).problems)
    assert re.search(r"quiz code '__sync\w+\(\)': its 2 underscore\(s\) are drawn pale", problems), problems
    assert "not visibly drawn" not in problems, problems


def test_checks_catch_math_that_mathjax_did_not_typeset(built_site, browser, tmp_path):
    """A copy of the real build without the vendored MathJax: the formulas of a chapter
    stay TeX source, and the check says so. Then, with MathJax back, a formula MathJax
    cannot parse and TeX outside any math element."""
    html = site_html(built_site)
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    page = "book/01_naive.html"
    assert 'class="math' in (copy / page).read_text(), f"{page} has no math any more; pick a page that has"
    with SiteServer(copy) as server:
        report = check_page(browser, server.url, page, copy, launch_config())
    assert not [p for p in report.problems if "MathJax" in p or "formula" in p or "TeX" in p], report.problems
    assert report.checked["formulas"] > 0, report.checked

    shutil.move(copy / "_static" / "mathjax", tmp_path / "mathjax")
    with SiteServer(copy) as server:
        report = check_page(browser, server.url, page, copy, launch_config())
    problems = "\n".join(report.problems)
    for expected in ("script /_static/mathjax/parts/startup.js answered HTTP 404", "MathJax did not load",
                     "formula(s) not typeset by MathJax, first '\\\\(m \\\\times k\\\\)'"):
        assert expected in problems, f"not reported: {expected!r}\nreported:\n{problems}"

    shutil.move(tmp_path / "mathjax", copy / "_static" / "mathjax")
    text = (copy / page).read_text()
    broken = ('<section class="tex2jax_ignore mathjax_ignore"><p>Left as source on purpose: \\(a + b\\).</p>'
              '<p><span class="math notranslate nohighlight">\\(\\frac{1}\\)</span></p></section></article>')
    (copy / page).write_text(text.replace("</article>", broken, 1))
    with SiteServer(copy) as server:
        problems = "\n".join(check_page(browser, server.url, page, copy, launch_config()).problems)
    assert "MathJax error: Missing argument for \\frac" in problems, problems
    assert "TeX delimiters visible in the text: 'Left as source on purpose: \\\\(a + b\\\\).'" in problems, problems


NARROW_LINE = "int x = 0;  // " + "a comment that runs on " * 12
NARROW_BODY = f"""
<main id="main-content"><article class="bd-article" style="width: 600px">
<pre style="overflow-x: hidden">hidden: {NARROW_LINE}</pre>
<pre style="overflow-x: auto">overlay: {NARROW_LINE}</pre>
<pre class="drawn" style="overflow-x: auto">drawn: {NARROW_LINE}</pre>
<pre style="white-space: pre-wrap">wraps: {NARROW_LINE}</pre>
<pre style="overflow-x: visible">spills: {NARROW_LINE}</pre>
<div style="overflow: hidden"><table><tr><td style="white-space: nowrap">table: {NARROW_LINE}</td></tr></table></div>
<div class="output"><table><tr><td>fits</td><td>in its box</td></tr></table></div>
</article></main>
"""
NARROW_CSS = ("pre.drawn::-webkit-scrollbar { height: 10px; } "
              "pre.drawn::-webkit-scrollbar-thumb { background: #888; }")


def test_narrow_check_catches_code_that_is_cut_off(built_site, narrow_browser, tmp_path):
    """A toy page: a pre that clips, one whose scrollbar is overlay, one that spills off the
    page and a table in a box that clips must be reported; a pre whose scrollbar is drawn,
    one that wraps and a table that fits must not. Then a copy of the real build without
    the site's stylesheet: chapter 6's code is cut off again."""
    (tmp_path / "toy" / "_static").mkdir(parents=True)
    (tmp_path / "toy" / "_static" / "site.css").write_text(NARROW_CSS)
    (tmp_path / "toy" / "_static" / "site.js").write_text("")
    (tmp_path / "toy" / "narrow.html").write_text(_page(NARROW_BODY, css="_static/site.css", js="_static/site.js"))
    with SiteServer(tmp_path / "toy") as server:
        report = check_narrow_page(narrow_browser, server.url, "narrow.html", tmp_path / "toy", tmp_path)
    text = "\n".join(report.problems)
    expected = ["pre cut off", "(overflow-x: hidden): 'hidden: int x",
                "(overflow-x: auto, and its scrollbar is not drawn (hidden or overlay)): 'overlay: int x",
                "runs past the right edge of the 1024 px window): 'spills: int x",
                "(cut by div, overflow-x: hidden): 'table: int x"]
    missed = [e for e in expected if e not in text]
    assert not missed, f"not reported: {missed}\nreported:\n{text}"
    assert len(report.problems) == 4, text
    assert not any(w in text for w in ("drawn:", "wraps:", "fits")), text
    assert report.checked["scrolling visibly"] == 1, report.checked
    assert report.screenshot.stat().st_size > 1000

    html = site_html(built_site)
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    (copy / "_static" / "site.css").write_text("/* removed on purpose */")
    page = "book/06_beyond.html"
    with SiteServer(copy) as server:
        problems = check_narrow_page(narrow_browser, server.url, page, copy).problems
    assert any("pre cut off" in p and "its scrollbar is not drawn" in p for p in problems), problems
    assert any("pre cut off" in p and "kernel `" in p for p in problems), problems  # a checked-mode message
