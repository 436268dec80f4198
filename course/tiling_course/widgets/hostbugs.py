"""Chapter 7's widget: the host-bug predictor (predict first), a host-side bug of the
whole program and what its recorded GPU run did."""
import html
from functools import lru_cache

from .base import NO_GUESS, build, predict

HOST_GUESSES = [NO_GUESS, "ran to the end", "stopped with an error", "crashed"]


@lru_cache(maxsize=None)
def host_bug_facts(name):
    """A host-side bug of chapter 7's program: what the recorded GPU run did (programs.json)
    and what checked mode reports now on the CPU runtime."""
    from .. import programs
    rec = (programs.records() or {}).get("bugs", {}).get(name)
    found = programs.finding(name)
    if rec is None:
        outcome, last = None, ""
    else:
        lines = (rec["stdout"] + rec["stderr"]).strip().splitlines()
        last = lines[-1] if lines else ""
        outcome = ("crashed" if rec["exit_code"] is None or rec["exit_code"] < 0 else
                   "ran to the end" if rec["exit_code"] == 0 else "stopped with an error")
    return {"what": programs.BUGS[name].what, "outcome": outcome,
            "exit_code": None if rec is None else rec["exit_code"],
            "passed": None if rec is None else rec["stdout"].count("PASSED"), "last": last,
            "finding": type(found).__name__ if found is not None else None}


def _host_bug_state(name, guess):
    from .. import programs
    f = host_bug_facts(name)
    question = f"{f['what']} Compiled with nvcc and run on the reference GPU, unchecked: what did the program do?"
    data = programs.records() or {}
    where = f"{data['device']}, {data['date']}" if data else "no GPU run recorded"
    if f["outcome"] is None:
        return predict(question, guess, "not recorded", "<p class='tc-state-text'>No GPU run recorded.</p>")
    if f["outcome"] == "crashed":
        run = f"On the GPU ({where}): the program died, with no exit code. The last line: {f['last']}"
    else:
        run = (f"On the GPU ({where}): exit code {f['exit_code']}; it printed PASSED {f['passed']} "
               f"time{'s' if f['passed'] != 1 else ''} of 2. Its last line: {f['last']}")
    checked = (f"Checked mode on the CPU runtime reports a {f['finding']}, with the line." if f["finding"] else
               "Checked mode finds nothing.")
    reveal = f"<p class='tc-state-text'>{html.escape(run)}</p><p class='tc-state-text'>{html.escape(checked)}</p>"
    return predict(question, guess, f["outcome"], reveal)


def host_bug_quiz_spec(initial=("missing copy back", NO_GUESS)):
    from .. import programs
    controls = [("bug", [(name, name) for name in programs.BUGS]), ("it", [(g, g) for g in HOST_GUESSES])]
    return ("host-bugs", "Pick a bug, predict what the unchecked program did on the GPU, then see the record and "
            "what checked mode says.", controls, _host_bug_state, initial)


def host_bug_quiz(initial=("missing copy back", NO_GUESS)):
    """A host-side bug x the reader's guess -> the stored GPU run's outcome and checked mode's
    finding (host_bug_facts)."""
    return build(host_bug_quiz_spec(initial))
