"""The similarity report of a class: the pairs of submissions whose kernels share most of
their code, for the instructor to look at after a batch is graded.

    cd assignments
    python -m tiling_course.grading similarity g1_rect_tiles            # nbgrader: submitted/*/g1_rect_tiles/
    python -m tiling_course.grading similarity g1_rect_tiles --gradescope export.zip   # "Download Submissions"
    python -m tiling_course.grading similarity g1_rect_tiles --threshold 0.5 --out similar.md

Each submission's answer to each part is read by tiling_course.grading.answers, as the grader
reads it, and compared with every other submission's answer to that part by winnowing
(copydetect's implementation of MOSS's algorithm: Schleimer, Wilkerson and Aiken, SIGMOD
2003) over the token stream of tiling_course.grading.cudatokens, in which comments, layout, the
names a student chose and every literal are normalised away: renaming the variables,
re-commenting the kernel or changing a `#define`'s value does not hide a copy.

Code that every student was given is subtracted first, as copydetect's boilerplate: the
released template (the part's %%cuda cell as the students got it: its `#ifndef` defaults
and the kernel's signature) and the book's kernels (kernels/*.cu), which the chapters
teach and the assignments build on. Without them, two honest students who both start
from the book's tiled kernel share its phases, barriers and guarded write, and the
instructor's own g1 solution holds 95% of the book's `tiled_bounds` (67% of its own code):
every pair would look alike. Per-student variants need nothing more: a variant reaches
the kernel as -D options (TILE_M, RADIUS...), which are not in the source, and its layout
or border rule changes names and literals (`A[r * k + c]` against `A[c * m + r]`), which
the token stream reads alike; so a friend's kernel adapted to another variant is still
listed, and two honest students are not brought closer by theirs.

A pair's similarity is the larger of its two shares: the part of one kernel's own code
(what is left after the given code) that the other contains. A pair at or above the
threshold (THRESHOLD unless --threshold) is listed with the lines and the number of tokens
they share. A listed pair is a reason to read both kernels, not a verdict: a short kernel
is contained in a longer one sooner, which the count of shared tokens shows.
"""
import argparse
import io
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import sources
from . import answers, cudatokens, rubric, submission

NOISE = 12          # tokens: a shared run shorter than this is noise (copydetect's noise threshold, k)
# Every k-gram is a fingerprint (a window of 1: copydetect's default, its guarantee threshold
# equal to its noise threshold). A wider window keeps the smallest hash of each window, and
# copydetect hashes with Python's hash(), seeded afresh in each process: with a window of 5
# the if/else copy of the tests shared from 52% to 65% over 12 runs, and the report would
# change from one run to the next. A kernel is a few hundred tokens, so keeping them all
# costs little (the 300 of the benchmark: seconds).
WINDOW = 1
# The share of a kernel's own code from which a pair is listed. Measured on g1 (the tests list
# these pairs, or not): a friend's copy with its names, #define values and comments changed
# shares 100%; one also cut down to its own layout 73%, one with its ternaries rewritten as
# if/else 62%; independent correct kernels share 10% at most (95% before the book's kernels
# are subtracted: the instructor's solution and the book's tiled_bounds).
THRESHOLD = 0.5


@dataclass(frozen=True)
class Kernel:
    """One submission's answer to one part, fingerprinted."""
    who: str                  # the student (nbgrader) or the submission and its submitters (Gradescope)
    answer: answers.Answer
    tokens: list              # cudatokens.Token, in order
    fingerprint: object       # copydetect.CodeFingerprint (imported where one is made: _fingerprint)


@dataclass(frozen=True)
class Pair:
    similarity: float         # the larger of the two shares
    first: Kernel
    second: Kernel
    shares: tuple             # (the share of first's own code in second, and the reverse)
    tokens: int               # how many of first's tokens the two share
    lines: tuple              # (first's shared line ranges, second's): ((start, end), ...)


