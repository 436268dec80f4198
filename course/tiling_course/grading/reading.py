"""Reading a submission for grading, inside a sandbox: the walk of the upload
(tiling_course.grading.submission) and the extraction of each part's CUDA (tiling_course.grading.answers)
run in a bubblewrap sandbox that sees the submission folder alone, read-only
(sandbox.Bubblewrap.read), and send back JSON that the grader parses strictly.

    found = reading.answers(box, folder, variables)   # Gradescope: an answers.Found, read in the sandbox
    files = reading.files(box, folder)                # nbgrader: a submission.Files of what to copy

The walk follows no link and reads only regular files; the sandbox is the second wall:
were the walk ever to follow a link, it would find nothing behind it (no hidden tests,
no grader's file, no /etc). What comes back is data from a process that read hostile
files, so it is parsed as such: at most a bounded size, JSON with the one shape the
reader writes (paths relative and inside the upload, sources within the judge's limit),
and anything else (a reader that fails, hangs, floods or returns something else) is the
submission's 0 with its reason, never an exception: answers() gives every part that
reason as its problem, files() raises Unreadable, which the nbgrader path turns into a
notebook that is graded 0 with the reason.

The notebook's self-check and the similarity report read in-process (answers.from_folder):
no grade depends on them.

In the sandbox: `python -m tiling_course.grading.reading answers VARIABLE...` or `... files`
reads $GRADER_SUBMISSION and prints one JSON object on its standard output.
"""
import base64
import binascii
import json
import os
import sys
from dataclasses import replace

from . import answers as answers_
from . import submission

READER = ["python", "-m", "tiling_course.grading.reading"]   # the command the sandbox runs (tests swap it)
UNREAD_SHOWN = 100            # unread names sent back (then one "..." entry says how many more)
TEXT = 8192                   # characters of a path, a place or a reason
OPTIONS = 256                 # options of one %%cuda line
ANSWERS_RESULT = 4 << 20      # bytes of the answers' JSON (a few parts of at most 64 KiB each)
# the files' JSON: every byte of the submission in base64, and room for the names
FILES_RESULT = submission.Limits().total * 4 // 3 + (8 << 20)


class Unreadable(Exception):
    """The sandboxed reading failed, or sent back something the reader never writes; the
    message says why, for the student; .log holds what the sandbox printed, for the
    instructor."""

    def __init__(self, why, log=""):
        super().__init__(why)
        self.log = log


# ------------------------------------------------------------------ inside the sandbox

def _capped(unread):
    items = list(unread.items())
    out = {path[:TEXT]: why[:TEXT] for path, why in items[:UNREAD_SHOWN]}
    if len(items) > UNREAD_SHOWN:
        out["..."] = f"and {len(items) - UNREAD_SHOWN} more files not read"
    return out


def _answers_here(folder, variables):
    found = answers_.from_folder(folder, variables)
    out = {}
    for variable, a in found.items():
        source, problem = a.source, a.problem
        if len(source.encode()) > answers_.SOURCE_LIMIT:
            source, problem = "", problem or f"its source is over {answers_.SOURCE_LIMIT // 1024} KiB."
        out[variable] = {"source": source, "where": a.where[:TEXT], "options": [o[:TEXT] for o in a.options[:OPTIONS]],
                         "problem": problem[:TEXT]}
    return {"answers": out, "unread": _capped(found.unread)}


