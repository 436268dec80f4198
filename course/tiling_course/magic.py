"""The %%cuda and %%cuda_program cell magics: notebook cells that hold CUDA C.

    %%cuda tiled_src
    extern "C" __global__ void matmul_tiled(...) { ... }

stores the cell's source in the variable `tiled_src` and compiles it at once (checked
mode on the CPU runtime, and NVRTC when a GPU is present), so a typo shows up in this
cell, beside its numbered lines, rather than later. Loaded by tiling_course.notebook.setup().
Compiler options may follow the name (`%%cuda hopper_src -arch=sm_90a -std=c++17`); a GPU
that the options' -arch cannot run on (sm_90a code on a T4) is left out, and the message
says so. The line is read by tiling_course.cudacell, as the grader reads it.

    %%cuda hp1_src --into hopper.cu:consume_tile -arch=sm_90a -std=c++17
    template <int STAGES, ...> __device__ void consume_tile(...) { ... }

holds one function of a long file of the book's kernels: the cell is compiled in place of
that function in kernels/hopper.cu (tiling_course.sources.splice), the rest of the file the
book's own, and the variable holds the cell alone (an exercise's check splices it the same way).

    %%cuda_program [--cpu | --gpu] [--check] [--time-limit SECONDS] [--save NAME] [ARGS...]
    #include <cstdio>
    int main() { ... }

compiles and runs the cell as a whole program, host code included, and prints what it
printed: with nvcc on a GPU when one is present, otherwise on the CPU runtime (--cpu or
--gpu choose; --check runs it in checked mode on the CPU runtime). ARGS are its
command-line arguments; --save stores the cell's source in the variable NAME (an
exercise's check takes it from there).
"""
import argparse
import re
import shlex

from cudacheck import KernelError, RawModule, gpu_available, run_program

from . import cudacell, sources


def cuda(line, cell):
    try:
        parsed = cudacell.parse(line)
    except cudacell.CudaLineError as e:
        print(e)
        return
    name, options = parsed.variable, parsed.options
    try:
        into, options = _into(options)
        code = cell if into is None else sources.splice(sources.read(into[0]), into[1], cell)[0]
    except (ValueError, KeyError, OSError) as e:
        print(f"%%cuda --into: {e.args[0] if isinstance(e, KeyError) else e}")
        return
    from IPython import get_ipython
    get_ipython().user_ns[name] = cell
    unfit = gpu_unfit(options) if gpu_available() else "none"
    backends = ["cpu"] + ([] if unfit else ["gpu"])
    try:
        for backend in backends:
            mod = RawModule(code, backend=backend, check=backend == "cpu", options=options)
            mod.compile()   # here, so that a source's errors are reported as messages
    except KernelError as e:
        print(f"{type(e).__name__}: {e}")
        return
    found = ", ".join(f"`{k}`" for k in mod.kernels) or "no __global__ function"
    if into is not None:
        found = f"`{into[1]}` into {into[0]} ({found})"
    where = " and the GPU (NVRTC)" if "gpu" in backends else ""
    if unfit not in ("", "none"):
        where += f" (not for this GPU: {unfit})"
    from IPython.display import Markdown, display
    display(Markdown(f"Compiled {found} for the CPU runtime's checked mode{where}; source saved as `{name}`."))


def _into(options):
    """((file, function), the other options) of a line with `--into FILE:FUNCTION`, else (None,
    options); ValueError for a malformed one."""
    if "--into" not in options:
        return None, options
    i = options.index("--into")
    where = options[i + 1] if i + 1 < len(options) else ""
    file, _, function = where.partition(":")
    if not file or not function or file not in {f.name for f in sources.files()}:
        raise ValueError(f"--into takes FILE:FUNCTION, a file of the book's kernels and one of its functions; "
                         f"got {where!r}")
    return (file, function), options[:i] + options[i + 2:]


def gpu_unfit(options):
    """Why the GPU here cannot run code built with these options, or "" if it can: an
    -arch=sm_XY names compute capability X.Y or later, -arch=sm_XYa exactly X.Y."""
    arch = next((m for o in options if (m := re.fullmatch(r"-arch=sm_(\d+)(a?)", o))), None)
    if arch is None:
        return ""
    import cupy
    have, want = int(cupy.cuda.Device().compute_capability), int(arch.group(1))
    if have == want or (have > want and not arch.group(2)):
        return ""
    need = f"{want // 10}.{want % 10}" + ("" if arch.group(2) else " or later")
    return f"{arch.group(0)[6:]} code runs on compute capability {need}, and this GPU's is {have // 10}.{have % 10}"


def _program_options(line):
    parser = argparse.ArgumentParser(prog="%%cuda_program", add_help=False, exit_on_error=False)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--cpu", action="store_const", dest="backend", const="cpu", default="auto")
    where.add_argument("--gpu", action="store_const", dest="backend", const="gpu")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--save", default=None)
    parser.add_argument("args", nargs="*")
    return parser.parse_args(shlex.split(line))


def cuda_program(line, cell):
    try:
        opts = _program_options(line)
    except (argparse.ArgumentError, ValueError, SystemExit) as e:
        print(f"{e}\nUsage: %%cuda_program [--cpu | --gpu] [--check] [--time-limit SECONDS] [--save NAME] [ARGS...], "
              "then a whole CUDA C program (with a main) on the following lines.")
        return
    if opts.save is not None:
        if not re.fullmatch(r"[A-Za-z_]\w*", opts.save):
            print(f"--save needs a Python variable name, not {opts.save!r}.")
            return
        from IPython import get_ipython
        get_ipython().user_ns[opts.save] = cell
    try:
        result = run_program(cell, backend=opts.backend, check=opts.check, args=opts.args,
                             time_limit=opts.time_limit)
    except (KernelError, ValueError) as e:
        printed = getattr(e, "stdout", "") + getattr(e, "stderr", "")
        print(printed + ("" if not printed or printed.endswith("\n") else "\n") + f"{type(e).__name__}: {e}")
        return
    print(result.stdout + result.stderr, end="")
    if result.exit_code:
        print(f"(the program exited with code {result.exit_code})")
    for w in result.warnings:
        print(f"{type(w).__name__} (line {w.line}): {w}")


def register(ipython):
    ipython.register_magic_function(cuda, magic_kind="cell", magic_name="cuda")
    ipython.register_magic_function(cuda_program, magic_kind="cell", magic_name="cuda_program")