@dataclass(frozen=True)
class PartReport:
    assignment: str
    variable: str
    threshold: float
    compared: tuple           # Kernel, one per submission with an answer of its own
    not_compared: tuple       # (who, why) of the others
    pairs: tuple              # Pair at or above the threshold, most similar first

    def markdown(self):
        title = rubric.part(self.assignment, self.variable).title
        lines = [f"## {self.assignment}: {title} (`{self.variable}`)", "",
                 f"{len(self.compared)} submissions compared, {len(self.pairs)} pairs at or above "
                 f"{self.threshold:.0%} of a kernel's own code (the released template and the book's kernels "
                 f"subtracted)."]
        if self.not_compared:
            lines += ["", "Not compared: " + "; ".join(f"{who} ({why})" for who, why in self.not_compared) + "."]
        if self.pairs:
            lines += ["", "| similarity | shared tokens | submission | its shared lines | submission | its shared "
                      "lines |", "|---|---|---|---|---|---|"]
            for p in self.pairs:
                lines.append(f"| {p.similarity:.0%} ({p.shares[0]:.0%} / {p.shares[1]:.0%}) | {p.tokens} "
                             f"| {_named(p.first)} | {_ranges(p.lines[0])} "
                             f"| {_named(p.second)} | {_ranges(p.lines[1])} |")
        return "\n".join(lines) + "\n"


def _named(kernel):
    """Who handed a kernel in and where it was, for a table cell (a name may hold a |)."""
    return f"{kernel.who} ({kernel.answer.where})".replace("|", "\\|")


def _ranges(spans):
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


class _Alphabet(dict):
    """One character per distinct token, so that copydetect's k-grams of characters are
    k-grams of tokens (copydetect's own filter keeps keywords as words and literals as
    written, so its k would count letters, and a changed number would change its hashes)."""

    def __missing__(self, token):
        self[token] = chr(0xE000 + len(self))     # Unicode's private use area and beyond: no surrogates
        return self[token]

    def encode(self, tokens):
        return "".join(self[t.text] for t in tokens)


def _fingerprint(name, tokens, alphabet, given=frozenset()):
    """copydetect's fingerprint of a token stream, the hashes of the given code taken out.
    (copydetect 0.5.0's own boilerplate filter, np.intersect1d with assume_unique=True over
    hashes that repeat, also drops a kernel's repeated fingerprints that the given code does
    not have; so the subtraction is done here.)"""
    # copydetect (26 MB of modules) is imported where a report is made, not with this module:
    # the grader's other commands go without it, and so do the test processes, whose every
    # kernel launch forks them (logs/2026-12-07-suite-time-7.md).
    from copydetect import CodeFingerprint
    from copydetect.utils import get_token_coverage
    text = alphabet.encode(tokens)
    fp = CodeFingerprint(name, NOISE, WINDOW, filter=False, fp=io.StringIO(text))
    if given:
        fp.hash_idx = {h: idx for h, idx in fp.hash_idx.items() if h not in given}
        fp.hashes = set(fp.hash_idx)
        fp.token_coverage = get_token_coverage(fp.hash_idx, NOISE, len(text))
    return fp


def _line_spans(slices, tokens):
    """copydetect's slices (token starts, token ends) as merged source line ranges."""
    spans = []
    for start, end in zip(slices[0].astype(int), slices[1].astype(int)):
        first, last = tokens[start].line, tokens[end - 1].line
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    return tuple(spans)


