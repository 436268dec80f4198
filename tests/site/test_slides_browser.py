"""The lecture decks (scripts/build_slides.py), walked as a lecturer walks them: in a real,
offline Chromium, with the right arrow and with Space, and every slide measured at 1280 x 720
and at 1920 x 1080.

The decks are built from the notebooks `make book` executed (else the committed ones) into
a folder, served on localhost, and opened with every other host unreachable
(test_browser's flags). A deck fails when:

* it asks another host, or anything outside its own folder, for something, a request
  fails, JavaScript reports an error, or it does not become ready
  (body[data-slides="ready"], reveal.js started after the figures were fitted);
* pressing the key (→ or Space) from the first slide does not visit every slide, one
  after the other, and end on the last;
* on any slide (tables and widgets hold data, not prose: their words do not count, their
  font sizes do): something runs past the slide's edges, into the band at its bottom
  (compose.py's ROOM), or under the navigation arrows or the slide number; a box or the
  page scrolls (a scrollbar); text is smaller than TEXT_PX or code than CODE_PX on the
  screen (at 1280 x 720; larger at 1920 x 1080, as reveal.js scales the slide), or a
  figure's or a widget's labels than LABEL_PX (a widget's text, and the smallest label of
  every picture, figure or widget's, from the font stamp its PNG carries and the size it is
  shown at; a picture without a stamp fails); there are
  more than WORDS words of prose (QUESTION_WORDS on a question for the room, whose
  answers count) or CODE_LINES lines of code; nothing shows but a title;
* the first slide is not a title slide (the chapter's title, large, in the middle), or
  the slide number is not "n / total" in at least SLIDE_NUMBER_PX;
* a formula is not typeset by MathJax, or TeX delimiters show in the text.

And a deck's folder, copied alone into an empty folder and opened from the disk
(file://, as from a USB stick), must work the same: typeset its formulas, draw its
widgets, and load nothing from outside that folder.

Screenshots of every slide at 1280 x 720 go to _build/screenshots/slides/<deck>/.
"""
import base64
import functools
import importlib
import re
import shutil
import time
import urllib.request
from urllib.parse import unquote, urlsplit

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from tests.support import ROOT
from tests.support.browser import (
    CHROMIUM_FLAGS,
    SiteServer,
    drain_logs,
    is_local,
    network_requests,
    screenshot_png,
    start_chromium,
)
from tiling_course.style import STAMP_DPI, STAMP_FONT, png_text

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "_build" / "screenshots" / "slides"
SIZES = [(1280, 720), (1920, 1080)]
KEYS = {"→": Keys.ARROW_RIGHT, "Space": Keys.SPACE}
READY_TIMEOUT_S = 60
TEXT_PX, CODE_PX = 28, 24          # at 1280 x 720, on the screen (a table's text: as code)
LABEL_PX = 20                      # a figure's or a widget's labels (its text, its pictures' labels), likewise
SLIDE_NUMBER_PX = 20
# "About 40 words" (a formula counts as one); a question for the room is read out with its
# four lettered answers for the vote, which stay on one slide.
WORDS, QUESTION_WORDS, CODE_LINES = 44, 140, 15
# Without --hide-scrollbars: a box that scrolls must show as a scrollbar, and fail.
FLAGS = [f for f in CHROMIUM_FLAGS if f != "--hide-scrollbars" and not f.startswith("--window-size=")] \
    + ["--window-size=1280,720"]


@pytest.fixture(scope="module")
def deck_browser():
    yield from start_chromium(FLAGS)


@pytest.fixture
def decks_folder(built_decks):
    """The decks, as `make slides` writes them (tests/site/conftest.py: built once a session)."""
    return built_decks


