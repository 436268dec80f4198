# nbgrader's configuration for the course's graded assignments: this folder is an nbgrader
# course directory (source/ holds the instructor's notebooks, with solutions; nbgrader
# writes release/, submitted/, autograded/, feedback/ and gradebook.db beside it).
# The workflow and its commands: book/instructor.md, "Graded assignments".
c = get_config()  # noqa: F821  (nbgrader's config loader defines it)

c.CourseDirectory.course_id = "tiled-matmul"

# The kernels are CUDA C in %%cuda cells, so a solution region is marked with C comments
# (nbgrader matches the words anywhere in a line) and replaced by a C comment, which the
# student's kernel goes below: nbgrader's default stub is Python and would not compile.
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearSolutions.code_stub = {"python": "    // YOUR CODE HERE"}

# Each submission runs in its own kernel; a graded cell calls tiling_course.grading.award,
# which stops a hanging CUDA kernel after the rubric's time limit (a few seconds). This is
# the backstop for anything else that hangs a cell.
c.Execute.timeout = 120

# Submissions downloaded from an LMS (zip_collect): Moodle's "Download all submissions"
# names each file "<name>_<id>_assignsubmission_file_<notebook>".
c.ZipCollectApp.collector_plugin = "nbgrader.plugins.zipcollect.FileNameCollectorPlugin"
c.FileNameCollectorPlugin.named_regexp = r".*_(?P<student_id>\d+)_assignsubmission_file_(?P<file_id>.+\.ipynb)"
