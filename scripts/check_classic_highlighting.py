"""Check that %%cuda cells are highlighted as C++ in the classic Jupyter Notebook once a
chapter's set-up cell has run (tiling_course.notebook.setup registers the mode).

Needs a classic Notebook server (`pip install notebook==6.5.7`) serving a folder that
holds book/01_naive.ipynb on port 8899 without a token, Debian's chromium and
chromedriver, and selenium:

    jupyter notebook --no-browser --port 8899 --NotebookApp.token='' --notebook-dir=DIR &
    python scripts/check_classic_highlighting.py

Prints the CodeMirror mode of each %%cuda cell before and after the set-up cell runs.
"""
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

MODES = """return IPython.notebook.get_cells().filter(c => c.cell_type == 'code')
    .filter(c => c.get_text().startsWith('%%cuda')).map(c => c.code_mirror.getMode().name);"""


def main(url="http://127.0.0.1:8899/notebooks/01_naive.ipynb"):
    options = Options()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        time.sleep(8)
        print("before the set-up cell:", driver.execute_script(MODES))
        driver.execute_script("IPython.notebook.get_cells().filter(c => c.cell_type == 'code')[0].execute();")
        time.sleep(15)
        after = driver.execute_script(MODES)
        print("after the set-up cell: ", after)
        assert after and all(m == "magic_text/x-c++src" for m in after), "the %%cuda cells are not highlighted as C++"
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
