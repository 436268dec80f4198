"""Gradescope's autograder contract played in a folder (AUTOGRADER_ROOT): what
tests/course/test_gradescope.py and test_submission_corpora.py grade a submission through."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

ASSIGNMENT = "g1_rect_tiles"   # the graded assignment the contract is played on


def write_upload(folder, files):
    """A submission's files in `folder`: {name: content}, content the text or bytes of a
    file, a notebook (a dict), or a callable that makes the file at the path it is given
    (a symbolic link, a FIFO)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")


def autograder_root(autograder, root, files, metadata, warm):
    """Gradescope's /autograder, laid out in `root`: the zip in source/, run_autograder
    copied beside it, the submission's files, its metadata."""
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder) as z:
        z.extractall(root / "source")
    (root / "source" / "warm-cache").symlink_to(warm)      # what setup.sh's warm step builds
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    write_upload(root / "submission", files)
    (root / "submission_metadata.json").write_text(json.dumps(metadata))


def autograder_env(root, path=None):
    return {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_PYTHON": sys.executable,
            "PATH": path or os.environ["PATH"]}


def run_autograder(autograder, root, files, metadata, warm, path=None):
    """Gradescope's contract, played in `root` (autograder_root), run_autograder run there
    as Gradescope runs it; returns (its completed process, results.json or None)."""
    autograder_root(autograder, root, files, metadata, warm)
    out = subprocess.run([shutil.which("bash"), str(root / "run_autograder")], cwd=root,
                         env=autograder_env(root, path), capture_output=True, text=True, timeout=600)
    results = root / "results" / "results.json"
    return out, json.loads(results.read_text()) if results.exists() else None


def metadata(sid, key="sid"):
    return {"id": 1, "assignment": {"title": ASSIGNMENT, "total_points": "10.0"},
            "users": [{"email": f"{sid}@example.edu" if key == "email" else "x@example.edu", "id": 99,
                       "name": "A Student", **({"sid": sid} if key == "sid" else {})}]}
