"""A whole program's plain host units: the .c and .cpp files of a program built from several
files, which nvcc hands to the host compiler (a .c file as C, whatever C++ its CUDA units
are) and links beside its CUDA unit. On the CPU runtime each is compiled here with g++'s
driver in that language (-x c: K&R definitions and implicit declarations stay legal C) into
an object linked into the program's library.

The program's main may live in a host unit (a C driver calling the CUDA unit's extern "C"
functions); its symbol is renamed compiler.HOST_MAIN in the object, which the program's entry
point (compiler.translation_unit) calls, since the library's own main would be nobody's.
"""
import subprocess
from pathlib import Path

from .. import cache
from ..config import config
from ..errors import CompileError
from ..frontend import INCLUDE_DIR
from ..options import user_flags
from .compiler import HOST_MAIN, compiler_version

# A unit's language by its suffix, as nvcc decides it.
LANGUAGES = {".c": "c", ".cpp": "c++", ".cc": "c++", ".cxx": "c++"}
FLAGS = ("-O2", "-fPIC", "-fvisibility=hidden", "-w")


def compile_unit(name, text, folder, options):
    """The object of host unit `name` (its `text`; its quoted #includes found first in
    `folder`, where the file is), cached by its preprocessed text; a main it defines is
    renamed HOST_MAIN (defines_main tells)."""
    cxx, language = config.cxx, LANGUAGES[Path(name).suffix]
    # nvcc gives a .cpp file the toolkit's include folder (cuda_runtime.h: the runtime API, here
    # the CPU runtime's); the CUDA headers are C++, so a .c file has the C library's alone.
    toolkit = [f"-I{INCLUDE_DIR}", "-DKC_PROGRAM"] if language == "c++" else []
    flags = ["-x", language, *FLAGS, f"-iquote{folder}", *toolkit, *user_flags(options)]
    proc = subprocess.run([cxx, *flags, "-E", "-P", "-"], input=text, capture_output=True, text=True)
    if proc.returncode:
        raise _error(name, proc.stderr)
    target = cache.path(cache.digest(proc.stdout, " ".join(flags), compiler_version(cxx)) + ".o", "host")

    def make(tmp, out):
        source = tmp / Path(name).name
        source.write_text(text)
        proc = subprocess.run([cxx, *flags, "-c", str(source), "-o", str(out)], capture_output=True, text=True)
        if proc.returncode:
            raise _error(name, proc.stderr.replace(str(source), name))
        if defines_main(out):
            subprocess.run(["objcopy", f"--redefine-sym=main={HOST_MAIN}", str(out)], check=True)
    cache.build_once(target, make)
    return target


def defines_main(obj):
    """Whether the object defines main (or, renamed, HOST_MAIN)."""
    symbols = subprocess.run(["nm", "-P", "--defined-only", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    return any(line.split()[:1] in (["main"], [HOST_MAIN]) for line in symbols.splitlines())


def _error(name, log):
    language = "C" if name.endswith(".c") else "C++"
    return CompileError(f"{name} did not compile as {language} (the host compiler nvcc uses for a "
                        f"{Path(name).suffix} file):\n{log}", log=log, backend="cpu")
