#!/usr/bin/env bash
# Run every chapter under nbval in an environment pinned to Google Colab's versions
# (requirements-colab.txt: IPython 7.34, ipywidgets 7.7.1, matplotlib 3.10, ...), with
# whatever Python this machine has (Colab: 3.12 or 3.13). With CuPy and a GPU present
# the chapters run on the GPU, as on a Colab GPU runtime; otherwise on the CPU runtime,
# as on a Colab CPU runtime.
#
#   scripts/colab_env_check.sh [VENV_DIR]      (default .venv-colab)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-colab}"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -r requirements-colab.txt
"$venv/bin/python" -m pip install -q --no-deps -e .
"$venv/bin/python" - <<'PY'
import sys, IPython, ipywidgets, matplotlib, numpy
print(f"Python {sys.version.split()[0]}, IPython {IPython.__version__}, ipywidgets {ipywidgets.__version__}, "
      f"matplotlib {matplotlib.__version__}, NumPy {numpy.__version__}")
PY
"$venv/bin/python" -m pytest -q -p no:cacheprovider --nbval-lax book
