"""The grader: a submission's CUDA (tiling_course.grading.answers), run on the part's tests by
tiling_course.grading.launcher in a bubblewrap sandbox (tiling_course.grading.sandbox), judged here, outside
it, against the expected results; a Score per part with its feedback.

    judge = Judge(hidden="assignments/hidden")        # SandboxUnavailable if the sandbox cannot start
    result = judge.grade("g1_rect_tiles", answers, student_id="s123")
    result.points, result.out_of, result.feedback      # Markdown for the student
    result.log                                         # for the instructor: what the run printed

The tests: a practice part's (a1-a3) are its rubric's tiles, shapes and seed; a graded
part's (g1-g3) are hidden, in the instructor's assignments/hidden/tests.toml (seed, shapes
and which block to trace), in the student's variant. Every submission sees the same
inputs for the same variant. The sandbox receives the inputs and the CUDA; the expected
results never enter it, and nothing from it is trusted but the outputs it returns, which
are compared here. The checked run's verdicts and counts come from inside: a submission
that forged them would have to compute the right outputs too.

Every way a run can fail is a Score of 0 with its reason: no kernel, a compile error,
checked mode's findings, a hang (the rubric's time limit, then the sandbox's wall time),
a crash, an exit, a flood of output, a result the runner never sent. One submission's
failure never stops the grading of the next.
"""
import dataclasses
import json
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import cudacell
from . import launcher, sandbox, variants
from .answers import SOURCE_LIMIT  # bytes of CUDA per part (tiling_course.grading.reading keeps to it too)
from .rubric import ASSIGNMENTS
from .scoring import FINDINGS, judge_part, parse, score

# Speed requirements that read the trace of a block: run only on the tests that trace one.
TRACED_CHECKS = ("coalesced", "conflict_free", "barriers_per_phase", "one_access_updates")


@dataclass(frozen=True)
class Test:
    id: str
    shape: tuple
    params: dict               # the variant's values, and "tile" for a practice part
    seed: tuple                # the inputs' generator
    trace: tuple = ()          # blocks whose accesses checked mode records (speed requirements read them)


@dataclass
class Result:
    """A submission graded: each part's Score, and the whole as feedback."""
    assignment: str
    student: str
    scores: dict               # variable -> scoring.Score
    feedback: str              # Markdown, for the student
    log: str = ""              # for the instructor: the sandbox's outcome and what the run printed
    variant: dict = field(default_factory=dict)     # variable -> the variant it was graded in
    sections: dict = field(default_factory=dict)    # variable -> its part of the feedback
    cpu: float = 0.0           # seconds of CPU the sandboxed run said it used (for benchmarks; not checked)

    @property
    def points(self):
        return sum(s.points for s in self.scores.values())

    @property
    def out_of(self):
        return sum(s.out_of for s in self.scores.values())


def load_hidden(folder):
    """{assignment: {variable: {seed, shapes, trace}}} from folder/tests.toml."""
    path = Path(folder) / "tests.toml"
    if not path.exists():
        raise FileNotFoundError(f"no hidden tests at {path}: graded assignments are graded with the instructor's "
                                "copy of assignments/hidden/")
    return tomllib.loads(path.read_text())


def tests(part, variant, hidden=None, public=False):
    """The part's tests for this variant: a practice part's from its rubric; a graded
    part's hidden ones, or with public=True the self-check's (check_shapes)."""
    if not part.graded:
        return [Test(str(i), shape, {"tile": tile}, (part.seed, i)) for i, (tile, shape) in
                enumerate((t, s) for t in part.tiles for s in part.shapes)]
    if public:   # the self-check traces its last shape where a speed requirement reads a trace
        traced = [len(part.check_shapes) - 1] if any(t["check"] in TRACED_CHECKS for t in part.speed) else []
        spec = {"seed": 0, "shapes": part.check_shapes, "trace": traced}
    else:
        if hidden is None or part.variable not in hidden.get(part.assignment, {}):
            raise KeyError(f"no hidden tests for {part.assignment}/{part.variable}: grade graded assignments with the "
                           "instructor's assignments/hidden/ (Judge(hidden=...))")
        spec = hidden[part.assignment][part.variable]
    traced = set(spec.get("trace", ()))
    return [Test(str(i), tuple(shape), dict(variant), (spec["seed"], i), ((0, 0),) if i in traced else ())
            for i, shape in enumerate(spec["shapes"])]


