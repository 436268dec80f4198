"""The Gradescope autograder's setup.sh (tiling_course.grading.gradescope.SETUP), run here.

Its choice of Python and what it asks apt-get for are played with stand-ins on PATH (an
Ubuntu 22.04 whose python3 is 3.10, a 24.04 whose python3 lacks venv, an apt-get that
cannot install): Gradescope's images and Ubuntu's archive are not reachable from here,
and apt-get must not change this machine. Then, slow, the real thing on this Debian
machine: the exported zip unpacked into a folder laid out like /autograder, setup.sh run
there (a fresh venv, the pinned dependencies from the registry, the export's own wheel,
the warm compile cache), and run_autograder on a correct submission, with nothing of this
checkout on its path. What no test here runs: apt-get itself on a real Ubuntu image."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT
from tiling_course.grading import gradescope, judge, rubric, variants

ASSIGNMENT, VARIABLE = "g1_rect_tiles", "rect_src"
HIDDEN = ROOT / "assignments" / "hidden"


def stub(path, body):
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)


def python_stub(path, version, log, venv_flag=None):
    """A Python that reports `version`, passes setup.sh's version check if it is 3.11 or
    newer, has ensurepip while `venv_flag` exists (always without one), and logs its
    calls; its `-m venv` stops setup.sh there (status 3), having shown which Python made
    the venv."""
    recent = tuple(map(int, version.split(".")[:2])) >= (3, 11)
    has_venv = f'[ -e "{venv_flag}" ]' if venv_flag else "true"
    stub(path, f"""echo "$(basename "$0") $*" >> "{log}"
case "$1" in
  -V) echo "Python {version}";;
  -c) {"exit 0" if recent else "exit 1"};;
  -m) case "$2" in ensurepip) {has_venv} || exit 1;; venv) exit 3;; esac;;
esac
""")


@pytest.fixture
def ubuntu(tmp_path):
    """A PATH of stand-ins (bash and basename real; g++, bwrap and setpriv present) and the
    log that the stand-ins write."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("bash", "basename"):
        (bin_ / tool).symlink_to(shutil.which(tool))
    for tool in ("g++", "bwrap", "setpriv"):
        stub(bin_ / tool, "exit 0\n")
    return bin_, tmp_path / "calls.log"


def run_setup(bin_, root):
    (root / "setup.sh").write_text(gradescope.SETUP)
    return subprocess.run(["/bin/bash", str(root / "setup.sh")], capture_output=True, text=True, timeout=60,
                          env={"PATH": str(bin_), "AUTOGRADER_ROOT": str(root)})


def calls(log):
    return log.read_text().splitlines() if log.exists() else []


def test_on_ubuntu_22_04_setup_installs_python_3_11_and_makes_the_venv_with_it(ubuntu, tmp_path):
    bin_, log = ubuntu
    python_stub(bin_ / "python3", "3.10.12", log)
    # apt-get "installs" python3.11 (a stand-in of 3.11.0) when asked for it
    stub(bin_ / "apt-get", f"""echo "apt-get $*" >> "{log}"
case " $* " in *" python3.11 "*) {shutil.which("cp")} "{bin_}/python3.11.pkg" "{bin_}/python3.11";; esac
""")
    python_stub(bin_ / "python3.11.pkg", "3.11.0", log)
    out = run_setup(bin_, tmp_path)
    assert out.returncode == 3, out.stderr
    log_lines = calls(log)
    assert "apt-get install -y -q --no-install-recommends python3.11 python3.11-venv" in log_lines
    assert f"python3.11 -m venv {tmp_path}/venv" in log_lines
    assert not any(line.startswith("python3 -m venv") for line in log_lines)
    assert "setup.sh: Python 3.11.0 at" in out.stdout


def test_where_python3_lacks_venv_setup_installs_its_venv_package(ubuntu, tmp_path):
    bin_, log = ubuntu
    python_stub(bin_ / "python3", "3.12.3", log, venv_flag=tmp_path / "venv-installed")   # Ubuntu 24.04
    stub(bin_ / "apt-get", f'echo "apt-get $*" >> "{log}"\n: > "{tmp_path}/venv-installed"\n')
    out = run_setup(bin_, tmp_path)
    assert out.returncode == 3, out.stderr
    assert "apt-get install -y -q --no-install-recommends python3-venv" in calls(log)
    assert f"python3 -m venv {tmp_path}/venv" in calls(log)


