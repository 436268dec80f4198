"""The compiler options a RawModule takes (CuPy's, in NVRTC's spellings), as the CPU side
reads them: the front end's parse takes their -D and -I (user_flags), the CPU build takes
those and the options with a meaning on a CPU, and refuses the rest (compiler_flags).
"""
import re

from .errors import CompileError

# -D and -I, in NVRTC's short and long spellings: group 1 the option, group 2 its value.
_DEFINE_OR_INCLUDE = re.compile(r"^(-D|--define-macro=?|-I|--include-path=?)(.*)\Z", re.S)
# NVRTC options with no meaning on the CPU.
IGNORED_OPTION = re.compile(r"^(-arch|--gpu-architecture|-std|--std|--use_fast_math|-use_fast_math|-lineinfo|"
                            r"--generate-line-info|-G|-g|--device-debug|-O\d|--fmad|-fmad|-rdc|--relocatable-device-code|"
                            r"--extra-device-vectorization|-default-device|--restrict|-dopt|--ptxas-options|-maxrregcount|"
                            r"--maxrregcount|-ftz|--ftz|-prec-div|--prec-div|-prec-sqrt|--prec-sqrt|-dw|--disable-warnings)\b")


# An architecture with its arch-specific features (sm_90a: wgmma, setmaxnreg), for which NVRTC
# defines __CUDA_ARCH_FEAT_SM90_ALL: group 1 the compute capability.
_ARCH_FEATURES = re.compile(r"^(?:-arch|--gpu-architecture)=?(?:sm|compute)_(\d+)a\Z")


def _user_flag(option):
    """A -D or -I option as g++ and clang spell it ("-DX=1", "-Ipath"), the macro an
    arch-specific architecture defines (-arch=sm_90a), or None."""
    arch = _ARCH_FEATURES.match(option)
    if arch:
        return f"-D__CUDA_ARCH_FEAT_SM{arch.group(1)}_ALL"
    m = _DEFINE_OR_INCLUDE.match(option)
    if m is None:
        return None
    return ("-D" if m.group(1).startswith(("-D", "--define")) else "-I") + m.group(2)


def user_flags(options):
    """The -D and -I options, for the front end's parse; the rest are code generation's."""
    return [flag for flag in map(_user_flag, options) if flag is not None]


def fast_math_enabled(options):
    """nvcc's and NVRTC's --use_fast_math (-use_fast_math)."""
    return any(o.replace("--", "-") == "-use_fast_math" for o in options)


def compiler_flags(options, program=False):
    """The C++ compiler flags for CuPy-style options: -D and -I pass, NVRTC-only ones
    are dropped, anything else is an error naming the option. Subnormals (kc_intrinsics.h's
    KC_FTZ): a RawModule's are flushed whatever its options say, as CuPy appends -ftz=true to
    them and NVRTC takes the last; a whole program's (program=True) are kept unless -ftz=true or
    --use_fast_math asks, as nvcc does. -DKC_FTZ=0 (the CPU runtime's own) keeps a RawModule's."""
    flags = []
    ftz = fast_math_enabled(options)   # (which implies -ftz=true; an -ftz option decides)
    for opt in options:
        flag = _user_flag(opt)
        if flag is not None:
            flags.append(flag)
        elif re.match(r"^--?ftz=(false|true)$", opt):
            ftz = opt.endswith("true")   # (the last one counts, as in nvcc)
        elif IGNORED_OPTION.match(opt):
            continue
        else:
            raise CompileError(f"option {opt!r} is not understood by the CPU runtime "
                               "(it takes -D and -I, and ignores NVRTC's code-generation options)", backend="cpu")
    if program and not any(f.startswith("-DKC_FTZ") for f in flags):
        flags.append(f"-DKC_FTZ={int(ftz)}")
    return flags


def check_options(options):
    """CompileError naming the first of these compiler options (CuPy's style: "-DX=1",
    "-std=c++17") that the CPU runtime refuses, as a launch would raise it; None if it
    takes them all."""
    compiler_flags(options)