# What one slide shows, measured in the browser (the current slide).
SLIDE_PROBE_JS = r"""
const LIMIT = arguments[0];
const s = Reveal.getCurrentSlide(), scale = Reveal.getScale();
const frame = document.querySelector('.reveal .slides').getBoundingClientRect();
const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const inNotes = el => !!el.closest('aside.notes');
const zoom = el => { let z = 1; for (let a = el; a && !a.matches('.reveal .slides'); a = a.parentElement)
                       z *= parseFloat(getComputedStyle(a).zoom || 1) || 1; return z; };
const label = el => el.tagName.toLowerCase() + [...el.classList].slice(0, 2).map(c => '.' + c).join('');
const r = {index: Reveal.getSlides().indexOf(s), kind: s.dataset.tcKind || '', over: [], covered: [],
           scrolls: [], words: 0, code_lines: 0, text_px: null, code_px: null, table_px: null, widget_px: null,
           title: ((s.querySelector('h1, h2, h3') || {}).textContent || '').replace(/\u00b6/g, '').trim()};
const bottomLimit = frame.top + LIMIT * scale;
const chrome = [...document.querySelectorAll('.reveal .controls button.enabled, .reveal .slide-number')]
    .filter(visible).map(e => e.getBoundingClientRect()).filter(b => b.width && b.height);
for (const el of s.querySelectorAll('*')) {
  if (inNotes(el) || !visible(el) || el.closest('mjx-container') && el.tagName !== 'MJX-CONTAINER') continue;
  const b = el.getBoundingClientRect();
  if (!b.width || !b.height) continue;
  const cs = getComputedStyle(el);
  if ((el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(cs.overflowY))
      || (el.scrollWidth > el.clientWidth + 1 && /auto|scroll/.test(cs.overflowX)))
    r.scrolls.push(label(el));
  // past an ancestor that clips it, it is not seen: only what shows counts
  const past = Math.max(b.right - frame.right, frame.left - b.left, frame.top - b.top, b.bottom - bottomLimit) / scale;
  if (past > 1 && !['SECTION'].includes(el.tagName)) r.over.push(`${label(el)} by ${Math.round(past)} px: ` +
      (el.innerText || '').trim().slice(0, 40));
  for (const c of chrome)
    if (b.left < c.right && b.right > c.left && b.top < c.bottom && b.bottom > c.top && el.children.length === 0)
      r.covered.push(label(el) + ': ' + (el.innerText || '').trim().slice(0, 40));
}
// Font sizes on the screen, of every element that holds text of its own.
const walker = document.createTreeWalker(s, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const t = walker.currentNode, el = t.parentElement;
  if (!t.textContent.trim() || !el || inNotes(el) || !visible(el)) continue;
  if (el.closest('mjx-container, script, style')) continue;
  if (el.closest('details:not([open])') && !el.closest('summary')) continue;
  const sized = el.closest('sub, sup') ? el.closest('sub, sup').parentElement : el;   // an index is set smaller
  const px = parseFloat(getComputedStyle(sized).fontSize) * zoom(el) * scale;
  const kind = el.closest('.jupyter-widgets, .widget-subarea') ? 'widget_px' : el.closest('pre, code') ? 'code_px'
      : el.closest('table') ? 'table_px' : 'text_px';
  if (r[kind] === null || px < r[kind]) r[kind] = px;
}
// Words of prose (not code, not a figure's or a widget's labels, not the title).
const prose = [...s.querySelectorAll('p, li, summary')]
    .filter(el => visible(el) && !inNotes(el) && !el.closest('pre, table, .jupyter-widgets, .tc-subtitle')
            && !(el.closest('details:not([open])') && !el.closest('summary'))
            && !el.parentElement.closest('p, li, summary'));
r.words = prose.reduce((n, el) => {
  const c = el.cloneNode(true);
  c.querySelectorAll('mjx-container').forEach(m => m.replaceWith(' X '));
  return n + (c.textContent.match(/[\w'’]+/g) || []).length;
}, 0);
for (const pre of s.querySelectorAll('pre')) {
  if (!visible(pre) || inNotes(pre)) continue;
  const lh = parseFloat(getComputedStyle(pre).lineHeight) * zoom(pre) * scale;
  const cs = getComputedStyle(pre), pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
  const inner = pre.getBoundingClientRect().height - pad * zoom(pre) * scale;
  r.code_lines += Math.round(inner / lh);
}
// Its pictures (figures, and a widget's), as shown on the screen: their PNG's stamp gives
// the size of their smallest label (label_problems).
r.images = [...s.querySelectorAll('img')].filter(img => visible(img) && !inNotes(img)).map(img => ({
  src: img.currentSrc || img.src, natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
  widget: !!img.closest('.jupyter-widgets, .widget-subarea')}));
r.shows = [...s.children].filter(el => !el.matches('aside.notes') && visible(el)).length;
r.has_content = !!s.querySelector('p, li, pre, img, table, .jupyter-widgets, .tc-question, mjx-container');
const h1 = s.querySelector('h1');
if (h1) { const b = h1.getBoundingClientRect();
  r.h1 = {px: parseFloat(getComputedStyle(h1).fontSize) * scale,
          cx: ((b.left + b.right) / 2 - frame.left) / frame.width,
          cy: ((b.top + b.bottom) / 2 - frame.top) / frame.height}; }
const sn = document.querySelector('.reveal .slide-number');
r.slide_number = sn && visible(sn) ? {text: sn.innerText.replace(/\s+/g, ' ').trim(),
    px: parseFloat(getComputedStyle(sn.querySelector('span, a') || sn).fontSize)} : null;
const page = document.scrollingElement;
r.page_scrolls = page.scrollHeight > innerHeight + 1 || page.scrollWidth > innerWidth + 1;
return r;
"""