def runs(part, tests_):
    """([run spec], {run id: inputs}) for the runner."""
    specs, inputs = [], {}
    for t in tests_:
        rng = np.random.default_rng(list(t.seed))
        inputs[t.id] = part.task.inputs(t.shape, t.params, rng)
        tables = [table for table in part.speed if t.trace or table["check"] not in TRACED_CHECKS]
        specs.append({"id": t.id, **part.task.launch(t.shape, t.params), "check": True,
                      "inputs": f"{part.variable}-{t.id}.npz", "outputs": list(part.task.outputs),
                      "trace": [list(b) for b in t.trace], "requirements": tables, "shape": list(t.shape),
                      "tile": t.params.get("tile"), "plain_if": list(FINDINGS)})
    return specs, inputs


# ---------------------------------------------------------------------- the grader

def _no_answer(part, why):
    return score(part, 0, 0, 0, "no kernel", f"✗ No kernel for `{part.variable}`: {why}")


def _refused_option(part, why):
    return score(part, 0, 0, 0, "option refused", f"✗ `{part.variable}` was not compiled: {why}")


# A -D option in any of NVRTC's spellings: group 1 the macro, group 2 its value (None: none).
_DEFINE = re.compile(r"(?:-D|--define-macro=?)([A-Za-z_]\w*)(?:=(.*))?", re.S)


def compile_options(answer_options, grader_options):
    """(the options to compile with, notes for the feedback) from the %%cuda line's
    options and the grader's (the variant's -D): as the magic would pass them, then the
    grader's. ValueError saying why, where an option cannot be honoured here.

    The CPU runtime's own rule decides the rest, as it does for the magic: it takes -D,
    ignores NVRTC's code-generation options (-std, -arch, -O3, -lineinfo, ...), honours
    -fmad, flushes subnormals as CuPy's -ftz=true does whatever -ftz says, and refuses what
    it does not know (cudacheck's CompileError, the same words the magic printed). A -D of a
    macro the variant sets gives way to the variant's value (the student's self-check
    compiled with it too); an -I cannot be
    honoured: the grader compiles the cell alone, with none of the student's files."""
    from cudacheck import CompileError, check_options
    grader_sets = {m.group(1): m.group(2) for m in map(_DEFINE.fullmatch, grader_options) if m}
    kept, notes = [], []
    for option in answer_options:
        define = _DEFINE.fullmatch(option)
        if define and define.group(1) in grader_sets:
            macro, value = define.groups()
            if value != grader_sets[macro]:
                notes.append(f"`{option}` on the `%%cuda` line was left out: the grader sets {macro} itself, to "
                             "your variant's value (the one your self-check compiled with).")
            continue
        if option.startswith(("-I", "--include-path")):
            raise ValueError(f"its `%%cuda` line has `{option}`, and the grader compiles the cell on its own, with no "
                             "file of yours to include. Put the header's code in the cell, and take the option out.")
        kept.append(option)
    try:
        check_options(kept)
    except CompileError as e:
        raise ValueError(f"its `%%cuda` line has an option the CPU runtime refuses, as the magic did: {e}") from None
    return kept + list(grader_options), notes


def default_warm():
    """The warm compile cache's folder: one per version of the CPU runtime's headers and of
    the compiler, under ~/.cache/tiling-course/grader/ ($XDG_CACHE_HOME), kept between runs."""
    import hashlib
    import os
    import sys

    from cudacheck import compiler_version, config, header_digest
    key = hashlib.sha256("\0".join([header_digest(), compiler_version(config.cxx), sys.version]).encode())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tiling-course" / "grader" / key.hexdigest()[:20]


