"""The one build step that pyproject.toml cannot declare: the book's CUDA C kernels live once,
at the repository's top level (kernels/*.cu), and the wheel ships them inside the course
package, as tiling_course/kernels/*.cu, where an installed copy reads them
(tiling_course.sources). A checkout, and an editable install, read kernels/ in place.
Everything else about the build is in pyproject.toml."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

KERNELS = Path(__file__).resolve().parent / "kernels"
INSIDE = Path("tiling_course") / "kernels"      # where the wheel holds them


class build_py_with_kernels(build_py):
    """build_py, then kernels/*.cu copied into the built package; and kernels/ listed among
    the sources, so that an sdist holds them too."""

    def _kernels(self):
        """(source, built file) of each kernel; none for an editable install, which reads kernels/
        where it is."""
        if getattr(self, "editable_mode", False):
            return []
        return [(p, Path(self.build_lib) / INSIDE / p.name) for p in sorted(KERNELS.glob("*.cu"))]

    def run(self):
        super().run()
        for source, built in self._kernels():
            self.mkpath(str(built.parent))
            self.copy_file(str(source), str(built))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), *(str(built) for _, built in self._kernels())]

    def get_source_files(self):
        return [*super().get_source_files(), *(f"kernels/{p.name}" for p in sorted(KERNELS.glob("*.cu")))]


setup(cmdclass={"build_py": build_py_with_kernels})
