"""Run chapter 7's whole program and each of its host-side bugs (tiling_course.programs)
on a GPU, compiled by nvcc and unchecked, and store what each printed and its exit code
in course/tiling_course/data/programs.json (a run of outputs of the one measurement model,
tiling_course.measure.model), so that the site (built without a GPU) shows what a real GPU
does with them. Run on a GPU machine with nvcc:

    python scripts/record_program_runs.py
"""
import datetime
import platform
import re
import subprocess
from pathlib import Path

from cudacheck import KernelError, nvcc_path
from tiling_course import programs
from tiling_course.measure import model

OUT = Path(__file__).resolve().parent.parent / "course" / "tiling_course" / "data" / programs.DATA


def record(code):
    """What the program did on the GPU: its output and exit code, or the error that stopped it."""
    try:
        r = programs.run(code, backend="gpu")
        return {"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code}
    except KernelError as e:
        return {"stdout": getattr(e, "stdout", ""), "stderr": getattr(e, "stderr", "") + f"{type(e).__name__}: {e}",
                "exit_code": None}


def main():
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    device, driver = [s.strip() for s in smi.split(",")]
    nvcc = re.search(r"release ([\d.]+)", subprocess.run([nvcc_path(), "--version"], capture_output=True,
                                                          text=True).stdout)[1]
    outputs = {None: record(None), **{name: record(bug.source()) for name, bug in programs.BUGS.items()}}
    meta = model.Meta(device=device, date=datetime.date.today().isoformat(),
                      command="python scripts/record_program_runs.py",
                      software={"nvcc": nvcc, "driver": driver, "python": platform.python_version()},
                      extra={"what": "chapter 7's whole program and each host-side bug, compiled by nvcc and run "
                                     "unchecked: what it printed, its exit code"})
    model.write(model.Run("outputs", meta, tuple(model.Record(kernel="program", shape=None, config={"bug": name},
                                                              ok=rec["exit_code"] == 0, extra=rec)
                                                 for name, rec in outputs.items())), OUT)
    data = programs.records()
    print(f"wrote {OUT}: the program and {len(data['bugs'])} bugs on {device}")
    print(data["program"]["stdout"])
    for name, rec in data["bugs"].items():
        print(f"{name}: exit {rec['exit_code']}; {(rec['stdout'] + rec['stderr']).strip().splitlines()[-1:]}")


if __name__ == "__main__":
    main()
