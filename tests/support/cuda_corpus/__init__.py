"""The differential corpus: every `cases_*.py` module here defines CASES (see case.py)."""
import importlib
import pkgutil


def all_cases():
    cases = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("cases_"):
            cases.extend(importlib.import_module(f"{__name__}.{info.name}").CASES)
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"corpus case names must be unique: {sorted(dup)}")
    return cases
