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

# Autograding never executes a notebook: in Execute's place, the CUDA of each part is read out
# of the notebook as text and graded in a bubblewrap sandbox (tiling_course.grading.autograde), and the
# scores go into the gradebook by grade id. Deleted grade cells are put back for the feedback.
# Graded assignments' hidden tests: hidden/ beside source/ (the instructor's copy only).
# (tiling_course.grading.autograde.PREPROCESSORS; named here, so that nbgrader's other commands need not import it)
c.Autograde.autograde_preprocessors = [
    "tiling_course.grading.autograde.GradeInSandbox", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades", "tiling_course.grading.autograde.RecordScores",
    "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata",
]
c.OverwriteCells.add_missing_cells = True
c.GradeInSandbox.hidden = "hidden"

# Submissions downloaded from an LMS (zip_collect): Moodle's "Download all submissions"
# names each file "<name>_<id>_assignsubmission_file_<notebook>".
c.ZipCollectApp.collector_plugin = "nbgrader.plugins.zipcollect.FileNameCollectorPlugin"
c.FileNameCollectorPlugin.named_regexp = r".*_(?P<student_id>\d+)_assignsubmission_file_(?P<file_id>.+\.ipynb)"