# Every slide (arguments[0]: the bottom limit; the last, the callback) shown in turn and
# measured by SLIDE_PROBE_JS two frames later (laid out and painted), all in one call: a round
# trip to the browser per slide cost as much as measuring it.
SLIDES_JS = r"""
const done = arguments[arguments.length - 1], limit = arguments[0];
const probe = function () {
""" + SLIDE_PROBE_JS + r"""
};
const frame = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
(async () => {
  const measured = [];
  for (let i = 0; i < Reveal.getTotalSlides(); i++) {
    Reveal.slide(i);
    await frame();
    await frame();
    measured.push(probe(limit));
  }
  return measured;
})().then(done, e => done({error: String(e && e.stack || e)}));
"""

# Where the deck is after each key press: recorded at the key's release, once reveal.js has
# handled its press (arguments[0]: the slides already recorded are dropped).
RECORD_KEYS_JS = r"""
const index = () => Reveal.getSlides().indexOf(Reveal.getCurrentSlide());
if (!window.tcSeen)
  window.addEventListener('keyup', () => window.tcSeen.push(index()), true);
window.tcSeen = [index()];
"""

MATH_JS = r"""
const maths = document.querySelectorAll('.reveal .slides mjx-container').length;
const errors = [...document.querySelectorAll('mjx-merror')]
    .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 80));
const raw = [], walker = document.createTreeWalker(document.querySelector('.reveal .slides'), NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const n = walker.currentNode, el = n.parentElement;
  if (/\$\$|\\\(|\\\[|(^|[^\w$])\$[^$\s][^$]*\$/.test(n.textContent) && el
      && !el.closest('pre, code, script, style, mjx-container, aside.notes'))
    raw.push(n.textContent.trim().slice(0, 60));
}
const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
const drawn = document.querySelectorAll('.reveal .slides .jupyter-widgets [class*="widget-"]').length;
return {maths, errors, raw, views, drawn};
"""


def open_deck(driver, url, size):
    """Load a deck at a window size; returns the problems of loading it."""
    problems = []
    drain_logs(driver)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})
    driver.get(url)
    t0, state = time.monotonic(), None
    while time.monotonic() - t0 < READY_TIMEOUT_S:
        state = driver.execute_script("return document.body && document.body.dataset.slides")
        if state in ("ready", "failed"):
            break
        time.sleep(0.05)
    if state != "ready":
        problems.append(f"the deck did not become ready within {READY_TIMEOUT_S} s (state {state!r})")
    return problems