class Judge:
    """Grades submissions, each in a sandbox of its own. `hidden`: the folder of the
    hidden tests (graded assignments need it); `box`: the sandbox (default: bubblewrap,
    which must start, or SandboxUnavailable); `warm`: the folder of the warm compile cache
    (default_warm()), built once by a sandboxed run of the grader's own kernel and then
    seen read-only by every submission's sandbox."""

    def __init__(self, hidden=None, box=None, warm=None, limits=None):
        import fcntl
        self.hidden = load_hidden(hidden) if hidden else None
        self.box = box or sandbox.Bubblewrap(limits)
        self.warm = Path(warm or default_warm())
        self.warm.mkdir(parents=True, exist_ok=True)
        with open(self.warm.parent / f".{self.warm.name}.lock", "a") as lock:   # one warm-up, however many graders
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (self.warm / ".ready").exists():
                self.warm.chmod(0o777)   # the sandbox's user writes it, once
                self._warm_up()
                (self.warm / ".ready").touch()
            self.warm.chmod(0o755)

    def _warm_up(self):
        """Build the runtime's objects and precompiled headers once, from the grader's own
        kernels, into the warm cache every submission's sandbox sees read-only."""
        kernel = 'extern "C" __global__ void warm({q}float* x) {{ x[threadIdx.x] += 1.0f; }}'
        spec = {"function": "warm", "options": [], "grid": [1, 1, 1], "block": [4, 1, 1], "args": [["array", "x"]],
                "outputs": ["x"], "inputs": "x.npz"}
        with tempfile.TemporaryDirectory(prefix="grader-job-") as job:
            job = Path(job)
            job.chmod(0o755)   # the sandbox's user reads it
            np.savez(job / "x.npz", x=np.zeros(4, np.float32))
            parts = []
            for q in ("", "volatile "):   # a kernel that says volatile builds the polling runtime
                (job / f"warm{len(parts)}.cu").write_text(kernel.format(q=q))
                parts.append({"variable": f"warm{len(parts)}", "source": f"warm{len(parts)}.cu",
                              "runs": [{**spec, "id": "c", "check": True}, {**spec, "id": "p", "check": False}]})
            (job / "job.json").write_text(json.dumps({"time_limit": 10, "parts": parts}))
            out = self.box.run(launcher.COMMAND, job=job, warm=self.warm, warm_writable=True,
                               limits=sandbox.Limits(wall=600, cpu=600))
        lines, done = parse(out.result)
        errors = [line["error"] for p in lines.values() for line in p.values() if line.get("error")]
        if not done or errors:
            raise sandbox.SandboxUnavailable(f"the grader's own kernel did not run in the sandbox ({out.reason()}; "
                                             f"{errors[:1]}): {out.output[-2000:]}")

    def grade(self, assignment_id, answers, student_id="", unread=None):
        """Grade one submission: `answers` maps each part's variable to its CUDA (an
        answers.Answer or a string); `unread`: {path: why} for the submission's files the
        grader did not read (answers.Found.unread), named in the feedback."""
        a = ASSIGNMENTS[assignment_id]
        scores, pending, shown, notes = {}, {}, {}, {}
        with tempfile.TemporaryDirectory(prefix="grader-job-") as job:
            job = Path(job)
            job.chmod(0o755)   # the sandbox's user reads it
            parts = []
            for part in a.parts.values():
                answer = answers.get(part.variable)
                source = getattr(answer, "source", answer)
                if getattr(answer, "problem", ""):
                    scores[part.variable] = _no_answer(part, answer.problem)
                    continue
                source = cudacell.normalize(source) if isinstance(source, str) else source
                if (source is None or source == "") and unread:
                    scores[part.variable] = _no_answer(part, "; ".join(f"`{p}` was not read: {why}"
                                                                       for p, why in unread.items()) + ".")
                    continue
                if not isinstance(source, str) or not source.strip():
                    scores[part.variable] = _no_answer(part, "the submission has no `%%cuda "
                                                       f"{part.variable}` cell (nor a {part.variable}.cu file), or it "
                                                       "is empty.")
                    continue
                if len(source.encode()) > SOURCE_LIMIT:
                    scores[part.variable] = _no_answer(part, f"its source is over {SOURCE_LIMIT // 1024} KiB.")
                    continue
                try:
                    variant = variants.of(part, student_id)
                except ValueError as e:
                    scores[part.variable] = _no_answer(part, f"{e}.")
                    continue
                shown[part.variable] = variant
                part_tests = tests(part, variant, self.hidden)
                specs, inputs = runs(part, part_tests)
                try:
                    for spec in specs:
                        spec["options"], said = compile_options(getattr(answer, "options", ()), spec["options"])
                        notes[part.variable] = list(dict.fromkeys(notes.get(part.variable, []) + said))
                except ValueError as e:
                    scores[part.variable] = _refused_option(part, str(e))
                    continue
                for spec in specs:
                    np.savez(job / spec["inputs"], **inputs[spec["id"]])
                (job / f"{part.variable}.cu").write_text(source, encoding="utf-8")
                parts.append({"variable": part.variable, "source": f"{part.variable}.cu", "runs": specs})
                pending[part.variable] = (part, part_tests, inputs)
            log, cpu = "", 0.0
            if parts:
                (job / "job.json").write_text(json.dumps({"time_limit": a.time_limit, "parts": parts}))
                n = sum(len(p["runs"]) for p in parts)
                limits = dataclasses.replace(self.box.limits, wall=self.box.limits.wall + 2 * n * a.time_limit)
                out = self.box.run(launcher.COMMAND, job=job, warm=self.warm, limits=limits)
                lines, done = parse(out.result)
                failure = "" if done else (out.reason() or "it ended before it had run every test")
                cpu = float(done.get("cpu", 0)) if done and isinstance(done.get("cpu"), (int, float)) else 0.0
                for variable, (part, part_tests, inputs) in pending.items():
                    scores[variable] = judge_part(part, part_tests, inputs, lines.get(variable, {}), failure)
                log = (f"sandbox ({self.box.name}): {out.wall:.1f} s, exit {out.exit_code}, signal {out.signal}"
                       f"{', ' + failure if failure else ''}\n{out.output[-4000:]}")
        ordered = {v: scores[v] for v in a.parts}
        parts = sections(ordered, answers, shown, student_id, notes)
        return Result(assignment_id, str(student_id), ordered, feedback(a, ordered, parts, unread or {}), log, shown,
                      parts, cpu)


