"""Every page of the built site, opened in a real (headless) Chromium.

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
* a link to Colab does not open this repository's notebook (below).

A full-page screenshot of every page goes to _build/screenshots/ (git-ignored) for a
person to look at; the test prints where.

Offline by design. The browser can reach nothing but 127.0.0.1: Chromium's
--host-resolver-rules resolves every other host name to "not found", so requests to
CDNs (MathJax, require.js, the ipywidgets HTML manager, thebe, ...) fail at once and
are ignored: failed requests to non-localhost URLs, and the console's "Failed to load
resource" lines for them, are not counted as problems (the hosts are listed in the
test's output). Other JavaScript errors count even if a missing CDN script caused them.
So in the screenshots math is TeX source (MathJax is not loaded).

Widgets: the static site embeds each widget as
<script type="application/vnd.jupyter.widget-view+json"> plus the widget state, and the
book serves the JavaScript that draws it (@jupyter-widgets/html-manager's embed-amd.js
and require.js, book/_static/widgets) from the site itself, so widgets must render
offline: on a page that loads the site's own widget manager, a widget that did not draw
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
there without it.

Colab: a link to https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>
must name the repository and branch of _config.yml's ``repository`` and a notebook
(.ipynb) that exists in the repository; a launch button (a Colab link outside the
page's article, i.e. in the header) must open exactly this page's own notebook,
<path_to_book>/<page>.ipynb. Pages without Colab links pass.

When Chromium or chromedriver is missing, the session fixture runs
scripts/install_browser.sh (apt-get, as root); where that cannot install (not root,
no apt-get) the tests skip with the reason.
"""
import base64
import functools
import http.server
import io
import json
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
import yaml

webdriver = pytest.importorskip("selenium.webdriver",
                                reason="selenium is not installed (pip install -r requirements.txt)")
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"
LOCAL_HOSTS = ("127.0.0.1", "localhost")

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

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
    "--window-size=1280,1000", "--force-device-scale-factor=1",
    # Offline: every host name but the local server's resolves to "not found" (no DNS, no
    # waiting), so pages cannot reach any CDN; those failures are ignored below.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


# --------------------------------------------------------------------------- the site

