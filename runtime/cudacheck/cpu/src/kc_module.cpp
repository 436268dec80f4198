// What a kernel module (not a whole program) has beside the runtime's units: the release of what
// its own copy of the C++ library allocated when it was loaded.
//
// A module links the C++ library statically (compiler.py's MODULE_LINK_FLAGS). Its exception
// support comes with it (the personality routine of the runtime's C++ needs it), and so does its
// emergency pool for exceptions thrown when malloc fails: 71 KiB that the library mallocs when the
// module is loaded and never frees, since dlclose runs no code that would. A Python process
// loads and unloads a library for RawModule after RawModule, so it kept 71 KiB of heap each
// (150 MB in a test worker over the corpus), and every later launch's fork copied the page
// tables of what of it was touched. __gnu_cxx::__freeres is the library's own way to free it
// (valgrind calls it at exit); the Python side calls kc_release_library before each dlclose.
// Modules of one source share one library, which may stay loaded for another module after the
// pool is gone: harmless, since nothing a kernel module runs throws, and a second call frees
// nothing (__freeres forgets the pool it freed).
#include "kc_abi.h"

namespace __gnu_cxx {
void __freeres() noexcept;
}

extern "C" void kc_release_library() { __gnu_cxx::__freeres(); }