def load_problems(driver, inside):
    """Requests outside `inside` (a URL prefix: the deck's own folder), failed requests, and
    JavaScript errors since the deck was opened."""
    problems = []
    console, perf = drain_logs(driver)
    for req in network_requests(perf):
        u = req["url"]
        if u.startswith(("data:", "blob:", "about:", "chrome")) or urlsplit(u).path == "/favicon.ico":
            continue
        if not unquote(u).startswith(inside) or (u.startswith("http") and not is_local(u)):
            problems.append(f"loads {u[:120]} from outside its folder")
        elif (req.get("status") or 0) >= 400 or (req.get("error") and not req.get("canceled")):
            problems.append(f"{u[:120]} failed: {req.get('status') or req.get('error')}")
    for entry in console:
        if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]:
            problems.append(f"JavaScript error: {entry['message'][:300]}")
    return problems


def walk(driver, key):
    """Press `key` as often as the deck has slides (enough to reach the last from the first,
    and press once more there, where the deck must stay); the slide indices visited, from the
    first, one after each press (RECORD_KEYS_JS). The presses go in one batch of real key
    events, each handled before the next is sent."""
    driver.execute_script("Reveal.slide(0, 0)")
    total = driver.execute_script("return Reveal.getTotalSlides()")
    driver.execute_script(RECORD_KEYS_JS)
    ActionChains(driver).send_keys(*[key] * total).perform()
    return total, driver.execute_script("return window.tcSeen")


def measure_slides(driver, limit):
    """SLIDES_JS's measures of every slide of the deck."""
    measured = driver.execute_async_script(SLIDES_JS, limit)
    if isinstance(measured, dict):
        raise RuntimeError(f"measuring the slides failed in the page: {measured['error']}")
    return measured


@functools.lru_cache(maxsize=256)
def png_stamp(src):
    """The font stamp of a picture (style.StampingCanvas): from a data: URI, or the deck's
    file (served here or on the disk)."""
    if src.startswith("data:"):
        data = base64.b64decode(src.partition(",")[2])
    else:
        with urllib.request.urlopen(src) as response:   # the local server, or file://
            data = response.read()
    return png_text(data)


def label_px(image):
    """The smallest label of a picture as the screen shows it (px), or None without a stamp."""
    stamp = png_stamp(image["src"])
    if STAMP_FONT not in stamp or STAMP_DPI not in stamp or not image["natural"]:
        return None
    return float(stamp[STAMP_FONT]) * float(stamp[STAMP_DPI]) / 72 * image["shown"] / image["natural"]


def label_problems(s, where, scale):
    """A figure's or a widget's labels under LABEL_PX (its text, and its pictures' labels as
    their stamps and shown sizes give them); a picture without a stamp is one."""
    found = []
    if s["widget_px"] is not None and s["widget_px"] < LABEL_PX * scale - 0.5:
        found.append(f"{where}: a widget's text at {s['widget_px']:.1f} px, under {LABEL_PX * scale:.0f}")
    for image in s["images"]:
        what = "a widget's picture" if image["widget"] else "a figure"
        px = label_px(image)
        if px is None:
            found.append(f"{where}: {what} without a font stamp ({STAMP_FONT}): {image['src'][:60]}")
        elif px < LABEL_PX * scale - 0.5:
            found.append(f"{where}: {what}'s labels at {px:.1f} px, under {LABEL_PX * scale:.0f}")
    return found


def slide_problems(s, total, size, limit):
    """What is wrong with one slide, as SLIDE_PROBE_JS measured it."""
    where = f"slide {s['index'] + 1} {s['title'][:50]!r}"
    scale = min(size[0] / 1280, size[1] / 720)   # the font sizes grow with the window
    found = [f"{where}: runs past the slide or into its bottom band: {o}" for o in s["over"][:3]]
    found += [f"{where}: under the arrows or the slide number: {c}" for c in s["covered"][:3]]
    found += [f"{where}: {b} scrolls" for b in s["scrolls"][:3]]
    if s["page_scrolls"]:
        found.append(f"{where}: the page scrolls")
    if s["text_px"] is not None and s["text_px"] < TEXT_PX * scale - 0.5:
        found.append(f"{where}: text at {s['text_px']:.1f} px, under {TEXT_PX * scale:.0f}")
    for kind, what in (("code_px", "code"), ("table_px", "a table")):
        if s[kind] is not None and s[kind] < CODE_PX * scale - 0.5:
            found.append(f"{where}: {what} at {s[kind]:.1f} px, under {CODE_PX * scale:.0f}")
    found += label_problems(s, where, scale)
    most = QUESTION_WORDS if s["kind"] == "question" else WORDS
    if s["words"] > most:
        found.append(f"{where}: {s['words']} words of prose (at most {most})")
    if s["code_lines"] > CODE_LINES:
        found.append(f"{where}: {s['code_lines']} lines of code (at most {CODE_LINES})")
    if s["kind"] != "title" and not s["has_content"]:
        found.append(f"{where}: nothing but its title")
    number = s["slide_number"]
    if not number or number["text"] != f"{s['index'] + 1} / {total}" or number["px"] < SLIDE_NUMBER_PX:
        found.append(f"{where}: slide number {number}")
    return found


