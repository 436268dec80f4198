"""The grader's process inside the sandbox (tiling_course.grading.sandbox): it compiles a
submission's CUDA and launches it on the test inputs it is given, and writes back what
came out. It judges nothing: the grader compares the outputs with the expected results
outside the sandbox, where the student's code never runs.

    python -m tiling_course.grading.launcher        # reads $GRADER_JOB/job.json (tiling_course.grading.judge writes it)

It never runs a student's Python; the student's CUDA runs in this process's kernel
launches (cudacheck's forked workers) and in the library cudacheck loads.

Its standard output carries the results, one JSON object per line:

    {"part": "bounds_src", "run": "0", "mode": "checked" | "plain", "error": null | {"kind", "message"},
     "outputs": {"P": {"dtype", "shape", "data": base64}}, "counts": [[parameter, loads, stores], ...],
     "unmet": null | "why a requirement is not met"}

and {"done": true, "cpu": the CPU seconds it and its processes used} at the end. Anything
printed (a kernel's printf, a compiler's complaint) goes to standard error, which the
grader keeps apart and caps.

A run's spec, from job.json: function, options (-D...), check, grid, block, shared_mem,
args ([["array", name] | ["int32" | "float32", value], ...]), inputs (an .npz in the job
folder: the arrays by name), outputs (the arrays to send back), trace (blocks to trace),
requirements (tiling_course.exercises.requirements tables, evaluated on the checked run's
report), shape and tile (what a requirement is told), plain_if (the kinds of finding after
which the same launch also runs plain, to tell a lucky schedule from a wrong product). A
part's runs stop at its first error that is not one of those findings (a compile error, a
hang, an out-of-bounds access ends the part).
"""
import base64
import json
import os
import sys
from pathlib import Path

COMMAND = ["python", "-m", "tiling_course.grading.launcher"]   # what the grader runs in the sandbox


def _results_channel():
    """Standard output, kept for the results; from here on, fd 1 is standard error, so
    that what a kernel prints cannot run into them."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _warm_cache(cache, warm):
    """The private compile cache, with links to the read-only warm one's entries (the
    runtime's objects and precompiled headers, built by the grader from its own kernel)."""
    cache.mkdir(parents=True, exist_ok=True)
    if not warm or not Path(warm).is_dir():
        return
    for sub in ("", "frontend"):
        src, dst = Path(warm) / sub, cache / sub
        if not src.is_dir():
            continue
        dst.mkdir(exist_ok=True)
        for entry in src.iterdir():
            if entry.suffix in (".o", ".pch") and not entry.name.startswith("."):
                (dst / entry.name).symlink_to(entry)


def _encode(array):
    import numpy as np
    a = np.ascontiguousarray(array)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}


def _arguments(spec, arrays):
    import numpy as np
    args = []
    for kind, value in spec["args"]:
        if kind == "array":
            args.append(arrays[value])
        elif kind == "int32":
            args.append(np.int32(value))
        elif kind == "float32":
            args.append(np.float32(value))
        else:
            raise ValueError(f"unknown argument kind {kind!r}")
    return tuple(args)


def launch(source, spec, check, arrays):
    """One launch of `spec` on copies of `arrays`; the result line's fields (no part, run
    or mode)."""
    import numpy as np

    import cudacheck
    arrays = {name: np.array(a) for name, a in arrays.items()}
    options = {"trace": [tuple(b) for b in spec["trace"]]} if check and spec.get("trace") else {}
    try:
        fn = cudacheck.RawModule(code=source, options=tuple(spec["options"]), backend="cpu",
                                 check=check).get_function(spec["function"])
        fn(tuple(spec["grid"]), tuple(spec["block"]), _arguments(spec, arrays), shared_mem=spec.get("shared_mem", 0),
           **options)
    except cudacheck.KernelError as e:
        return {"error": {"kind": type(e).__name__, "message": str(e)}}
    out = {"error": None, "outputs": {name: _encode(arrays[name]) for name in spec["outputs"]}}
    if check:
        report = fn.last_launch
        out["counts"] = [[name, int(c.loads), int(c.stores)] for name, c in report.global_counts.items()]
        if spec.get("requirements"):
            from ..exercises import requirements
            unmet = requirements.build(spec["requirements"])(report, tuple(spec["shape"]), spec.get("tile"), source)
            out["unmet"] = unmet
    return out


def run_part(variable, source, runs, arrays_of, emit):
    """Each run of a part in turn (see the module's docstring); arrays_of(spec) gives its
    inputs, emit(line) takes each result."""
    for spec in runs:
        line = {"part": variable, "run": spec["id"]}
        arrays = arrays_of(spec)
        first = launch(source, spec, spec["check"], arrays)
        emit({**line, "mode": "checked" if spec["check"] else "plain", **first})
        error = first["error"]
        if error and spec["check"] and error["kind"] in spec.get("plain_if", ()):
            emit({**line, "mode": "plain", **launch(source, spec, False, arrays)})
        elif error:
            return


def _inputs(job):
    import numpy as np

    def arrays_of(spec):
        with np.load(job / spec["inputs"], allow_pickle=False) as data:
            return {name: np.array(data[name]) for name in data.files}
    return arrays_of


def main():
    results = _results_channel()
    job = Path(os.environ["GRADER_JOB"])
    cache = Path(os.environ.get("CUDACHECK_CACHE_DIR") or Path.home() / ".cache" / "cudacheck")
    _warm_cache(cache, os.environ.get("GRADER_WARM"))
    spec = json.loads((job / "job.json").read_text())

    import cudacheck
    cudacheck.config.time_limit = float(spec["time_limit"])
    cudacheck.config.workers = 1     # one submission per core: a hanging kernel holds one core

    def emit(line):
        results.write(json.dumps(line) + "\n")

    for part in spec["parts"]:
        run_part(part["variable"], (job / part["source"]).read_text(encoding="utf-8"), part["runs"], _inputs(job),
                 emit)
    import resource
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    emit({"done": True, "cpu": sum(u.ru_utime + u.ru_stime for u in used)})
    results.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
