"""The GPU backend's fallback for CUDA's pip headers, which ship mma.h without the crt/mma.h
it includes: with NVRTC faked, so it runs without a GPU. The real thing is exercised by every
wmma kernel compiled on a GPU machine whose CuPy uses pip headers (logs/2026-11-23-*)."""
from types import SimpleNamespace

import pytest

from cudacheck import gpu as backend

WMMA = '#include <mma.h>\nextern "C" __global__ void k() {}'
PLAIN = 'extern "C" __global__ void k() {}'


class CompileException(Exception):
    pass


@pytest.fixture
def nvrtc(monkeypatch):
    """A fake NVRTC that cannot open crt/mma.h unless the toolkit's folder is on the path,
    recording each compile's options."""
    calls = []

    def compiled(cupy, source, options, expressions, cupy_options, log_stream=None):
        calls.append((source, tuple(options)))
        if "mma.h" in source and "-I/toolkit/include" not in options:
            raise CompileException('mma.h(91): catastrophic error: cannot open source file "crt/mma.h"')
        return "module"

    monkeypatch.setattr(backend, "_compiled", compiled)
    monkeypatch.setattr(backend, "_toolkit_include", lambda: "/toolkit/include")
    monkeypatch.setattr(backend, "_crt_include", [])
    cupy = SimpleNamespace(cuda=SimpleNamespace(compiler=SimpleNamespace(CompileException=CompileException)))
    return cupy, calls


def test_the_toolkit_folder_is_found_once_then_given_up_front(nvrtc):
    cupy, calls = nvrtc
    assert backend._compiled_with_crt(cupy, WMMA, ("-std=c++17",), [], {}) == "module"
    assert [opts for _, opts in calls] == [("-std=c++17",), ("-std=c++17", "-I/toolkit/include")]
    calls.clear()
    backend._compiled_with_crt(cupy, WMMA, ("-DTC_BF16",), [], {})        # a second wmma source: one compile
    backend._compiled_with_crt(cupy, PLAIN, ("-DX",), [], {})             # a source without mma.h: unchanged
    assert [opts for _, opts in calls] == [("-DTC_BF16", "-I/toolkit/include"), ("-DX",)]


def test_other_compile_errors_and_a_missing_toolkit_are_reported_as_they_are(nvrtc, monkeypatch):
    cupy, calls = nvrtc
    with pytest.raises(CompileException, match="crt/mma.h"):
        monkeypatch.setattr(backend, "_toolkit_include", lambda: None)
        backend._compiled_with_crt(cupy, WMMA, (), [], {})
    assert len(calls) == 1 and backend._crt_include == []
