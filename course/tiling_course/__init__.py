"""tiling_course: the tiled matrix multiplication book's course material, built on the
cudacheck runtime (which never imports this package). Each chapter imports the modules it
uses; importing the package itself loads nothing else:

    registry   the chapters in order, with their widgets, exercises and quizzes
    sources    where the book's kernels (kernels/*.cu) are, in a checkout or installed
    matmul     the book's kernels and the one way to launch them
    tryout     a reader's kernel, run checked on the CPU (and on a GPU) against NumPy
    tasks      what tryout checks a kernel on: a matrix product, a block transpose, a histogram
    hopper     chapter 9's Hopper kernels: their one launch rule
    exercises  the exercises (exercises/*.toml, *.cu) and their checker: check(id, answer)
    corpus     wrong kernels, each an edit of a book kernel, and what checked mode says
    traces     checked-mode access counts and traces of the book's kernels
    warps      a traced block's accesses as warp requests: sectors, bank conflicts
    switch     widgets whose states are all computed ahead and chosen in the browser
    style      the plot style: colour-blind-safe palette, projector fonts, stamped PNGs
    figures, demos, show, widgets, perfplots, quiz, notebook
    measure/   measuring on a GPU (bench, tune, fp32_gap, bench_hopper, cublas) and the runs the book
               draws from, in one model (measure.model: Run, Record, Shape M x N x K; one reader,
               one writer); perfdata, tuning and hopperdata read them for the chapters
    grading/   the assignments: their rubrics, the notebooks' self-check and the grader behind
               nbgrader and Gradescope (its own docstring maps it); `python -m tiling_course.grading`
"""
