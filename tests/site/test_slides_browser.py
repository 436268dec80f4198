"""The slides (scripts/build_slides.py), paged through in a real, offline Chromium.

The decks are built from the committed notebooks into a folder laid out as the site is
(slides/ beside _static/, whose revealjs, mathjax and widgets folders are the book's own,
book/_static), served on localhost, and opened in Chromium with every other host unreachable
(test_browser's flags: --host-resolver-rules). Each deck fails when:

* a request to another host is made (the decks must need nothing from the internet), or a
  local one fails;
* JavaScript reports an error, or the deck does not become ready (reveal.js started after
  the deck was paginated: body[data-slides="ready"]);
* it is not a deck of slides: fewer slides than the chapter has `##` sections, or the
  slides not shown one at a time (offline, nbconvert's decks were one long page);
* a formula is not typeset by MathJax, or TeX delimiters ($$, \\( ...) show in the text;
* a slide shows an input prompt (`In [16]:`), the Colab set-up, an import-only cell, or
  an exercise;
* a slide a section goes on to is headed with another section's title;
* any slide, visited one by one at 1280 x 720, has content past the slide's edges (every
  block, code box, table, image and widget must lie inside it), a figure taller or wider
  than the slide, or a block shrunk below the deck's limit to fit.

A screenshot of every slide of every deck goes to _build/screenshots/slides/<deck>/.
"""
import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import load_script
from test_browser import (
    CHROMIUM_FLAGS,
    ROOT,
    SiteServer,
    _chromium,
    _drain_logs,
    _is_local,
    _network,
)
from test_slides import chapter_headings

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "_build" / "screenshots" / "slides"
WIDTH, HEIGHT = 1280, 720
READY_TIMEOUT_S = 60
IMPORT = re.compile(r"^\s*(import\s+\S|from\s+\S+\s+import\s)")
MIN_ZOOM = 0.75         # a block shrunk to fit may be no smaller than this
SLIDE_FLAGS = [f for f in CHROMIUM_FLAGS if not f.startswith("--window-size=")] + [f"--window-size={WIDTH},{HEIGHT}"]


def build_slides_module():
    return load_script("build_slides")


def slide_site(folder, executed=None):
    """The decks built into folder/slides, beside a copy of the book's static folders in
    folder/_static (what Sphinx copies into the site). Returns the decks' stems."""
    mod = build_slides_module()
    shutil.copytree(ROOT / "book" / "_static", Path(folder) / "_static", dirs_exist_ok=True)
    kwargs = {"executed": executed} if executed is not None else {"executed": Path(folder) / "none"}
    return mod.build(Path(folder) / "slides", **kwargs)


@pytest.fixture(scope="module")
def slide_browser():
    yield from _chromium(SLIDE_FLAGS)


