"""Value exercises' answers: the rule that accepts a number (the package's docstring), the
geometric grid it rounds to, and the salted hashes by which the student edition checks an
answer it does not hold."""
import contextlib
import hashlib
import io
import math
from functools import lru_cache


def grid_point(value, tolerance):
    """The point of the answers' grid (the package's docstring) that `value` rounds to: the
    whole number itself for tolerance 0, else the exponent j of (1 + tolerance/8)**j.
    ValueError for a value that has none (not whole with tolerance 0, not positive)."""
    value = float(value)
    if tolerance == 0:
        if not math.isfinite(value) or abs(value - round(value)) > 1e-9:
            raise ValueError(f"{value!r}: an answer checked exactly is a whole number")
        return round(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{value!r}: an answer checked within a tolerance is a positive number")
    return round(math.log(value) / math.log1p(tolerance / 8))


def points_near(got, tolerance):
    """The grid points whose value lies within `tolerance` (relative) of the answer `got`."""
    if tolerance == 0:
        return [round(got)] if abs(got - round(got)) <= 1e-9 else []
    if got <= 0 or tolerance >= 1:
        return []
    step = math.log1p(tolerance / 8)
    lo = math.ceil(math.log(got / (1 + tolerance)) / step)
    hi = math.floor(math.log(got / (1 - tolerance)) / step)
    return list(range(lo, hi + 1))


def answer_hash(exercise_id, salt, point):
    """The student edition's hash of grid point `point` of exercise `exercise_id`."""
    return hashlib.sha256(f"{salt}:{exercise_id}:{point}".encode()).hexdigest()


def expected(ex):
    """What value exercise `ex`'s solution sets its variable to (the instructor's edition:
    the student edition's exercises have no solution)."""
    return _run(ex.solution.text(), ex.variable)


def accepts(ex, got):
    """Whether the number `got` answers value exercise `ex` (the package's docstring's rule)."""
    near = points_near(got, ex.tolerance)
    if ex.solution is None:
        return any(answer_hash(ex.id, ex.salt, j) == ex.answer_sha256 for j in near)
    return grid_point(expected(ex), ex.tolerance) in near


@lru_cache(maxsize=None)
def _run(code, variable):
    # The solution prints for the reader who runs it, not for check()'s output; and its
    # checked runs take seconds, so each code runs once.
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, f"<the solution that sets {variable}>", "exec"), namespace)
    return namespace[variable]