def find_pages(html_root):
    """Every HTML page of a build, as paths relative to its root ('book/02_tiling.html')."""
    skip = {"_static", "_sources", "_images", "_downloads", "jupyter_execute"}
    return sorted(p.relative_to(html_root).as_posix() for p in Path(html_root).rglob("*.html")
                  if not skip & set(p.relative_to(html_root).parts[:-1]))


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

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class SiteServer:
    """``python -m http.server`` for one folder, in a thread, on a free localhost port."""

    def __init__(self, folder):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _browser_binaries():
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium and chromedriver:
        return chromium, chromedriver
    proc = subprocess.run(["sh", str(ROOT / "scripts" / "install_browser.sh")],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode == 3:
        pytest.skip(f"no headless Chromium: {proc.stderr.strip()}")
    if proc.returncode != 0:
        pytest.fail("scripts/install_browser.sh failed:\n" + (proc.stdout + proc.stderr)[-3000:])
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.skip("chromium/chromedriver still not on PATH after scripts/install_browser.sh")
    return chromium, chromedriver


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium (fresh profile) for the whole session."""
    chromium, chromedriver = _browser_binaries()
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    # browser: console messages and uncaught errors; performance: DevTools network events.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(chromedriver))
    except WebDriverException as exc:
        shutil.rmtree(profile, ignore_errors=True)
        pytest.fail(f"could not start {chromium} through {chromedriver}: {exc.msg}")
    driver.set_page_load_timeout(60)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# --------------------------------------------------------------------------- one page

# Runs in the page after it has loaded; returns what the checks need.
PAGE_PROBE_JS = r"""
const visible = el => !!el && el.getClientRects().length > 0 && el.offsetWidth > 0 && el.offsetHeight > 0
    && getComputedStyle(el).visibility !== 'hidden';
const text = el => (el && el.innerText || '').trim();
const main = document.querySelector('main#main-content') || document.querySelector('main')
    || document.querySelector('[role=main]') || document.body;
const article = document.querySelector('article.bd-article') || document.querySelector('article') || main;

const images = [...article.querySelectorAll('img')].map(img => {
  const r = {src: img.currentSrc || img.src, w: img.naturalWidth, h: img.naturalHeight,
             complete: img.complete, range: null, error: null};
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
const local_widget_manager = !!document.querySelector('script[src*="_static/widgets/embed-amd.js"]');
return {title: document.title, url: location.href, images, widgets, quizzes, loose_quiz_parts, colab, links,
        local_widget_manager};
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


def _is_local(url):
    return urlsplit(url).hostname in LOCAL_HOSTS


def _drain_logs(driver):
    return driver.get_log("browser"), driver.get_log("performance")


def _network(perf_log):
    """(url, status, type, error) of every request in a DevTools performance log."""
    requests = {}
    for entry in perf_log:
        msg = json.loads(entry["message"])["message"]
        method, params = msg["method"], msg.get("params", {})
        rid = params.get("requestId")
        if method == "Network.requestWillBeSent":
            requests[rid] = {"url": params["request"]["url"], "type": params.get("type"), "status": None,
                             "error": None}
        elif method == "Network.responseReceived":
            r = requests.setdefault(rid, {"url": params["response"]["url"], "type": params.get("type"), "error": None})
            r["status"] = params["response"]["status"]
        elif method == "Network.loadingFailed":
            r = requests.setdefault(rid, {"url": "?", "type": params.get("type"), "status": None})
            r["error"] = params.get("errorText") or params.get("blockedReason") or "failed"
            r["canceled"] = params.get("canceled", False)
    return list(requests.values())


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

    _drain_logs(driver)
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
    time.sleep(SETTLE_S)
    probe = driver.execute_script(PAGE_PROBE_JS)

    # Network: every request of this page to the local server must succeed.
    console, perf = _drain_logs(driver)
    failed_local = set()
    for req in _network(perf):
        u = req["url"]
        if u.startswith(("data:", "blob:", "about:", "chrome")):
            continue
        if not _is_local(u):
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
        if entry["level"] != "SEVERE":
            continue
        message = entry["message"]
        if entry.get("source") == "network":
            first = message.split(" ", 1)[0]
            if not _is_local(first) or first in failed_local or urlsplit(first).path in IGNORED_LOCAL_PATHS:
                continue  # another host (offline on purpose), or already reported above
        if any(p.search(message) for p in HARMLESS_CONSOLE_ERRORS):
            report.notes.append(f"harmless console error (HARMLESS_CONSOLE_ERRORS): {message[:160]}")
            continue
        report.problems.append(f"JavaScript error: {message[:400]}")

    # Internal links must lead to pages that exist.
    for href in sorted(set(probe["links"])):
        parts = urlsplit(href)
        if _is_local(href) and parts.path.endswith(".html"):
            target = html_root / unquote(parts.path.lstrip("/"))
            if not target.is_file():
                report.problems.append(f"link to a missing page: {parts.path}")

    # Figures of the content.
    for img in probe["images"]:
        name = img["src"].rsplit("/", 1)[-1][:60]
        if not _is_local(img["src"]):
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

    _check_colab(report, docname, probe["colab"], launch)
    report.checked = {"images": len(probe["images"]), "widgets": len(probe["widgets"]),
                      "quizzes": len(probe["quizzes"]), "Colab links": len(probe["colab"])}

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
    """The pixels around `element` (its box grown by `margin` px), from a viewport screenshot."""
    rect = driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                 "return [r.left, r.top, r.right, r.bottom, innerWidth, innerHeight];", element)
    left, top, right, bottom, width, height = rect
    box = (max(0, int(left) - margin), max(0, int(top) - margin),
           min(int(width), int(right) + margin + 1), min(int(height), int(bottom) + margin + 1))
    from PIL import Image  # matplotlib's dependency: in the book's requirements
    shot = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    return shot.crop(box)


def _undrawn_underscores(driver):
    """Problems for the quiz code elements whose underscores are not visibly drawn (see the
    module docstring): each is drawn with its underscores, then with them transparent."""
    problems = []
    marked = driver.execute_script(MARK_UNDERSCORES_JS)
    for i, code in enumerate(marked):
        element = driver.execute_script("return window.__quizCodes[arguments[0]]", i)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        time.sleep(0.05)
        drawn = _region(driver, element)
        driver.execute_script("arguments[0].querySelectorAll('[data-underscore]')"
                              ".forEach(s => s.style.color = 'transparent')", element)
        time.sleep(0.05)
        hidden = _region(driver, element)
        driver.execute_script("arguments[0].querySelectorAll('[data-underscore]')"
                              ".forEach(s => s.style.color = '')", element)
        ink = sum(1 for a, b in zip(drawn.get_flattened_data(), hidden.get_flattened_data())
                  if a != b and _contrast(a, b) >= MIN_INK_CONTRAST)
        if ink < MIN_UNDERSCORE_INK * code["underscores"]:
            problems.append(f"quiz code {code['text']!r}: its {code['underscores']} underscore(s) are not visibly "
                            f"drawn ({ink} pixel(s) at contrast >= {MIN_INK_CONTRAST}, "
                            f"{MIN_UNDERSCORE_INK * code['underscores']} needed)")
    return problems


def _screenshot(driver, path):
    """Full page through DevTools: the viewport is made as tall as the page (so that the
    theme's sticky sidebars and header are laid out as a reader sees them), captured, and
    put back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    width = driver.execute_script("return window.innerWidth")
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    height = int(min(size["height"], MAX_SCREENSHOT_PX))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        time.sleep(0.2)  # let the page lay itself out at the new size
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


# --------------------------------------------------------------------------- the tests

def _site_html(built_site):
    if not (built_site.html / "index.html").is_file():
        pytest.fail("the site did not build (see test_site_builds_with_warnings_as_errors):\n"
                    + built_site.stdout[-3000:] + built_site.stderr[-3000:])
    return built_site.html


def test_every_page_in_a_browser(built_site, browser, capsys):
    html = _site_html(built_site)
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
    assert not failures, f"{len(failures)} problem(s) in the browser:\n" + "\n".join(failures)


# Self-tests: the checks run against small hand-made pages and against a damaged copy of
# the real build, and must report what was broken on purpose.

def _png(width, height, pixel):
    """A PNG file (RGB) whose pixel (x, y) is pixel(x, y) -> (r, g, b)."""
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
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
<p>A figure: <img src="../_images/plot.png" alt="plot"></p>
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
    (root / "_images" / "plot.png").write_bytes(_png(120, 90, lambda x, y: (2 * x, 2 * y, 128)))
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
    html = _site_html(built_site)
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
    (copy / page).write_text(text.replace(QUIZ_CODE_CSS, ""))
    with SiteServer(copy) as server:
        problems = "\n".join(check_page(browser, server.url, page, copy, launch_config()).problems)
    assert "quiz code '__syncthreads()': its 2 underscore(s) are not visibly drawn" in problems, problems