# Every slide of the deck, visited in order: what it shows and whether it fits.
SLIDES_PROBE_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden'
      && getComputedStyle(el).display !== 'none';
  const frame = () => document.querySelector('.reveal .slides').getBoundingClientRect();
  const scale = Reveal.getScale();
  const out = {scale, config: [Reveal.getConfig().width, Reveal.getConfig().height], slides: [],
               zoomed: (window.tcSlides || {}).zoomed || [], widgets: (window.tcSlides || {}).widgets};
  const BOXES = '.jp-InputArea, .jp-OutputArea-child, .jp-RenderedHTMLCommon > *, pre, table, img, '
      + '.jupyter-widgets, .tc-question > *, p, li, h1, h2, h3';
  const name = el => el.tagName.toLowerCase() + [...el.classList].slice(0, 2).map(c => '.' + c).join('');
  const slides = Reveal.getSlides();
  for (let i = 0; i < slides.length; i++) {
    const s = slides[i];
    const idx = Reveal.getIndices(s);
    Reveal.slide(idx.h, idx.v);
    await sleep(60);
    const f = frame();
    const r = {index: i, h: idx.h, v: idx.v, over: [], images: [], prompts: 0, visible_sections: 0,
               title: ((s.querySelector('h1, h2, h3, .tc-continued') || {}).textContent || '')
                   .replace(/\u00b6/g, '').trim().slice(0, 200),
               text: s.innerText.slice(0, 4000)};
    r.visible_sections = [...document.querySelectorAll('.reveal .slides section')]
        .filter(x => !x.querySelector('section') && visible(x) && x.getBoundingClientRect().height > 0
                && x.classList.contains('present')).length;
    for (const el of s.querySelectorAll(BOXES)) {
      if (!visible(el) || el.closest('aside.notes')) continue;
      const b = el.getBoundingClientRect();
      if (!b.width && !b.height) continue;
      // inside a box that clips (a code box that scrolls sideways): that box is what counts
      let clipped = false;
      for (let a = el.parentElement; a && a !== s; a = a.parentElement)
        if (getComputedStyle(a).overflowX !== 'visible' && a.matches(BOXES)) { clipped = true; break; }
      if (clipped) continue;
      const past = {right: (b.right - f.right) / scale, bottom: (b.bottom - f.bottom) / scale,
                    left: (f.left - b.left) / scale, top: (f.top - b.top) / scale};
      const worst = Object.entries(past).sort((x, y) => y[1] - x[1])[0];
      if (worst[1] > 1) r.over.push({what: name(el), side: worst[0], px: Math.round(worst[1]),
                                     text: (el.innerText || el.getAttribute('alt') || '').trim().slice(0, 50)});
    }
    for (const img of s.querySelectorAll('img')) {
      if (!visible(img)) continue;
      const b = img.getBoundingClientRect();
      r.images.push({w: Math.round(b.width / scale), h: Math.round(b.height / scale),
                     inside: b.left >= f.left - 1 && b.right <= f.right + 1
                             && b.top >= f.top - 1 && b.bottom <= f.bottom + 1});
    }
    r.inputs = [...s.querySelectorAll('.jp-CodeCell .jp-InputArea pre')].map(p => p.innerText);
    r.prompts = [...s.querySelectorAll('.jp-InputPrompt, .jp-OutputPrompt, .prompt')]
        .filter(p => visible(p) && /\[\s*\d*\s*\]/.test(p.textContent)).length;
    out.slides.push(r);
  }
  Reveal.slide(0, 0);
  done(out);
})().catch(e => done({error: String(e && e.stack || e)}));
"""

MATH_JS = r"""
const maths = document.querySelectorAll('mjx-container').length;
const errors = [...document.querySelectorAll('mjx-merror')]
    .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 80));
