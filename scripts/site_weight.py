"""What each page of the built site weighs and how long it takes to load, in headless Chromium.

    python scripts/site_weight.py _build/html                 # every chapter at 1280x800
    python scripts/site_weight.py _build/html --size 390x844 --json weights.json book/09_hopper.html
    python scripts/site_weight.py _build/html --size 390x844 --read --check   # + what reading it all loads

A page is opened with the browser's cache off from a local server that sends every file as it
is on the disk (Python's http.server: no gzip), so "bytes" is what a reader downloads from a
static host that does not compress. A host that gzips (most do, GitHub Pages included) sends
less: "gzip" is the same files compressed at gzip's default level, measured here rather than
assumed. Everything the page asked for until it was loaded counts, fonts and images included.
"Load" is from the request to the window's load event ("DOM" to DOMContentLoaded, "paint" to
the first contentful paint: the first text on the screen), the best of --repeat runs (the
machine is shared, so a slow run says more about the neighbours than about the page).

What comes later, as the reader scrolls (the formulas' MathJax, the widgets' state and the
script that draws them), is not in "bytes": with --read the page is then scrolled through to
its end, a screen at a time, and "read" is everything it loaded by then.

--check exits with 1 when a page weighs more than MAX_PAGE_BYTES as served at load, or
MAX_PAGE_GZIP gzipped (with --read, also MAX_READ_BYTES scrolled to its end).
tests/site/test_browser.py holds every page to the same at a phone's, a laptop's and a
projector's size, and chapter 9 to MAX_LOAD_S.
"""
import argparse
import functools
import gzip
import http.server
import json
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

MAX_PAGE_BYTES = 2_000_000   # "a chapter page is at most about 2 MB", as served at load
MAX_PAGE_GZIP = 1_000_000    # ... and from a host that compresses (every page is under 0.6 MB)
# Scrolled to its end: everything a reader of the whole page loads (the widget manager of
# ipywidgets alone was 3.7 MB; the book's widgets are now drawn by a 10 kB script).
MAX_READ_BYTES = 3_000_000
MAX_LOAD_S = 2.0             # chapter 9 (the longest page) "loading in under 2 s here"

# Every resource of the page with its size as decoded (the file as served), after the load
# event and the late requests it starts (fonts asked for by a style, images shown late).
RESOURCES_JS = r"""
const nav = performance.getEntriesByType('navigation')[0];
const paint = performance.getEntriesByName('first-contentful-paint')[0];
return {load_ms: nav.loadEventEnd - nav.startTime, dom_ms: nav.domContentLoadedEventEnd - nav.startTime,
        paint_ms: paint ? paint.startTime : null,
        resources: [{url: location.href, bytes: nav.decodedBodySize}].concat(
          performance.getEntriesByType('resource').map(r => ({url: r.name, bytes: r.decodedBodySize})))};
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder):
    """A local http.server for `folder` in a thread; returns (base URL, server)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/", httpd


@functools.lru_cache(maxsize=None)
def gzip_size(path):
    return len(gzip.compress(Path(path).read_bytes(), compresslevel=6))


# Down the page a screen at a time, as a reader scrolls, then time for what that started. Each
# screen is shown for two frames: the first finds what came into view (IntersectionObserver,
# which the on-demand loaders of MathJax and the widgets use), whose callbacks run before the
# second; what they start loads meanwhile, and the last wait is for all of it.
READ_JS = r"""
const done = arguments[0];
const step = () => {
  if (scrollY + innerHeight >= document.documentElement.scrollHeight - 2) return setTimeout(done, 1500);
  scrollBy({top: innerHeight, behavior: 'instant'});
  requestAnimationFrame(() => requestAnimationFrame(step));
};
step();
"""


def measure(driver, base_url, page, html_root, repeat=1, read=False):
    """One page's weight (bytes as served, and gzipped), its largest files and its load time
    (seconds, the best of `repeat`; and to DOMContentLoaded); with `read`, also what it has
    loaded once scrolled to its end ("read", "read_gzip", "read_largest": the files that
    came after the load). The driver's cache must be off (Network.setCacheDisabled)."""
    best = None
    for _ in range(repeat):
        driver.get(urljoin(base_url, page))
        driver.execute_async_script("const done = arguments[0]; "
                                    "document.fonts.ready.then(() => setTimeout(done, 300));")
        facts = driver.execute_script(RESOURCES_JS)
        if best is None or facts["load_ms"] < best["load_ms"]:
            best = facts
    row = {"page": page, **_weigh(best["resources"], html_root), "load_s": round(best["load_ms"] / 1000, 3),
           "dom_s": round(best["dom_ms"] / 1000, 3),
           "paint_s": round(best["paint_ms"] / 1000, 3) if best["paint_ms"] is not None else None}
    if read:
        driver.execute_async_script(READ_JS)
        later = _weigh(driver.execute_script(RESOURCES_JS)["resources"], html_root)
        at_load = dict(row["all"])
        row.update(read=later["bytes"], read_gzip=later["gzip"],
                   read_largest=[(n, b) for n, b in later["largest"] if n not in at_load][:5])
    row.pop("all")
    return row


