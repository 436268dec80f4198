"""The site tests' browser: a local server for a built site, a headless Chromium, what its
logs say, and the walk through a widget's states; shared by tests/site/test_browser.py,
test_slides_browser.py, test_widgets_browser.py and tests/course/test_widgets.py."""
import base64
import functools
import http.server
import json
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support import ROOT

LOCAL_HOSTS = ("127.0.0.1", "localhost")
MATH_TIMEOUT_S = 15        # for MathJax's first typesetting of a page
WIDGETS_TIMEOUT_S = 30     # for the widgets of a page to draw (reach_widgets)

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
    "--window-size=1280,1000", "--force-device-scale-factor=1",
    # Offline: every host name but the local server's resolves to "not found" (no DNS, no
    # waiting), so pages cannot reach any CDN; those failures are ignored below.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


def find_pages(html_root):
    """Every HTML page of a build, as paths relative to its root ('book/02_tiling.html')."""
    skip = {"_static", "_sources", "_images", "_downloads", "jupyter_execute"}
    return sorted(p.relative_to(html_root).as_posix() for p in Path(html_root).rglob("*.html")
                  if not skip & set(p.relative_to(html_root).parts[:-1]))


def site_html(built_site):
    if not (built_site.html / "index.html").is_file():
        pytest.fail("the site did not build (see test_site_builds_with_warnings_as_errors):\n"
                    + built_site.stdout[-3000:] + built_site.stderr[-3000:])
    return built_site.html


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


def browser_binaries():
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


def start_chromium(flags):
    """A headless Chromium with a fresh profile and these flags (a generator: yields the
    driver, then quits it)."""
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = browser_binaries()
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in flags + [f"--user-data-dir={profile}"]:
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
    driver.set_script_timeout(max(MATH_TIMEOUT_S, WIDGETS_TIMEOUT_S) + 15)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def is_local(url):
    return urlsplit(url).hostname in LOCAL_HOSTS


def drain_logs(driver):
    return driver.get_log("browser"), driver.get_log("performance")


def network_requests(perf_log):
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


# The widget manager loads when a widget's cell comes near the window (book/_ext/
# widgets_on_demand.py), as a reader scrolls to it: the checks scroll to the first widget as a
# reader would, wait until the manager has drawn every widget of the page, and go back to the top.
# Only a page that loads the site's own widget loader or manager can draw its widgets offline;
# on any other (the manager would come from a CDN, which the browser cannot reach) nothing is
# waited for: the checks accept a static fallback there. The wait runs in the page, polled at
# each frame (arguments[0]: the time limit in ms; the last argument: the callback).
REACH_WIDGETS_JS = r"""
const done = arguments[arguments.length - 1], limit = arguments[0];
const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]');
const local = document.querySelector(
    'script[src*="_static/widgets/on-demand.js"], script[src*="_static/widgets/embed-amd.js"]');
if (!views.length || !local) return done(views.length);
(views[0].closest('.cell') || views[0].parentElement).scrollIntoView({block: 'center', behavior: 'instant'});
const t0 = performance.now();
const poll = () => {
  if (document.querySelectorAll('.widget-subarea').length >= views.length || performance.now() - t0 > limit) {
    window.scrollTo({top: 0, behavior: 'instant'});
    return done(views.length);
  }
  requestAnimationFrame(poll);
};
poll();
"""


def reach_widgets(driver):
    """Scroll to the page's first widget and wait until the page has drawn as many widgets as
    it embeds (or WIDGETS_TIMEOUT_S; what did not draw is reported by the checks after this);
    then back to the top. Returns how many the page embeds."""
    return driver.execute_async_script(REACH_WIDGETS_JS, WIDGETS_TIMEOUT_S * 1000)


def sweep_states(selected, sizes):
    """Every combination of options, each reached from the one before by changing one
    control (a snake walk), starting from `selected` and ending back at it."""
    combos = [[]]
    for k, n in enumerate(sizes):
        order = [selected[k]] + [i for i in range(n) if i != selected[k]]
        combos = [c + [i] for j, c in enumerate(combos) for i in (order if j % 2 == 0 else order[::-1])]
    return combos[1:] + [list(selected)]


# Whether a page is still moving: a CSS transition or animation under way (document.
# getAnimations() counts both, and computes styles first, so one that a click has just
# started is counted). Endless ones (a spinner) never end and are not waited for. The page is
# asked at every frame, in one call (a round trip to the browser for each poll cost more than
# most transitions last); still means seen still at every frame for STILL_MS (a handler may
# start its transition a frame after the click). arguments[0]: the time limit in ms.
STILL_JS = r"""
const done = arguments[arguments.length - 1], limit = arguments[0], STILL_MS = 50;
const moving = () => document.getAnimations().some(a => a.playState === 'running'
    && !(a.effect && a.effect.getComputedTiming().iterations === Infinity));
const t0 = performance.now();
let since = null;
const poll = now => {
  if (moving()) since = null;
  else if (since === null) since = now;
  if ((since !== null && now - since >= STILL_MS) || now - t0 > limit) return done(since !== null);
  requestAnimationFrame(poll);
};
requestAnimationFrame(poll);
"""
STILL_TIMEOUT_S = 5


def wait_until_still(driver, timeout=STILL_TIMEOUT_S):
    """Return once the page's transitions and animations have ended (STILL_JS): a menu's
    half-second slide costs what it lasts, and a click that starts none about 50 ms. After
    `timeout` seconds, return anyway: what has not settled then shows in the checks that
    follow."""
    driver.execute_async_script(STILL_JS, timeout * 1000)


# Two animation frames: what a change of the page's size or style has made is laid out and
# painted, and what the browser runs on a resize (the resize event, then requestAnimationFrame
# callbacks) has run.
FRAMES_JS = "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()));"


def next_frames(driver):
    driver.execute_async_script(FRAMES_JS)


def screenshot_png(driver, clip=None):
    """A PNG of the window (or of `clip`, {x, y, width, height} in CSS px of the document) as
    DevTools captures it, encoded for speed (a larger file than Selenium's, made in half the
    time: the checks take hundreds of them)."""
    params = {"format": "png", "optimizeForSpeed": True}
    if clip is not None:
        params["clip"] = {**clip, "scale": 1}
    return base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", params)["data"])