const raw = [];
const walker = document.createTreeWalker(document.querySelector('.reveal .slides'), NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const n = walker.currentNode, el = n.parentElement;
  const m = /\$\$|\\\(|\\\[|(^|[^\w$])\$[^$\s][^$]*\$/.exec(n.textContent);
  if (m && el && !el.closest('pre, code, script, style, mjx-container, aside.notes'))
    raw.push(n.textContent.trim().slice(0, 60));
}
return {maths, errors, raw, version: window.MathJax && MathJax.version};
"""


class DeckReport:
    def __init__(self, deck):
        self.deck = deck
        self.problems = []
        self.notes = []
        self.slides = []
        self.external = []

    def __repr__(self):
        return f"DeckReport({self.deck!r}, problems={self.problems!r})"


def check_deck(driver, base_url, deck, sections=0, screenshot_dir=None):
    """Open one deck (a path under base_url), wait for it, page through every slide
    (SLIDES_PROBE_JS) and return a DeckReport. `sections`: how many slides it must have
    at least (the chapter's `#`/`##` headings that the deck keeps)."""
    report = DeckReport(deck)
    _drain_logs(driver)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    driver.get(base_url + deck)
    t0 = time.monotonic()
    state = None
    while time.monotonic() - t0 < READY_TIMEOUT_S:
        state = driver.execute_script("return document.body && document.body.dataset.slides")
        if state in ("ready", "failed"):
            break
        time.sleep(0.2)
    if state != "ready":
        report.problems.append(f"the deck did not become ready within {READY_TIMEOUT_S} s (state {state!r})")
    console, perf = _drain_logs(driver)
    for req in _network(perf):
        u = req["url"]
        if u.startswith(("data:", "blob:", "about:", "chrome")):
            continue
        if not _is_local(u):
            report.external.append(u)
            report.problems.append(f"asks another host for {u[:100]} (the deck must work offline)")
        elif urlsplit(u).path != "/favicon.ico" and (req.get("status") or 0) >= 400:
            report.problems.append(f"{urlsplit(u).path} answered HTTP {req['status']}")
        elif req.get("error") and not req.get("canceled") and urlsplit(u).path != "/favicon.ico":
            report.problems.append(f"{urlsplit(u).path} failed: {req['error']}")
    for entry in console:
        if entry["level"] == "SEVERE" and not (entry.get("source") == "network" and "favicon.ico" in entry["message"]):
            report.problems.append(f"JavaScript error: {entry['message'][:300]}")
    if state != "ready":
        return report

    probe = driver.execute_async_script(SLIDES_PROBE_JS)
    if "error" in probe:
        report.problems.append(f"paging through the deck failed: {probe['error'][:500]}")
        return report
    report.slides = probe["slides"]
    if probe["config"] != [WIDTH, HEIGHT]:
        report.problems.append(f"slides of {probe['config']}, not {WIDTH} x {HEIGHT}")
    if len(report.slides) < max(3, sections):
        report.problems.append(f"{len(report.slides)} slide(s) for {sections} section(s): not paginated into slides")
    if probe["widgets"] is False:
        report.problems.append("the deck's widgets did not render")
    for z in probe["zoomed"]:
        if z["zoom"] < MIN_ZOOM:
            report.problems.append(f"a block on '{z['title']}' shrunk to {z['zoom']:.2f} to fit: {z['text']!r}")
        else:
            report.notes.append(f"a block on '{z['title']}' shrunk to {z['zoom']:.2f} to fit"
                                + (", and scrolls inside its box" if z.get("scrolls") else "")
                                + (f": {z['text']!r}" if z["text"] else ""))
    for before, s in zip(report.slides, report.slides[1:]):
        if s["title"].endswith(" (continued)") and s["title"] != before["title"] \
                and s["title"].removesuffix(" (continued)") != before["title"]:
            report.problems.append(f"slide {s['h']}.{s['v']} is headed {s['title']!r} but goes on from "
                                   f"{before['title']!r}")
    for s in report.slides:
        where = f"slide {s['h']}.{s['v']} '{s['title']}'"
        if s["visible_sections"] != 1:
            report.problems.append(f"{where}: {s['visible_sections']} slides shown at once")
        for o in s["over"][:3]:
            report.problems.append(f"{where}: {o['what']} runs {o['px']} px past the slide's {o['side']} edge: "
                                   f"{o['text']!r}")
        for img in s["images"]:
            if not img["inside"] or img["w"] > WIDTH or img["h"] > HEIGHT:
                report.problems.append(f"{where}: a figure of {img['w']} x {img['h']} px is not inside the slide")
        if s["prompts"]:
            report.problems.append(f"{where}: {s['prompts']} input/output prompt(s) shown")
        text = s["text"]
        for pattern, what in ((r"\bIn \[\d*\]:", "an input prompt"), (r"google\.colab", "the Colab set-up"),
                              (r"^Exercises?\b|exercises\.check\(", "an exercise")):
            if re.search(pattern, text, re.M):
                report.problems.append(f"{where}: shows {what}")
        for source in s["inputs"]:
            lines = [ln for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
            if lines and all(IMPORT.match(ln) for ln in lines):
                report.problems.append(f"{where}: shows a cell that only imports: {source.strip()[:60]!r}")
    math = driver.execute_script(MATH_JS)
    for e in math["errors"]:
        report.problems.append(f"MathJax error: {e}")
    for raw in math["raw"][:3]:
        report.problems.append(f"TeX not typeset: {raw!r}")
    report.notes.append(f"{len(report.slides)} slides, {math['maths']} formula(s) typeset by MathJax {math['version']}")
    if screenshot_dir is not None:
        folder = Path(screenshot_dir) / Path(deck).name.split(".")[0]
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i, s in enumerate(report.slides):
            driver.execute_script("Reveal.slide(arguments[0], arguments[1])", s["h"], s["v"])
            time.sleep(0.05)
            (folder / f"{i:03d}_{s['h']}.{s['v']}.png").write_bytes(driver.get_screenshot_as_png())
    return report


def _sections(stem):
    """The `#`/`##` headings of a chapter before its exercises: slides it must have at least."""
    return sum(level <= 2 for level, _ in chapter_headings(stem))


@pytest.fixture(scope="module")
def slides_folder(tmp_path_factory):
    """The decks and the site's static folders, as `make slides` lays them out. The decks
    come from the notebooks `make book` executed where there are some, else from the
    committed ones (whose outputs are the recorded ones)."""
    folder = tmp_path_factory.mktemp("slides_site")
    executed = ROOT / "_build" / "jupyter_execute"
    decks = slide_site(folder, executed if (executed / "book").is_dir() else None)
    return folder, decks


def test_every_deck_offline_fits_its_slides(slide_browser, slides_folder, capsys):
    folder, decks = slides_folder
    assert len(decks) >= 8
    reports = []
    with SiteServer(folder) as server:
        for stem in decks:
            reports.append(check_deck(slide_browser, server.url, f"slides/{stem}.slides.html",
                                      _sections(stem), SCREENSHOTS))
    failures = [f"{r.deck}: {p}" for r in reports for p in r.problems]
    with capsys.disabled():
        print(f"\n[test_slides_browser] {len(decks)} decks, {sum(len(r.slides) for r in reports)} slides "
              f"at {WIDTH} x {HEIGHT}, offline; {len(failures)} problem(s); screenshots in {SCREENSHOTS}/")
        for r in reports:
            print(f"  {r.deck}: {len(r.problems)} problem(s); " + "; ".join(r.notes[-1:]))
            for note in r.notes[:-1]:
                print(f"      note: {note}")
            for p in r.problems[:20]:
                print(f"      PROBLEM: {p}")
    assert not failures, f"{len(failures)} problem(s) in the slides:\n" + "\n".join(failures[:60])
    # Not vacuous: the decks have formulas, figures and code, and they were looked at.
    assert sum("formula(s) typeset" in n and not n.split(" slides, ")[1].startswith("0 ")
               for r in reports for n in r.notes), "no deck has a typeset formula"
    assert sum(len(s["images"]) for r in reports for s in r.slides) >= 15, "fewer figures than the chapters draw"


def test_deck_checks_catch_a_deck_that_needs_the_internet_or_overflows(slide_browser, slides_folder, tmp_path):
    """A copy of chapter 2's deck, damaged: not paginated (its long sections run off the
    slide), a script from a CDN, and an input prompt; then the site without its MathJax.
    Each is reported; the deck as built passes."""
    folder, _ = slides_folder
    copy = tmp_path / "site"
    shutil.copytree(folder, copy)
    deck = copy / "slides" / "02_tiling.slides.html"
    text = deck.read_text()
    with SiteServer(copy) as server:
        report = check_deck(slide_browser, server.url, "slides/02_tiling.slides.html", _sections("02_tiling"))
    assert report.problems == [], report.problems

    damaged = text.replace("leaves().forEach(paginate);", "", 1)
    assert damaged != text
    cdn = '<script src="https://cdn.jsdelivr.net/npm/nothing@1/x.js"></script>'
    damaged = damaged.replace("</head>", cdn + "</head>", 1)
    damaged = damaged.replace('<div class="slides">', '<div class="slides"><section><section><p>In [16]:</p>'
                              '</section></section>', 1)
    (copy / "slides" / "broken.slides.html").write_text(damaged)
    shutil.rmtree(copy / "_static" / "mathjax")
    with SiteServer(copy) as server:
        report = check_deck(slide_browser, server.url, "slides/broken.slides.html", _sections("02_tiling"))
    problems = "\n".join(report.problems)
    for expected in ("asks another host for https://cdn.jsdelivr.net/npm/nothing@1/x.js",
                     "/_static/mathjax/tex-chtml.js answered HTTP 404",
                     "past the slide's bottom edge",
                     "shows an input prompt",
                     "TeX not typeset"):
        assert expected in problems, f"not reported: {expected!r}\nreported:\n{problems}"
