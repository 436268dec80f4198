"""Judging a graded part from what the runner sent back (tiling_course.grading.judge runs it in the
sandbox): the runner's result lines parsed, each test's outputs decoded and compared with
the expected results here, outside the sandbox, and the part's Score with its feedback.
Nothing the run sent is trusted but its outputs, which are checked as arrays of the
inputs' shapes and types."""
import base64
import json
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Score:
    points: float
    out_of: float
    items: tuple                # (rubric item, points, out of)
    verdict: str                # "full marks", "correct but racy", "correct but slow", ...
    feedback: str               # Markdown: the score, the items, the checker's message

    def _repr_markdown_(self):
        return self.feedback


def score(part, correct, clean, speed, verdict, message):
    """The Score of a part: its rubric items earned as the flags say, and the feedback."""
    got = {"correct": correct, "clean": clean and correct, "speed": speed and clean and correct}
    items = tuple((item, part.points[item] * got[item], part.points[item]) for item in ("correct", "clean", "speed")
                  if item in part.points)
    points, out_of = sum(i[1] for i in items), sum(i[2] for i in items)
    rows = "\n".join(f"| {_ITEMS[item]} | {p:g} / {m:g} |" for item, p, m in items)
    feedback = (f"**{part.title}: {points:g} / {out_of:g} points ({verdict})**\n\n| rubric item | points |\n"
                f"|---|---|\n{rows}\n\n{message}")
    return Score(float(points), float(out_of), items, verdict, feedback)


_ITEMS = {"correct": "correct on every test (a run against NumPy)",
          "clean": "checked mode finds no race, out-of-bounds access or divergent barrier",
          "speed": "meets the speed requirement (checked mode's counts and trace)"}


# Checked mode's findings in a kernel whose plain run may still compute the right result.
FINDINGS = ("SharedMemoryRaceError", "GlobalMemoryRaceError", "BarrierDivergenceError", "WarpDivergenceError",
            "UninitializedReadError")


def _decode(entry, like):
    """An output sent by the runner as an array shaped and typed like `like` (what was
    sent in), or None if it is not one."""
    try:
        data = base64.b64decode(entry["data"], validate=True)
        if len(data) != like.nbytes:
            return None
        return np.frombuffer(data, dtype=like.dtype).reshape(like.shape)
    except (KeyError, TypeError, ValueError):
        return None


def _outputs(part, line, inputs):
    got = {}
    for name in part.task.outputs:
        array = _decode((line.get("outputs") or {}).get(name) or {}, inputs[name])
        if array is None:
            return None
        got[name] = array
    return got


_VERDICTS = {"CompileError": "does not compile", "KernelTimeoutError": "does not finish",
             "OutOfBoundsError": "out of bounds", "UnsupportedFeatureError": "uses what the CPU runtime refuses",
             "KernelCrashError": "crashes", "ArgumentError": "takes the wrong arguments",
             "LaunchConfigError": "cannot be launched so"}
_FOUND = {"SharedMemoryRaceError": "racy", "GlobalMemoryRaceError": "racy",
          "BarrierDivergenceError": "with a divergent barrier",
          "WarpDivergenceError": "with a divergent warp operation",
          "UninitializedReadError": "reading uninitialized shared memory"}