def check_deck(driver, url, inside, size, keys=tuple(KEYS), screenshots=None):
    """Walk one deck with each of `keys` at one window size, then measure each of its slides
    (once: where a slide is and what it shows do not depend on the key that reached it);
    returns (problems, slides measured)."""
    problems = open_deck(driver, url, size)
    if problems:
        return problems + load_problems(driver, inside), []
    limit = driver.execute_script("return window.tcSlides.limit")
    total = driver.execute_script("return Reveal.getTotalSlides()")
    for key in keys:
        total, seen = walk(driver, KEYS[key])
        if seen[:total] != list(range(total)) or seen[-1] != total - 1:
            problems.append(f"{key} visits {seen[:60]} of {total} slides, not each in order")
    measured = measure_slides(driver, limit)
    if screenshots is not None:   # (DevTools draws the page afresh for a screenshot: the slide just shown)
        screenshots.mkdir(parents=True, exist_ok=True)
        for i in range(total):
            driver.execute_script("Reveal.slide(arguments[0])", i)
            (screenshots / f"{i + 1:02d}.png").write_bytes(screenshot_png(driver))
    for s in measured:
        problems += slide_problems(s, total, size, limit)
    first = measured[0] if measured else {}
    h1 = first.get("h1")
    if first.get("kind") != "title" or not h1 or h1["px"] < 48 or abs(h1["cx"] - 0.5) > 0.1 \
            or not 0.25 < h1["cy"] < 0.6:
        problems.append(f"the first slide is not a title slide: {first.get('kind')!r}, {h1}")
    math = driver.execute_script(MATH_JS)
    problems += [f"MathJax error: {e}" for e in math["errors"]] + [f"TeX not typeset: {t!r}" for t in math["raw"][:3]]
    if math["views"] and not math["drawn"]:
        problems.append(f"{math['views']} widget(s), none drawn")
    return problems + load_problems(driver, inside), measured


def smallest_label(measured, widget):
    """The smallest label of a deck's figures (or of its widgets' pictures), as shown."""
    sizes = [px for m in measured for image in m["images"] if image["widget"] == widget
             for px in [label_px(image)] if px is not None]
    return f"{min(sizes):.1f} px" if sizes else "none"


def test_every_deck_walked_with_the_arrow_and_space_fits_a_hall(deck_browser, decks_folder, capsys):
    folder, built = decks_folder
    assert len(built) >= 8
    failures, rows = [], []
    with SiteServer(folder) as server:
        for stem in built:
            for size in SIZES:
                shots = SCREENSHOTS / stem if size == SIZES[0] else None
                if shots is not None:
                    shutil.rmtree(shots, ignore_errors=True)
                # The keys move through a deck the same at any window size (reveal.js's
                # navigation does not depend on its layout): walked once, at the first size;
                # every slide is measured at each size.
                keys = tuple(KEYS) if size == SIZES[0] else ()
                problems, measured = check_deck(deck_browser, f"{server.url}{stem}/index.html",
                                                f"{server.url}{stem}/", size, keys, shots)
                failures += [f"{stem} at {size[0]}x{size[1]}: {p}" for p in problems]
                if size == SIZES[0] and measured:
                    rows.append((stem, measured))
    with capsys.disabled():
        print(f"\n[test_slides_browser] {len(built)} decks at {SIZES}, walked with → and Space at {SIZES[0]}; "
              f"{len(failures)} problem(s); screenshots in {SCREENSHOTS}/")
        for stem, measured in rows:
            px = {k: min((m[k] for m in measured if m[k] is not None), default=None)
                  for k in ("text_px", "code_px", "table_px", "widget_px")}
            words = sorted(m["words"] for m in measured)
            print(f"  {stem}: {len(measured)} slides; at 1280x720 smallest text {px['text_px']:.1f} px, code "
                  f"{px['code_px'] or 0:.1f} px, tables {px['table_px'] or 0:.1f} px, widget labels "
                  f"{px['widget_px'] or 0:.1f} px, figures' labels {smallest_label(measured, False)}, widget "
                  f"pictures' {smallest_label(measured, True)}; "
                  f"words a slide: median "
                  f"{words[len(words) // 2]}, most {words[-1]}; code lines most "
                  f"{max(m['code_lines'] for m in measured)}")
        for f in failures[:40]:
            print(f"      PROBLEM: {f}")
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:60])