def not_graded(assignment_id, student_id, why):
    """The Result of a submission the grader itself failed on: every part 0, with why."""
    a = ASSIGNMENTS[assignment_id]
    scores = {v: score(p, 0, 0, 0, "not graded", f"✗ Not graded: {why}") for v, p in a.parts.items()}
    parts = sections(scores, {}, {}, student_id, {})
    return Result(assignment_id, str(student_id), scores, feedback(a, scores, parts, {}), why, {}, parts)


def sections(scores, answers, shown, student_id, notes):
    """{variable: its part's feedback in Markdown}: where its CUDA came from, the variant it
    was graded in, notes on its %%cuda line's options, and its Score's feedback."""
    out = {}
    for variable, part_score in scores.items():
        where = getattr(answers.get(variable), "where", "")
        lines = [f"## `{variable}`" + (f" ({where})" if where else "")]
        variant = shown.get(variable)
        if variant:
            values = ", ".join(f"{k} = {v}" for k, v in variant.items() if k.isupper())
            others = ", ".join(f"{k}: {v}" for k, v in variant.items() if not k.isupper() and len(str(v)) < 12)
            lines += ["", f"Your variant (student id `{student_id}`): {values}; {others}."]
        lines += [line for note in notes.get(variable, ()) for line in ("", note)]
        out[variable] = "\n".join(lines + ["", part_score.feedback])
    return out


def feedback(assignment, scores, parts, unread):
    """The whole submission's feedback in Markdown: the total, how it was graded, the
    files not read and why, each part's section."""
    points = sum(s.points for s in scores.values())
    out_of = sum(s.out_of for s in scores.values())
    head = (f"# {assignment.title}: {points:g} / {out_of:g} points\n\n" + SUMMARY)
    if unread:
        head += "\n\nNot read from your submission:\n\n" + "\n".join(f"- `{p}`: {why}" for p, why in unread.items())
    return head + "".join(f"\n\n{parts[v]}" for v in scores) + "\n"


SUMMARY = ("Graded from the CUDA you submitted, by tests run in a sandbox on the CPU runtime; nothing else in the "
           "submission was run.")


def self_check(assignment, part, source, student_id=None):
    """The student's check in the notebook: the same tests and scoring, in this process,
    on the public tests. No sandbox: it is the student's own code on their own machine."""
    import cudacheck
    if not isinstance(source, str) or not source.strip():
        return _no_answer(part, f"`{part.variable}` is empty or was never set. Run its `%%cuda` cell.")
    try:
        variant = variants.of(part, student_id)
    except ValueError:
        return _no_answer(part, "this assignment's question depends on your student id: pass student_id=...")
    part_tests = tests(part, variant, public=True)
    specs, inputs = runs(part, part_tests)
    lines = {}
    limit, workers = cudacheck.config.time_limit, cudacheck.config.workers
    cudacheck.config.time_limit, cudacheck.config.workers = assignment.time_limit, 1
    try:
        launcher.run_part(part.variable, source, specs, lambda spec: inputs[spec["id"]],
                          lambda line: lines.setdefault((line["run"], line["mode"]), json.loads(json.dumps(line))))
    finally:
        cudacheck.config.time_limit, cudacheck.config.workers = limit, workers
    return judge_part(part, part_tests, inputs, lines)


def solution(hidden, assignment_id, variant):
    """The instructor's solution of a graded assignment (hidden/solutions/<id>.cu) for a
    variant: the file answers every variant, selected by a #define of each of the
    variant's choices (layout NT: LAYOUT_NT)."""
    text = (Path(hidden) / "solutions" / f"{assignment_id}.cu").read_text()
    defines = [f"#define {k.upper()}_{v.upper()}" for k, v in sorted(variant.items())
               if not k.isupper() and isinstance(v, str) and v.isidentifier()]
    return "\n".join(defines) + "\n" + text
