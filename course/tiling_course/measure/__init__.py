"""Measuring the book's kernels on a GPU, and the runs the book draws from (its own docstrings
say more):

    model        the one measurement model: Run, Record, Meta, Shape (M x N x K), and the one
                 reader and writer of every measurement file of data/
    bench        the benchmark of chapters 1 to 6's kernels beside cuBLAS
                 (python -m tiling_course.measure.bench); benchsteps, its steps
    tune         the tuner of rungs 5-6 and the wmma kernels (python -m tiling_course.measure.tune)
    fp32_gap     rung 5's thread patches and Nsight Compute's counters beside cuBLAS SGEMM
    bench_hopper chapter 9's Hopper kernels beside cuBLAS (python -m tiling_course.measure.bench_hopper)
    cublas       cuBLAS at each of the book's precisions: the reference every kernel is timed against
    perfdata, tuning, hopperdata   the stored runs as the chapters read them (their tables and figures)
"""