def test_a_deck_copied_alone_runs_from_the_disk(deck_browser, decks_folder, tmp_path):
    """The USB stick: one deck's folder, alone in an empty folder, opened as a file."""
    folder, _ = decks_folder
    stick = tmp_path / "stick"
    shutil.copytree(folder / "02_tiling", stick / "02_tiling")
    url = (stick / "02_tiling" / "index.html").as_uri()
    problems, measured = check_deck(deck_browser, url, (stick / "02_tiling").as_uri() + "/", SIZES[0], ("→",))
    math = deck_browser.execute_script(MATH_JS)
    assert not problems, problems
    assert math["maths"] > 0 and math["views"] > 0 and math["drawn"] > 0, math
    assert len(measured) >= 10


def test_the_walk_catches_a_deck_that_skips_overflows_or_needs_the_network(deck_browser, decks_folder, tmp_path):
    """Chapter 2's deck, damaged: a slide under another that → skips, a slide of
    small, long text past the bottom, a box that scrolls, a script from a CDN. Each is
    reported."""
    folder, _ = decks_folder
    copy = tmp_path / "02_tiling"
    shutil.copytree(folder / "02_tiling", copy)
    deck = copy / "index.html"
    text = deck.read_text()
    long = " ".join(["words"] * 120)
    damaged = text.replace('<div class="slides">', '<div class="slides"><section><section data-tc-kind="content">'
                           f'<h2>Damaged</h2><p style="font-size:16px">{long}</p>' + "<p>more</p>" * 30
                           + '<div style="height:80px;overflow:auto"><p>' + long + '</p></div></section>'
                           '<section><p>under it</p></section></section>', 1)
    damaged = damaged.replace("navigationMode: 'linear'", "navigationMode: 'default'", 1)   # → skips "under it"
    cdn = '<script src="https://cdn.jsdelivr.net/npm/nothing@1/x.js"></script>'
    damaged = damaged.replace("</head>", cdn + "</head>", 1)
    assert damaged.count("Damaged") == 1
    deck.write_text(damaged)
    problems, _ = check_deck(deck_browser, deck.as_uri(), copy.as_uri() + "/", SIZES[0], ("→",))
    said = "\n".join(problems)
    for expected in ("not each in order", "runs past the slide or into its bottom band", "scrolls",
                     "text at 15.4 px", "words of prose", "the first slide is not a title slide",
                     "loads https://cdn.jsdelivr.net/npm/nothing@1/x.js from outside its folder"):
        assert expected in said, f"not reported: {expected!r}\nreported:\n{said}"


def test_a_deck_prints_to_a_pdf_of_one_page_a_slide(deck_browser, decks_folder, tmp_path):
    """The handout (`make slides` with Chromium, scripts/slides/handout.py): every slide a
    page, each page of the slide's 16:9 shape."""
    folder, _ = decks_folder
    handout = importlib.import_module("build_slides").handout_module()
    pdf = tmp_path / "01_naive.pdf"
    pages = handout.print_deck(folder / "01_naive" / "index.html", pdf, deck_browser)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and pages >= 10
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    assert len(boxes) == pages, (len(boxes), pages)
    assert all(abs(float(w) / float(h) - 16 / 9) < 0.01 for w, h in boxes)
