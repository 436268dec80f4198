# Two commands on a fresh machine (Debian/Ubuntu, Python 3.11+, a C++ compiler):
#   make book   builds the site into _build/html, executing every notebook
#   make test   runs every test (runtime, checks, kernels, notebooks, site build, wheels, linter)
# Each creates .venv from requirements.txt when it is missing or out of date.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where Python is told to write no bytecode (PYTHONDONTWRITEBYTECODE, as on CI's machines), the
# packages installed here in editable mode would be compiled again by every process that
# imports them: the book's and the tests' hundreds (Jupyter kernels, the grader's sandboxed
# launchers, scripts). Compiled here once; an up-to-date module is skipped.
COMPILE := $(BIN)/python -m compileall -q -j 0 runtime/cudacheck course/tiling_course scripts

.PHONY: book slides editions test bench clean

$(STAMP): requirements.txt pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $@

book: $(STAMP)
	$(COMPILE)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

# A lecture deck of every chapter, from the same notebooks, into _build/html/slides/: each
# a folder that runs from a USB stick, with a PDF for handouts where Chromium is installed
slides: book
	$(BIN)/python scripts/build_slides.py $$(command -v chromium >/dev/null && command -v chromedriver >/dev/null && echo --pdf)

# The student edition (what the site and Colab serve: no solutions) and the instructor's
# (solutions, assignments' sources, question bank), into _build/editions/
editions: $(STAMP)
	$(BIN)/python scripts/build_editions.py

test: $(STAMP)
	$(COMPILE)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/cpu_runtime.py

clean:
	rm -rf _build
