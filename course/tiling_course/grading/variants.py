"""Per-student variants of a graded assignment: the tile sizes, the operand that is
transposed, the border rule, drawn from the student's id, so that two students' answers
differ and a kernel passed around earns its receiver nothing.

    from tiling_course import variants
    variants.of(part, "s1234567")      # {"TILE_M": 16, "TILE_N": 8, "TILE_K": 4, "layout": "NT", ...}

A part's `variants` (course/tiling_course/assignments/rubrics.toml) are axes, each a list
of choices (tables); a student gets one choice per axis, the tables merged. The draw is a
hash of the assignment, the part and the id (trimmed, lower case), so it is the same on
the student's laptop, in nbgrader and on Gradescope, and needs no secret: a variant is the
question, not its answer. Macros (upper-case keys) reach the kernel as -D options; the
other keys only shape the question (what to compute), which the kernel must answer itself.
"""
import hashlib


def normalize(student_id):
    return str(student_id).strip().lower()


def of(part, student_id):
    """The variant of `part` (a grading.Part with variants) for `student_id`: one choice
    of each axis, merged into one dict; {} for a part without variants."""
    if not part.variants:
        return {}
    if not normalize(student_id):
        raise ValueError("a student id is needed to draw this assignment's variant")
    digest = hashlib.sha256(f"{part.assignment}\0{part.variable}\0{normalize(student_id)}".encode()).digest()
    chosen = {}
    for i, axis in enumerate(sorted(part.variants)):
        choices = part.variants[axis]
        pick = int.from_bytes(digest[4 * i:4 * i + 4], "big") % len(choices)
        chosen.update(choices[pick])
    return chosen


def macros(variant):
    """The variant's compile-time constants, as -D options."""
    return tuple(f"-D{k}={v}" for k, v in sorted(variant.items()) if k.isupper())


def statement(part, variant):
    """The part's statement with the variant's values filled in."""
    return part.statement.format(**variant)