def over_budget(row):
    """What of one page's measure() row is over MAX_PAGE_BYTES, MAX_PAGE_GZIP or (where it was
    read to its end) MAX_READ_BYTES, in words; [] where nothing is."""
    over = []
    if row["bytes"] > MAX_PAGE_BYTES:
        over.append(f"{row['bytes'] / 1e6:.2f} MB as served, over {MAX_PAGE_BYTES / 1e6:.1f} "
                    f"(largest: {row['largest'][:3]})")
    if row["gzip"] > MAX_PAGE_GZIP:
        over.append(f"{row['gzip'] / 1e6:.2f} MB gzipped, over {MAX_PAGE_GZIP / 1e6:.1f}")
    if row.get("read", 0) > MAX_READ_BYTES:
        over.append(f"{row['read'] / 1e6:.2f} MB once scrolled to its end, over {MAX_READ_BYTES / 1e6:.1f} "
                    f"(what came: {row['read_largest'][:3]})")
    return over


def _weigh(resources, html_root):
    files, total, zipped = {}, 0, 0
    for r in resources:
        parts = urlsplit(r["url"])
        if parts.hostname not in ("127.0.0.1", "localhost"):
            continue
        path = Path(html_root) / unquote(parts.path.lstrip("/"))
        if path.is_dir():
            path = path / "index.html"
        if path.name in files or not path.is_file():
            continue
        size = path.stat().st_size
        files[path.relative_to(html_root).as_posix()] = size
        total += size
        zipped += gzip_size(path)
    ordered = sorted(files.items(), key=lambda kv: -kv[1])
    return {"bytes": total, "gzip": zipped, "files": len(files), "largest": ordered[:5], "all": ordered}


def chromium(width, height):
    """A headless Chromium (Selenium) at width x height CSS px, device pixel ratio 1, cache off."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--force-device-scale-factor=1", f"--window-size={width},{height}",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    driver.set_script_timeout(60)
    return driver


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built site (_build/html)")
    parser.add_argument("pages", nargs="*", help="pages relative to it (default: book/*.html)")
    parser.add_argument("--size", default="1280x800", help="window WIDTHxHEIGHT in CSS px (default 1280x800)")
    parser.add_argument("--repeat", type=int, default=3, help="load each page this many times, keep the best")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--read", action="store_true", help="also scroll each page to its end and weigh that")
    parser.add_argument("--check", action="store_true",
                        help="exit with 1 if a page is over MAX_PAGE_BYTES as served, or MAX_PAGE_GZIP gzipped")
    args = parser.parse_args(argv)
    pages = args.pages or sorted(p.relative_to(args.html).as_posix() for p in (args.html / "book").glob("*.html"))
    width, height = (int(v) for v in args.size.lower().split("x"))
    base, httpd = serve(args.html)
    driver = chromium(width, height)
    try:
        rows = [measure(driver, base, page, args.html, args.repeat, args.read) for page in pages]
    finally:
        driver.quit()
        httpd.shutdown()
    read = " read MB  gzip" if args.read else ""
    print(f"{'page':28} {'MB':>5} {'gzip MB':>7} {'files':>5} {'load s':>6} {'DOM s':>5} {'paint':>5}{read}  "
          f"largest  "
          f"({width}x{height})")
    over = []
    for r in rows:
        top = ", ".join(f"{Path(n).name} {b / 1e6:.2f}" for n, b in r["largest"][:3])
        more = f" {r['read'] / 1e6:8.2f} {r['read_gzip'] / 1e6:5.2f}" if args.read else ""
        print(f"{r['page']:28} {r['bytes'] / 1e6:5.2f} {r['gzip'] / 1e6:7.2f} {r['files']:5d} "
              f"{r['load_s']:6.2f} {r['dom_s']:5.2f} {r['paint_s'] or 0:5.2f}{more}  {top}")
        over += [f"{r['page']}: {problem}" for problem in over_budget(r)]
    if args.json:
        args.json.write_text(json.dumps({"size": args.size, "pages": rows}, indent=1))
    if args.check and over:
        print("over the budget:\n  " + "\n  ".join(over))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
