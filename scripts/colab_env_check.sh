#!/usr/bin/env bash
# Every chapter under nbval as a student in Google Colab runs it: the course's wheels
# installed into a virtual environment pinned to Colab's versions (requirements-colab.txt),
# the notebooks alone in an empty folder. With CuPy and a GPU present the chapters run on
# the GPU, as on a Colab GPU runtime; otherwise on the CPU runtime, as on a CPU one.
#
#   scripts/colab_env_check.sh [VENV_DIR]      (default .venv-colab)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/colab_install_check.py --venv "${1:-.venv-colab}"