def test_with_everything_there_setup_runs_no_apt_get(ubuntu, tmp_path):
    bin_, log = ubuntu
    python_stub(bin_ / "python3", "3.12.3", log)
    stub(bin_ / "apt-get", f'echo "apt-get $*" >> "{log}"\n')
    assert run_setup(bin_, tmp_path).returncode == 3
    assert not any(line.startswith("apt-get") for line in calls(log))


@pytest.mark.parametrize("apt, message", [
    ('echo "E: Unable to locate package python3.11" >&2; exit 100',
     "setup.sh: apt-get could not install g++ python3.11 python3.11-venv."),
    ("exit 0", "setup.sh: no Python 3.11 or newer with venv here (python3 is Python 3.10.12)."),
], ids=["apt-get fails", "apt-get installs no Python"])
def test_without_a_python_it_can_use_setup_stops_and_says_which_image(ubuntu, tmp_path, apt, message):
    bin_, log = ubuntu
    python_stub(bin_ / "python3", "3.10.12", log)
    (bin_ / "g++").unlink()
    stub(bin_ / "apt-get", f'echo "apt-get $*" >> "{log}"\ncase "$1" in install) {apt};; esac\n')
    out = run_setup(bin_, tmp_path)
    assert out.returncode == 1
    assert message in out.stderr
    assert "choose Gradescope's Ubuntu 22.04 or 24.04 base image" in out.stderr
    assert "apt-get install -y -q --no-install-recommends g++ python3.11 python3.11-venv" in calls(log)
    assert not (tmp_path / "venv").exists()


@pytest.mark.slow
def test_setup_installs_the_exported_wheel_and_run_autograder_grades_with_it(tmp_path):
    """setup.sh as Gradescope runs it, in a folder laid out like /autograder: a fresh venv
    from the export's wheel and the pinned requirements, then a correct submission graded
    by run_autograder with that venv alone."""
    root = tmp_path / "autograder"
    zipped = gradescope.export(ASSIGNMENT, HIDDEN, tmp_path / "autograder.zip")
    with zipfile.ZipFile(zipped) as z:
        z.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):        # zipfile does not keep the mode
        (root / "source" / script).chmod(0o755)
    # This checkout's venv off PATH, and no PYTHONPATH: what setup.sh installs is all there is.
    # (The rest of the environment stays: pip's settings for reaching the registry.)
    path = ":".join(d for d in os.environ["PATH"].split(":") if Path(d) != Path(sys.executable).parent)
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "GRADER_PYTHON")},
           "PATH": path, "AUTOGRADER_ROOT": str(root)}
    setup = subprocess.run([str(root / "source" / "setup.sh")], cwd=root, env=env, capture_output=True, text=True,
                           timeout=1500)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]

    venv_python = root / "venv" / "bin" / "python"
    where = subprocess.run([str(venv_python), "-c", "import cudacheck, tiling_course; print(tiling_course.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert Path(where).is_relative_to(root / "venv"), where
    wheel = next((root / "source" / "wheel").glob("*.whl")).name
    assert wheel.startswith("tiling_course-")
    pins = (root / "source" / "requirements.txt").read_text().split()
    installed = subprocess.run([str(venv_python), "-m", "pip", "freeze"], env=env, capture_output=True, text=True,
                               check=True).stdout.lower().split()
    assert all(pin.lower().replace("_", "-") in {i.replace("_", "-") for i in installed} for pin in pins), pins
    assert any((root / "source" / "warm-cache").iterdir()), "setup.sh built no warm compile cache"

    # Gradescope's contract: run_autograder at /autograder's root, the submission and its metadata.
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    sid = "s1"
    answer = judge.solution(HIDDEN, ASSIGNMENT, variants.of(rubric.part(ASSIGNMENT, VARIABLE), sid))
    (root / "submission" / f"{VARIABLE}.cu").write_text(answer)
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": sid, "email": "s1@example.edu"}]}))
    run = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 10, results
    (test,) = results["tests"]
    assert test["status"] == "passed" and "full marks" in test["output"]