def compare(assignment_id, variable, submissions, given, threshold=THRESHOLD):
    """The PartReport of one part: `submissions` {who: Answer or None}, `given` the sources
    every student was given (the part's released template, the book's kernels)."""
    alphabet = _Alphabet()
    given_hashes = frozenset().union(*(_fingerprint("given", cudatokens.normalized(text), alphabet).hashes
                                       for text in given))
    kernels, skipped = [], []
    for who, answer in submissions.items():
        if answer is None or answer.problem:
            skipped.append((who, answer.problem if answer else "no answer"))
            continue
        tokens = cudatokens.normalized(answer.source)
        fp = _fingerprint(who, tokens, alphabet, given_hashes)
        if fp.hashes:
            kernels.append(Kernel(who, answer, tokens, fp))
        else:
            skipped.append((who, "nothing beyond the template and the book's kernels"))
    from copydetect import compare_files
    pairs = []
    for i, first in enumerate(kernels):
        for second in kernels[i + 1:]:
            if len(first.fingerprint.hashes & second.fingerprint.hashes) == 0:
                continue
            overlap, shares, slices = compare_files(first.fingerprint, second.fingerprint)
            similarity = float(max(shares))
            if similarity >= threshold:
                pairs.append(Pair(similarity, first, second, tuple(float(s) for s in shares), int(overlap),
                                  (_line_spans(slices[0], first.tokens), _line_spans(slices[1], second.tokens))))
    pairs.sort(key=lambda p: (-p.similarity, p.first.who, p.second.who))
    return PartReport(assignment_id, variable, threshold, tuple(kernels), tuple(skipped), tuple(pairs))


def report(assignment_id, class_answers, templates, threshold=THRESHOLD):
    """[PartReport] per part: `class_answers` {who: {variable: Answer}}, `templates`
    {variable: released source}."""
    book = [path.read_text(encoding="utf-8") for path in sources.files()]
    return [compare(assignment_id, variable, {who: found.get(variable) for who, found in class_answers.items()},
                    [templates[variable], *book], threshold)
            for variable in _graded(assignment_id).parts]


def _graded(assignment_id):
    """The assignment, if the report means something for it: a ValueError otherwise."""
    if assignment_id not in rubric.ASSIGNMENTS:
        raise ValueError(f"no assignment {assignment_id!r}; the assignments are {', '.join(rubric.ASSIGNMENTS)}")
    a = rubric.ASSIGNMENTS[assignment_id]
    if not a.graded:
        raise ValueError(f"{assignment_id} is a practice assignment: its answers are the book's own kernels, so every "
                         f"pair would look alike. The report is for the graded assignments "
                         f"({', '.join(i for i, x in rubric.ASSIGNMENTS.items() if x.graded)}).")
    return a


# ---------------------------------------------------------------- where the answers come from

def templates(course, assignment_id):
    """{variable: source} of the released template: each part's %%cuda cell of the course's
    source notebook (source/<id>/<id>.ipynb), its solution region taken out as nbgrader's
    generate_assignment takes it out."""
    a = _graded(assignment_id)
    notebook = Path(course) / "source" / assignment_id / f"{assignment_id}.ipynb"
    if not notebook.is_file():
        raise FileNotFoundError(f"{notebook} not found: run this from the nbgrader course directory (the "
                                f"repository's assignments/), or give --course")
    found = answers.from_notebook(notebook.read_text(encoding="utf-8"), a.parts, name=notebook.name)
    missing = sorted(set(a.parts) - set(found))
    if missing:
        raise ValueError(f"{notebook} has no %%cuda cell for {', '.join(missing)}")
    return {v: _released(answer.source) for v, answer in found.items()}


def _released(source):
    """The lines of `source` outside its BEGIN SOLUTION ... END SOLUTION regions."""
    kept, inside = [], False
    for line in source.split("\n"):
        if "BEGIN SOLUTION" in line:
            inside = True
        elif "END SOLUTION" in line:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def nbgrader_class(submitted, assignment_id):
    """{student: {variable: Answer}} from nbgrader's submitted/<student>/<assignment>/."""
    parts = _graded(assignment_id).parts
    folders = sorted(p for p in Path(submitted).glob(f"*/{assignment_id}") if p.is_dir())
    if not folders:
        raise FileNotFoundError(f"no submissions of {assignment_id} in {submitted} (nbgrader's "
                                f"submitted/<student>/{assignment_id}/: run nbgrader collect or zip_collect first)")
    return {folder.parent.name: answers.from_folder(folder, parts) for folder in folders}


