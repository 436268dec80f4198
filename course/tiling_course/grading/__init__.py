"""Grading: the assignments' rubrics, the self-check in their notebooks, and the grader that
nbgrader and Gradescope run on a class's submissions.

    rubric       the assignments and their parts (assignments/rubrics.toml), as data
    tasks        what each part's kernel computes, how it is launched and judged
    variants     per-student variants of a graded part, drawn from the student id
    selfcheck    the student's check in the notebook (only the notebooks import it)
    submission   an upload's files read as data, following no link
    answers      each part's CUDA read from a submission as text
    reading      that reading, run inside a sandbox
    sandbox      the bubblewrap sandbox, the only place a student's code runs
    launcher     the process inside the sandbox that launches a submission's kernels
    scoring      the launcher's results judged outside the sandbox: a Score per part
    judge        one submission graded: tests, sandboxed runs, scores, feedback
    autograde    nbgrader's autograde, with the judge in place of executing notebooks
    gradescope   an assignment as a Gradescope autograder
    similarity   the class's near-copies, over the token streams of cudatokens

Two kinds of assignment:

- practice (a1-a3): the book's own kernels, rewritten; the rubric's shapes and seed are
  public, and the self-check is the grade.
- graded (g1-g3): kernels the book does not contain, with per-student variants
  (tiling_course.variants). The grade comes from hidden tests (the instructor's
  assignments/hidden/, never in the wheel), run by tiling_course.judge in a sandbox on the
  CUDA the student submitted; the self-check runs the same scoring on public shapes.

Either way a grade never comes from the student's notebook: the grader reads the
submission's %%cuda cells as text (tiling_course.answers) and runs them in a fresh,
sandboxed process (judge, sandbox). The notebook's self-check (selfcheck.award) is only
for the student to see where they stand.

How a part is scored, from its points = {correct, clean, speed}:

    correct  the result matches NumPy on every test (awkward shapes: 1 x 1, primes, m != k
             != n; the variant's tiles), in a run on the CPU runtime
    clean    and checked mode finds nothing: no race, no out-of-bounds access, no divergent
             barrier, no uninitialized shared read (a GPU run can hide a race; this cannot)
    speed    and the checked run meets the part's speed requirement: global loads within the
             bound of staged tiles, or coalesced accesses and no bank conflicts

So a kernel that computes the right result but that checked mode finds racy (or with
another such finding) earns `correct` alone; correct and clean but slow earns `correct +
clean`. A kernel that reads or writes out of bounds, crashes, does not compile, or does
not finish within the rubric's time limit earns nothing, and its feedback says which.

Grading a class (`python -m tiling_course.grading --help`):

    python -m tiling_course.grading autograde ASSIGNMENT     # nbgrader, on a JupyterHub
    python -m tiling_course.grading gradescope export ASSIGNMENT --hidden DIR --out FILE.zip
    python -m tiling_course.grading similarity ASSIGNMENT    # near-copies after a batch is graded
"""
