"""The grading command line: `python -m tiling_course.grading COMMAND [options]`, where each
command is a module of this package with its own options (`... COMMAND --help`)."""
import importlib
import sys

# Each command's module is imported only when it runs: autograde imports nbgrader, similarity
# copydetect, and neither needs the other's start-up time.
COMMANDS = {"autograde": "nbgrader's autograde, each submission's CUDA graded in the sandbox",
            "gradescope": "an assignment as a Gradescope autograder (export), and what its zip runs (run, check, warm)",
            "similarity": "the pairs of a class's submissions whose kernels share most of their code"}
PROG = "python -m tiling_course.grading"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in COMMANDS:
        lines = [f"usage: {PROG} {{{','.join(COMMANDS)}}} [options]", ""]
        lines += [f"  {name:<11} {what}" for name, what in COMMANDS.items()]
        asked = argv[:1] in (["-h"], ["--help"])
        if argv and not asked:
            lines.insert(0, f"{PROG}: no command {argv[0]!r}")
        print("\n".join(lines), file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    return importlib.import_module(f"{__package__}.{argv[0]}").main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