# Gradescope's export: one folder per submission (submission_<id>/, the student's files) and
# submission_metadata.yml, which names each folder's submitters (":submitters": [{":name",
# ":sid", ":email"}]), all under assignment_<id>_export/ in the zip.
_EXPORT_SUFFIXES = (".ipynb", ".cu")


def gradescope_class(export, assignment_id):
    """{submission and its submitters: {variable: Answer}} from Gradescope's "Download
    Submissions": the zip, or the folder it unpacks to."""
    parts = _graded(assignment_id).parts
    export = Path(export)
    if export.is_dir():
        return _export_folder(export, parts)
    if not zipfile.is_zipfile(export):
        raise ValueError(f"{export} is neither a folder nor a zip (Gradescope's \"Download Submissions\")")
    with tempfile.TemporaryDirectory(prefix="similarity-") as tmp, zipfile.ZipFile(export) as z:
        # Only what the answers are read from, each no larger than the grader reads: a zip of the
        # class's files may hold anything. ZipFile.extract keeps every path inside tmp, and
        # writes a link as a small file, which answers then reads as no answer.
        for info in z.infolist():
            if (info.filename.endswith(_EXPORT_SUFFIXES + ("submission_metadata.yml",)) and not info.is_dir()
                    and info.file_size <= submission.Limits.file):
                z.extract(info, tmp)
        return _export_folder(Path(tmp), parts)


def _export_folder(folder, parts):
    submissions = sorted(p for p in folder.rglob("submission_*") if p.is_dir())
    if not submissions:
        raise FileNotFoundError(f"no submission_* folders in {folder}: is it Gradescope's \"Download Submissions\"?")
    names = _submitters(next(folder.rglob("submission_metadata.yml"), None))
    return {f"{p.name} {names[p.name]}" if p.name in names else p.name: answers.from_folder(p, parts)
            for p in submissions}


def _submitters(metadata):
    """{submission folder: "(name, sid; ...)"} from submission_metadata.yml ({} without it)."""
    if metadata is None:
        return {}
    import yaml
    data = yaml.safe_load(metadata.read_text(encoding="utf-8")) or {}
    out = {}
    for folder, entry in data.items():
        people = (entry or {}).get(":submitters") or []
        who = "; ".join(", ".join(str(p[k]) for k in (":name", ":sid", ":email") if p.get(k))
                        for p in people if isinstance(p, dict))
        if who:
            out[str(folder)] = f"({who})"
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tiling_course.grading similarity",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("assignment", help="a graded assignment's id (g1_rect_tiles, ...)")
    ap.add_argument("--course", default=".", help="the nbgrader course directory, with source/ (default: here)")
    ap.add_argument("--gradescope", metavar="EXPORT", default=None,
                    help="Gradescope's \"Download Submissions\" zip or its folder (default: nbgrader's submitted/)")
    ap.add_argument("--threshold", type=float, default=THRESHOLD,
                    help=f"list pairs sharing at least this part of a kernel's own code (default: {THRESHOLD})")
    ap.add_argument("--out", default=None, help="also write the report to this Markdown file")
    args = ap.parse_args(argv)
    if not 0 < args.threshold <= 1:
        ap.error(f"--threshold is a share of a kernel, in (0, 1]: not {args.threshold}")
    try:
        given = templates(args.course, args.assignment)
        found = (gradescope_class(args.gradescope, args.assignment) if args.gradescope
                 else nbgrader_class(Path(args.course) / "submitted", args.assignment))
        parts = report(args.assignment, found, given, args.threshold)
    except (OSError, ValueError) as e:
        ap.exit(2, f"{ap.prog}: {e}\n")
    text = f"# Similarity report: {args.assignment}\n\n" + "\n".join(p.markdown() for p in parts)
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0