def _files_here(folder):
    """Every regular file of the upload (a notebook without its byte-order mark, and only
    if it is one: a notebook that is not is unread, with why)."""
    files = submission.read_folder(folder, wanted=lambda name: True)
    unread = {path: why for path, why in files.unread.items() if path.endswith(".ipynb")}
    read = {}
    for path, data in files.read.items():
        if path.endswith(".ipynb"):
            data = data.removeprefix(b"\xef\xbb\xbf")
            try:
                answers_.from_notebook(data, ())
            except answers_.Unreadable as e:
                unread[path] = str(e)
                continue
        read[path] = base64.b64encode(data).decode("ascii")
    return {"read": read, "unread": _capped(unread)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    folder = os.environ.get("GRADER_SUBMISSION", "/submission")
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")   # the result; anything else printed goes to stderr
    os.dup2(2, 1)
    if argv[:1] == ["answers"]:
        result = _answers_here(folder, tuple(argv[1:]))
    elif argv == ["files"]:
        result = _files_here(folder)
    else:
        print("usage: python -m tiling_course.grading.reading answers VARIABLE... | files", file=sys.stderr)
        return 2
    json.dump(result, out, ensure_ascii=True, separators=(",", ":"))
    out.close()
    return 0


# ------------------------------------------------------------------ in the grader

def _limits(result):
    from .sandbox import Limits
    return replace(Limits(), wall=60.0, cpu=30, memory=1 << 30, processes=16, files=64, file_size=1 << 20,
                   scratch=16 << 20, output=64 << 10, result=result)


def _run(box, folder, args, result):
    """The reader's parsed JSON, or Unreadable."""
    out = box.read([*READER, *args], folder, _limits(result))
    log = f"reading sandbox: {out.wall:.1f} s, exit {out.exit_code}, signal {out.signal}\n{out.output[-4000:]}"
    if out.timed_out or out.flooded or out.signal is not None:
        raise Unreadable(out.reason().replace("it ", "the reader ", 1), log)
    if out.exit_code:
        raise Unreadable(f"the reader exited with status {out.exit_code}", log)
    if len(out.result) > result:
        raise Unreadable(f"the reader's result is over {result >> 20} MiB", log)
    try:
        return json.loads(out.result.decode("utf-8")), log
    except (ValueError, RecursionError) as e:   # UnicodeDecodeError is a ValueError
        raise Unreadable(f"the reader's result is not JSON ({str(e)[:120]})", log) from None


def _text(x, what):
    if not isinstance(x, str) or len(x) > TEXT or "\0" in x:
        raise ValueError(f"{what} is not a string of at most {TEXT} characters")
    return x


def _path(x, what, folder_ok=False):
    """A relative path inside the upload: no leading /, no . or .. part, no empty part."""
    _text(x, what)
    parts = (x[:-1] if folder_ok and x.endswith("/") else x).split("/")
    if x.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{what} {x[:80]!r} is not a path inside the submission")
    return x


def _dict(x, what, keys=None):
    if not isinstance(x, dict) or (keys is not None and set(x) != set(keys)):
        raise ValueError(f"{what} is not an object" + (f" of {', '.join(sorted(keys))}" if keys else ""))
    return x


def _unread(x):
    _dict(x, "unread")
    if len(x) > UNREAD_SHOWN + 1:
        raise ValueError(f"more than {UNREAD_SHOWN + 1} unread names")
    return {_path(p, "an unread name", folder_ok=True) if p != "..." else p: _text(why, "a reason")
            for p, why in x.items()}


def parse_answers(obj, variables):
    """answers.Found from the reader's JSON; ValueError if it is not of the reader's shape."""
    _dict(obj, "the result", ("answers", "unread"))
    found = answers_.Found(unread=_unread(obj["unread"]))
    for variable, a in _dict(obj["answers"], "answers").items():
        if variable not in variables:
            raise ValueError(f"an answer to {variable[:40]!r}, which is not a part")
        _dict(a, "an answer", ("source", "where", "options", "problem"))
        if not isinstance(a["source"], str) or len(a["source"].encode()) > answers_.SOURCE_LIMIT:
            raise ValueError(f"a source is not a string of at most {answers_.SOURCE_LIMIT // 1024} KiB")
        options = a["options"]
        if not isinstance(options, list) or len(options) > OPTIONS:
            raise ValueError("options are not a list")
        found[variable] = answers_.Answer(variable, a["source"], _text(a["where"], "a place"),
                                          tuple(_text(o, "an option") for o in options),
                                          _text(a["problem"], "a problem"))
    return found


def parse_files(obj):
    """submission.Files from the reader's JSON; ValueError if it is not of the reader's shape."""
    _dict(obj, "the result", ("read", "unread"))
    files = submission.Files(unread=_unread(obj["unread"]))
    total = 0
    for path, data in _dict(obj["read"], "read").items():
        _path(path, "a file's name")
        if not isinstance(data, str):
            raise ValueError("a file's bytes are not base64")
        try:
            files.read[path] = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a file's bytes are not base64") from None
        total += len(files.read[path])
        if path.endswith(".ipynb"):   # the reader sends only notebooks nbgrader can open
            try:
                answers_.from_notebook(files.read[path], ())
            except answers_.Unreadable:
                raise ValueError(f"{path[:80]!r} is not a notebook") from None
    if total > submission.Limits().total:
        raise ValueError(f"files over {submission.Limits().total >> 20} MiB together")
    return files


def answers(box, folder, variables):
    """answers.Found of the submission in `folder`, read in box's reading sandbox. Where
    the reading fails or its result is not the reader's, every part's Answer has that as
    its problem (a 0 with the reason); Found.log says what happened, for the instructor."""
    variables = tuple(variables)
    try:
        obj, log = _run(box, folder, ["answers", *variables], ANSWERS_RESULT)
        try:
            found = parse_answers(obj, variables)
        except ValueError as e:
            raise Unreadable(f"the reader's result is not of its shape ({e})", log) from None
    except Unreadable as e:
        found = answers_.Found({v: answers_.Answer(v, "", "", problem=failed(e)) for v in variables})
        found.log = e.log
        return found
    found.log = log
    return found


def files(box, folder):
    """submission.Files of the submission in `folder` (what nbgrader's copy of it holds),
    read in box's reading sandbox; Unreadable, with the reason, where that fails."""
    obj, log = _run(box, folder, ["files"], FILES_RESULT)
    try:
        return parse_files(obj)
    except ValueError as e:
        raise Unreadable(f"the reader's result is not of its shape ({e})", log) from None


def failed(e):
    """The student's words for a failed reading."""
    return (f"the submission could not be read ({e}); the grader reads submissions in a sandbox, and nothing of "
            "this one was graded. Submit again; if this happens again, tell your instructor.")


if __name__ == "__main__":
    sys.exit(main())
