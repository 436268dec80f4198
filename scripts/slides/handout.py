"""A deck printed to a PDF for handouts, one page a slide, by a headless Chromium: reveal.js
lays the deck out for print when its address asks (`?print-pdf`), and Chromium's own
print-to-PDF (DevTools' Page.printToPDF) writes the pages at the slide's size, which the
print layout sets as the CSS page size.

    python scripts/build_slides.py --pdf      # every deck, into its folder

Needs Chromium and its chromedriver (scripts/install_browser.sh) and Selenium
(requirements.txt); the deck is opened from the disk, as from a USB stick.
"""
import base64
import shutil
import tempfile
import time
from pathlib import Path

READY_TIMEOUT_S = 90
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--force-device-scale-factor=1", "--window-size=1280,720",
         # offline, as the decks are meant to be: no host but this machine answers
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]

# True once reveal.js has laid out one print page per slide (and has slides: before it has
# read the deck it counts none, and no pages laid out would match that).
PAGES_READY_JS = """
return document.body.dataset.slides === 'ready' && window.Reveal && Reveal.getTotalSlides() > 0
    && document.querySelectorAll('.reveal .pdf-page').length === Reveal.getTotalSlides();
"""


def chromium():
    """A headless Chromium driven by Selenium (the caller quits it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (binary and driver):
        raise SystemExit("printing the decks needs chromium and chromedriver: run scripts/install_browser.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS + [f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-handout-')}"]:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(driver))


def print_deck(deck, pdf, driver=None):
    """deck (a deck's index.html) printed to pdf; returns the number of pages."""
    own = driver is None
    driver = driver or chromium()
    try:
        driver.get(Path(deck).resolve().as_uri() + "?print-pdf")
        t0 = time.monotonic()
        while not driver.execute_script(PAGES_READY_JS):
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                raise RuntimeError(f"{deck}: the print layout was not ready in {READY_TIMEOUT_S} s")
            time.sleep(0.3)
        pages = driver.execute_script("return Reveal.getTotalSlides()")
        result = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True,
                                                            "displayHeaderFooter": False})
        Path(pdf).write_bytes(base64.b64decode(result["data"]))
        return pages
    finally:
        if own:
            driver.quit()