def judge_part(part, tests_, inputs, lines, failure=""):
    """The part's Score from the runner's result lines ({(run, mode): line}); `failure`:
    why the run ended early, if it did (a part whose lines stop short scores 0 with it)."""
    task, name = part.task, part.task.function
    place = "the CPU runtime in checked mode"
    finding, slow = None, None

    def stopped(test):
        why = failure or "the run ended before it sent this test's result"
        return score(part, 0, 0, 0, _stop_verdict(failure),
                     f"✗ The grader could not finish running `{name}`: {why}. The test it was on: "
                     f"{task.describe(test.shape)}. Nothing your kernel did outside that run was kept.")

    for t in tests_:
        on = task.describe(t.shape)
        line = lines.get((t.id, "checked"))
        if line is None:
            return stopped(t)
        error = line.get("error")
        if error:
            kind, message = str(error.get("kind")), str(error.get("message"))
            if kind not in FINDINGS:
                return score(part, 0, 0, 0, _VERDICTS.get(kind, kind),
                             f"✗ `{name}` on {on}, {place}: **{kind}**\n\n```text\n{message}\n```")
            plain = lines.get((t.id, "plain"))
            if plain is None:
                return stopped(t)
            text = f"✗ `{name}` on {on}, {place}: **{kind}**\n\n```text\n{message}\n```"
            if plain.get("error"):
                return score(part, 0, 0, 0, _FOUND[kind], text + f"\n\nA plain run is wrong too: "
                             f"{plain['error'].get('kind')} on {on}.")
            got = _outputs(part, plain, inputs[t.id])
            wrong = task.compare(got, inputs[t.id], t.params) if got is not None else {"count": "all"}
            if wrong:
                return score(part, 0, 0, 0, _FOUND[kind], text + "\n\nA plain run is wrong too: "
                             f"{wrong['count']} of {wrong.get('total', 'its')} elements differ on {on}.")
            finding = finding or (kind, text)
            continue
        got = _outputs(part, line, inputs[t.id])
        if got is None:
            return score(part, 0, 0, 0, "no result", f"✗ `{name}` on {on}: the run sent back no {task.result}.")
        wrong = task.compare(got, inputs[t.id], t.params)
        if wrong:
            a = wrong["array"]
            element = wrong.get("element", f"{a}[{wrong['row']}][{wrong['col']}]")
            return score(part, 0, 0, 0, "wrong values",
                         f"✗ `{name}` on {on}, {place}: {wrong['count']} of {wrong['total']} elements of {a} "
                         f"differ from {task.reference}. {element} should be {wrong['expected']:.6g} but is "
                         f"{wrong['got']:.6g}.")
        if finding or slow:
            continue
        unmet = line.get("unmet") or task.speed(line.get("counts") or [], t.shape, t.params)
        if unmet:
            slow = f"✗ `{name}` on {on} computes the right {task.result}, but {unmet}"
    if finding:
        return score(part, 1, 0, 0, f"correct but {_FOUND[finding[0]]}", finding[1] +
                     f"\n\nA plain run computes the right {task.result} on every test: the kernel is correct "
                     "here by luck of the schedule, and a GPU may do the same, but checked mode found the bug.")
    if slow:
        return score(part, 1, 1, 0, "correct but slow", slow)
    shapes = ", ".join(task.describe(t.shape) for t in tests_)
    speed = ", and it meets the speed requirement" if "speed" in part.points else ""
    return score(part, 1, 1, 1, "full marks", f"✓ `{name}` computes the right {task.result} on {shapes}, "
                 f"run on {place}: no out-of-bounds access, race, divergent barrier or uninitialized "
                 f"read{speed}.")


def _stop_verdict(failure):
    for words, verdict in (("did not finish", "did not finish"), ("printed", "printed too much"),
                           ("wrote more", "printed too much"), ("ended by", "crashed"), ("exited", "exited")):
        if words in failure:
            return verdict
    return "stopped"


def parse(result):
    """The runner's result lines as {part: {(run, mode): line}}, and its last line ({"done":
    true, ...}) or None.
    Lines that are not JSON objects of the runner's form are dropped; a (run, mode) seen
    twice keeps its first."""
    out, done = {}, None
    for raw in result.decode("utf-8", "replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict):
            continue
        if line.get("done") is True:
            done = line
            continue
        if not all(isinstance(line.get(k), str) for k in ("part", "run", "mode")):
            continue
        if line.get("error") is not None and not isinstance(line.get("error"), dict):
            continue
        out.setdefault(line["part"], {}).setdefault((line["run"], line["mode"]), line)
    return out, done
