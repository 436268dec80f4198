"""On a GPU: the differential corpus (tests/support/cuda_corpus) through the GPU backend, beside
the CPU runtime. For each case and shape: the GPU's result against NumPy's reference,
and against the CPU runtime's (plain), element by element; for each seeded bug: what the
GPU does with it unchecked (a wrong result, an error, or nothing visible) and what
checked mode reports. Prints one line per case and a summary; --output writes the log.

    python -m scripts.corpus_gpu [--output logs/DATE-DEVICE-corpus.log]   # from the repository's root
"""
import argparse
import ctypes
import platform
import subprocess
import sys
import time

import numpy as np

from tests.support.cuda_corpus import all_cases
from tests.support.cuda_corpus.case import run as case_run


def run(case, source, spec, backend):
    """One launch; returns {output key: NumPy array} for the reference's keys."""
    import cupy
    xp = cupy if backend == "gpu" else np
    # CuPy has no structured dtypes: struct arrays travel as their bytes.
    host = tuple(a.view(np.uint8) if isinstance(a, np.ndarray) and a.dtype.names else a for a in spec.args)
    args = tuple(xp.asarray(a) if isinstance(a, np.ndarray) else a for a in host)
    if backend == "gpu":
        args = _views_on_gpu(host, args)
    mod = case_run(case, source, spec, backend, args=args)
    out = {}
    for i, a in enumerate(args):
        got = cupy.asnumpy(a) if backend == "gpu" and hasattr(a, "device") else a
        if isinstance(spec.args[i], np.ndarray) and spec.args[i].dtype.names:
            got = np.asarray(got).view(spec.args[i].dtype)
        out[i] = got
    return out, mod


def _views_on_gpu(host, device):
    """Arguments that are views of one NumPy array (x[:-1] and x[1:]) become views of one
    CuPy array, so that the GPU sees one memory as the CPU runtime does."""
    import cupy
    groups = {}
    for i, a in enumerate(host):
        if isinstance(a, np.ndarray) and not a.dtype.names:
            base = a.base if isinstance(a.base, np.ndarray) else a   # the same array twice is one too
            groups.setdefault(id(base), []).append(i)
    out = list(device)
    for members in groups.values():
        if len(members) < 2:
            continue
        first = host[members[0]]
        base = first.base if isinstance(first.base, np.ndarray) else first
        on_gpu = cupy.asarray(base).reshape(-1)
        for i in members:
            a = host[i]
            off = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize
            out[i] = on_gpu[off:off + a.size].reshape(a.shape)
    return tuple(out)


def _flat(v):
    """An output as float64, a struct array's fields side by side."""
    v = np.asarray(v)
    if v.dtype.names:
        return np.concatenate([np.asarray(v[f], np.float64).ravel() for f in v.dtype.names])
    return v.astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--only", default="", help="run only the cases whose source file starts with one of these "
                                               "(comma-separated)")
    ap.add_argument("--no-bugs", action="store_true", help="skip the seeded bugs' GPU runs")
    ap.add_argument("--bug", help=argparse.SUPPRESS)   # case/bug: one seeded bug, in a child process
    a = ap.parse_args()
    if a.bug:
        return run_bug(a.bug, a.seed)
    import cupy
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out = open(a.output, "w") if a.output else None

    def say(line):
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()
    lines = [f"# corpus on the GPU backend: {dev}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, "
             f"CuPy {cupy.__version__}, {platform.python_version()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             "# case shape: gpu-vs-numpy (max abs error, within tolerance), gpu-vs-cpu (identical elements)"]
    for line in lines:
        say(line)
    cases = [c for c in all_cases() if c.source.startswith(tuple(a.only.split(",")))]
    ok = bad = 0
    for case in cases:
        for shape in case.shapes:
            rng = np.random.default_rng(a.seed)
            spec = case.setup(rng, shape)
            want = case.reference(case.setup(np.random.default_rng(a.seed), shape).args, shape)
            try:
                gpu, gmod = run(case, case.code(), spec, "gpu")
                cpu, cmod = run(case, case.code(), case.setup(np.random.default_rng(a.seed), shape), "cpu")
            except Exception as e:   # noqa: BLE001 (recorded, and the run goes on)
                say(f"FAIL {case.name} {shape}: {type(e).__name__}: {str(e).splitlines()[0]}")
                bad += 1
                continue
            verdicts = []
            good = True
            for key, ref in want.items():
                if isinstance(key, str):
                    cv = cmod.get_global(key).array
                    gv = np.empty_like(cv)   # the variable's own type, as the CPU runtime read it
                    gmod.get_global(key).copy_to_host(ctypes.c_void_p(gv.ctypes.data), gv.nbytes)
                else:
                    gv, cv = gpu[key], cpu[key]
                gv, cv, ref = _flat(gv), _flat(cv), _flat(ref)
                g64, r64 = gv, ref
                within = np.allclose(g64, r64, rtol=case.rtol, atol=case.atol)
                same = int((np.asarray(gv) == np.asarray(cv)).sum())
                err = float(np.abs(g64 - r64).max()) if g64.size else 0.0
                verdicts.append(f"{key}: err {err:.2e} {'ok' if within else 'WRONG'}, "
                                f"gpu==cpu {same}/{np.asarray(gv).size}")
                good &= within
            ok += good
            bad += not good
            say(f"{'ok  ' if good else 'FAIL'} {case.name} {shape}: " + "; ".join(verdicts))
    silent = 0
    for case in [] if a.no_bugs else cases:
        for bug in case.bugs:
            # Each in a process of its own: an illegal address poisons the CUDA context.
            proc = subprocess.run([sys.executable, __file__, "--bug", f"{case.name}/{bug.name}", "--seed", str(a.seed)],
                                  capture_output=True, text=True)
            outcome = proc.stdout.strip() or f"GPU error: {(proc.stderr.strip().splitlines() or ['?'])[-1][:120]}"
            silent += outcome == "GPU result looks right"
            say(f"bug  {case.name}/{bug.name}: {outcome}; checked mode: {bug.error}")
    say(f"# {ok} case-shapes agree with NumPy on the GPU, {bad} do not; "
        f"{sum(len(c.bugs) for c in cases)} seeded bugs, {silent} of them invisible in the GPU's output")
    return 0 if bad == 0 else 1


def run_bug(name, seed):
    """One seeded bug, unchecked on the GPU: prints what the GPU made of it."""
    case_name, bug_name = name.split("/")
    case = next(c for c in all_cases() if c.name == case_name)
    bug = next(b for b in case.bugs if b.name == bug_name)
    spec = case.setup(np.random.default_rng(seed), bug.shape)
    want = case.reference(case.setup(np.random.default_rng(seed), bug.shape).args, bug.shape)
    try:
        gpu, _ = run(case, case.edited(bug), spec, "gpu")
    except Exception as e:   # noqa: BLE001 (any CUDA error is the finding here)
        print(f"GPU error: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
        return 0
    wrong = any(not isinstance(k, str) and not np.allclose(_flat(gpu[k]), _flat(v), rtol=case.rtol, atol=case.atol,
                                                            equal_nan=True) for k, v in want.items())
    print("GPU result wrong" if wrong else "GPU result looks right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
