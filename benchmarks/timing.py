"""The timing rules the benchmark scripts share: the median of several runs, and runs of several
things alternated in rounds, so that on a shared machine all of them meet the same load."""
import resource
import statistics
import time


def median_time(fn, repeats, warmup=1):
    """Seconds one call of fn takes: the median of `repeats` calls after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _cpu_seconds():
    """CPU seconds used so far by this process and by its children that have been waited for
    (a CPU runtime launch's worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def alternating(fns, repeats, warmup=1):
    """Each of `fns` called once a round, `repeats` rounds after `warmup`: a list per function
    of (wall seconds, CPU seconds) per call. The CPU seconds count this process and the
    processes it forked and waited for, so they are what a call cost whatever else ran."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    out = [[] for _ in fns]
    for _ in range(repeats):
        for fn, times in zip(fns, out):
            wall, cpu = time.perf_counter(), _cpu_seconds()
            fn()
            times.append((time.perf_counter() - wall, _cpu_seconds() - cpu))
    return out
