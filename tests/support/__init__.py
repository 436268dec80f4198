"""What tests and scripts share: the repository's root, the numerical helpers of the
tests (numerics), kernel sources and cases (hopper, gpu_semantics_cases, cuda_corpus,
grading_samples, similarity_samples), the Gradescope contract and the browser the site tests drive.

Tests import it as `tests.support` (pyproject.toml puts the repository's root on the tests'
path); a script that needs it runs from the root as a module, `python -m scripts.NAME`, so
that no file edits sys.path."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # <repo>/tests/support/this file
# Submissions that the grading tests and benchmarks/ grade: correct, racy, out of bounds...
GRADING_SAMPLES = Path(__file__).with_name("grading_samples")
# Correct g1 kernels written apart from the instructor's, for the similarity report.
SIMILARITY_SAMPLES = Path(__file__).with_name("similarity_samples")
