"""What tests and scripts share: the repository's root, the numerical helpers of the
tests (numerics), kernel sources and cases (hopper, gpu_semantics_cases, cuda_corpus).

Tests import it as `tests.support` (pyproject.toml puts the repository's root on the tests'
path); a script that needs it runs from the root as a module, `python -m scripts.NAME`, so
that no file edits sys.path."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # <repo>/tests/support/this file
