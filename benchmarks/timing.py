"""The timing rule the benchmark scripts share: the median of several runs."""
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
