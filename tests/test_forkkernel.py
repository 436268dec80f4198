"""Kernels forked from a warm process (tiling_course.forkkernel), as the autograde wrapper
starts one per submission: each its own process and session, with the launch's working
directory and environment, nothing of another kernel in it, interruptible, gone after
shutdown, and gone when its zygote goes."""
import asyncio
import os
import signal
import time

import pytest
from jupyter_client.manager import AsyncKernelManager

from tiling_course import forkkernel

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="forked kernels need pidfd_open (Linux)")


async def _execute(kc, code, timeout=60):
    """stdout of `code`, and the error name if it raised."""
    msg_id = kc.execute(code)
    out, error = [], None
    while True:
        msg = await kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            error = msg["content"]["ename"]
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out), error


async def _start(cwd, manager=forkkernel.ForkingKernelManager):
    km = manager(kernel_name="python3")
    await km.start_kernel(cwd=str(cwd), extra_arguments=["--HistoryManager.hist_file=:memory:"])
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return km, kc


async def _stop(km, kc):
    kc.stop_channels()
    await km.shutdown_kernel()


@pytest.fixture
def zygote_cleanup():
    yield
    forkkernel.shutdown()


PROBE = ("import os, sys\nprint(os.getpid(), os.getpgid(0), os.getsid(0), os.getcwd(), "
         "os.environ.get('FORKKERNEL_TEST'), os.environ.get('JPY_PARENT_PID'), 'tiling_course.grading' in sys.modules, "
         "'secret' in globals())")


def test_each_kernel_is_a_fresh_process_of_its_own(tmp_path, zygote_cleanup, monkeypatch):
    monkeypatch.setenv("FORKKERNEL_TEST", "launch env")

    async def main():
        out = []
        for i in range(2):
            (tmp_path / str(i)).mkdir()
            km, kc = await _start(tmp_path / str(i))
            assert isinstance(km.provisioner.process, forkkernel.ForkedKernelProcess)
            text, error = await _execute(kc, PROBE)
            assert error is None, text
            await _execute(kc, "secret = 42")   # must not reach the next kernel
            out.append((km.provisioner.pid, text.split()))
            await _stop(km, kc)
            assert not await km.is_alive()
        return out

    (pid0, a), (pid1, b) = asyncio.run(main())
    zygote = forkkernel._zygote.proc.pid
    for i, (pid, fields) in enumerate([(pid0, a), (pid1, b)]):
        assert fields[:3] == [str(pid)] * 3             # its own process, process group and session
        assert pid not in (zygote, os.getpid())
        assert fields[3] == str(tmp_path / str(i))      # the launch's working directory
        assert fields[4:7] == ["launch", "env", str(os.getpid())]   # the launch's environment
        assert fields[7] == "True"                      # the course's modules came imported
        assert fields[8] == "False"                     # nothing of the kernel before it
    assert pid0 != pid1


def test_a_kernel_starts_plainly_when_its_environment_is_not_the_zygotes(tmp_path, zygote_cleanup, monkeypatch):
    async def main():
        km, kc = await _start(tmp_path)
        assert isinstance(km.provisioner.process, forkkernel.ForkedKernelProcess)
        await _stop(km, kc)
        monkeypatch.setenv("FORKKERNEL_TEST", "changed after the zygote started")
        km, kc = await _start(tmp_path)
        text, _ = await _execute(kc, "import os; print(os.environ['FORKKERNEL_TEST'])")
        plain = not isinstance(km.provisioner.process, forkkernel.ForkedKernelProcess)
        await _stop(km, kc)
        return plain, text.strip()

    assert asyncio.run(main()) == (True, "changed after the zygote started")


def test_a_forked_kernel_is_interrupted_and_killed_like_any_other(tmp_path, zygote_cleanup):
    async def main():
        km, kc = await _start(tmp_path)
        msg_id = kc.execute("import time; time.sleep(60)")
        await asyncio.sleep(1.0)
        await km.interrupt_kernel()
        while True:
            reply = await kc.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        interrupted = reply["content"].get("ename")
        pid = km.provisioner.pid
        kc.stop_channels()
        await km.shutdown_kernel(now=True)   # SIGKILL to its process group
        return interrupted, pid, await km.is_alive()

    interrupted, pid, alive = asyncio.run(main())
    assert interrupted == "KeyboardInterrupt" and not alive
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_no_kernel_outlives_its_zygote(tmp_path, zygote_cleanup):
    async def main():
        km, kc = await _start(tmp_path)
        kc.stop_channels()
        return km.provisioner.process

    kernel = asyncio.run(main())
    forkkernel._zygote.proc.send_signal(signal.SIGKILL)   # the zygote dies (its worker would, too)
    deadline = time.monotonic() + 15
    while kernel.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kernel.poll() is not None, "the kernel outlived its zygote"


def test_a_kernel_that_is_not_ipykernel_starts_plainly(tmp_path):
    assert forkkernel._fork_kernel(["/bin/sh", "-c", "true"], dict(os.environ), str(tmp_path)) is None


def test_plain_kernels_still_start(tmp_path):
    async def main():
        km, kc = await _start(tmp_path, AsyncKernelManager)
        text, _ = await _execute(kc, "print(6 * 7)")
        await _stop(km, kc)
        return text.strip()
    assert asyncio.run(main()) == "42"


def test_a_zygote_that_maps_shared_memory_forks_nothing(tmp_path, monkeypatch):
    """Shared memory mapped at import would be one memory in every kernel forked after it."""
    import sys
    (tmp_path / "shared_at_import.py").write_text("import mmap\nm = mmap.mmap(-1, 4096)\n")
    monkeypatch.setattr(forkkernel, "PRELOAD", ("shared_at_import",))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    zygote = forkkernel.Zygote(sys.executable, env)
    try:
        assert zygote.ok
        assert zygote.fork(["-f", str(tmp_path / "kernel.json")], env, str(tmp_path)) is None
    finally:
        zygote.close()
