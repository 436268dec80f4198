"""The code passes the linter the repository is configured for (pyproject.toml [tool.ruff]):
no unused imports or variables, no undefined names, lines within 120 characters."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-1000:]
