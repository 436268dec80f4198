"""Fresh Jupyter kernels that start warm: each one a process of its own, forked from a
process that has imported the kernel's machinery and the course's grading modules and
has run nothing else.

A kernel that nbgrader starts for a submission spends about half a second of CPU before
the submission's first line runs: the interpreter, ipykernel, IPython, debugpy, NumPy,
cudacheck and tiling_course. The autograde wrapper (tiling_course.autograde) has each of
its workers keep one *zygote*: a process started once, with the kernels' environment,
that imports all of that and then waits. For each submission it forks a child, which
becomes the submission's kernel (`python -m ipykernel_launcher -f CONNECTION_FILE`, run
in the forked process) and exits when nbgrader shuts it down. The child is what a freshly
started kernel would be at its first cell, minus the import time:

- its own process and process group (nbgrader's interrupt and kill reach it and what it
  starts), its own sockets, environment, working directory and arguments, those of the
  launch nbgrader asked for; the zygote runs no notebook code, so nothing of one
  submission reaches another;
- the same interpreter, sys.path and configuration; the modules were imported with the
  same environment (a launch whose environment differs in anything but the JPY_
  variables the launcher sets is started the ordinary way instead);
- NumPy's global generator reseeded from the OS as a new process seeds it (Python's
  `random` reseeds itself after a fork); the grader's own generators are seeded by the
  rubric, as before;
- it exits if the zygote goes (ipykernel's parent poller), and the zygote exits when its
  worker does, so no kernel outlives the grading.

Anything the zygote cannot do (no pidfd_open, a kernelspec that is not ipykernel's, a
zygote that failed to start) falls back to jupyter_client's ordinary launch.
"""
import json
import os
import select
import signal
import socket
import subprocess
import sys

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

# What a kernel of a graded notebook imports before and in its cells (one that cannot be
# imported is left to the kernel, which then fails on it as a fresh one would).
PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.debugger", "numpy",
           "cudacheck", "cudacheck.cpu.compiler", "cudacheck.cpu.runner", "cudacheck.cpu.findings", "clang.cindex",
           "tiling_course.notebook", "tiling_course.magic", "tiling_course.grading")


def _own_env(env):
    """The environment without what the launcher sets per kernel."""
    return {k: v for k, v in env.items() if not k.startswith("JPY_")}


# ------------------------------------------------------------------ the zygote


def _serve(fd, preload):
    """The zygote's loop: one JSON request per line on socket `fd` ({args, env, cwd}), one
    reply line each ({pid} or {error}); returns when the socket closes."""
    import importlib
    start = dict(os.environ)
    env0 = _own_env(start)
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # What the imports did to the environment (debugpy sets PYDEVD_USE_FRAME_EVAL), which a
    # kernel that imports them itself has too.
    changed = {k: os.environ.get(k) for k in set(start) | set(os.environ) if start.get(k) != os.environ.get(k)}
    # A writable MAP_SHARED mapping made by an import would be one memory in every kernel
    # forked from here (the CPU runtime maps its arenas lazily, at a launch, never at import).
    shared = [line.split(None, 5)[-1].strip() for line in open("/proc/self/maps") if line.split()[1][1:4:2] == "ws"]
    sock = socket.socket(fileno=fd)
    stream = sock.makefile("rwb", buffering=0)

    def reap(*_):
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
    signal.signal(signal.SIGCHLD, reap)
    stream.write(b'{"ready": true}\n')
    for line in stream:
        req = json.loads(line)
        if _own_env(req["env"]) != env0 or shared:
            why = f"shared memory mapped at import: {shared}" if shared else "the environment differs from the zygote's"
            stream.write(json.dumps({"error": why}).encode() + b"\n")
            continue
        started, go = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(started)
                stream.close()
                sock.close()
                os.setsid()   # its own session and process group, as jupyter_client's launch makes
                os.close(go)  # (after which the zygote says it is there)
                status = _kernel(req, changed)
            finally:
                os._exit(status)
        os.close(go)
        os.read(started, 1)   # EOF once the child has its session
        os.close(started)
        stream.write(json.dumps({"pid": pid}).encode() + b"\n")


def _kernel(req, changed):
    """In the forked child: become `python -m ipykernel_launcher ARGS` and return its exit status."""
    import atexit
    import importlib.util
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.environ.clear()
    os.environ.update(req["env"])
    for k, v in changed.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    os.chdir(req["cwd"])
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *req["args"],
                f"--IPKernelApp.parent_handle={os.getppid()}"]
    status = 0
    try:
        from ipykernel import kernelapp
        kernelapp.launch_new_instance()
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        atexit._run_exitfuncs()
        for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                f.flush()
            except Exception:
                pass
    return status


# ------------------------------------------------------------------ the grader's side


class Zygote:
    """A zygote process, started on first use with the first launch's interpreter and
    environment."""

    def __init__(self, python, env):
        ours, theirs = socket.socketpair()
        code = ("import sys; del sys.path[0]; from tiling_course.forkkernel import _serve; "
                f"_serve({theirs.fileno()}, {PRELOAD!r})")
        self.proc = subprocess.Popen([python, "-c", code], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                     env=_own_env(env))
        theirs.close()
        self.python = python
        self.stream = ours.makefile("rwb", buffering=0)
        self._sock = ours
        self.ok = self._reply().get("ready", False)

    def _reply(self):
        line = self.stream.readline()
        return json.loads(line) if line else {"error": "the zygote exited"}

    def fork(self, args, env, cwd):
        """The pid of a new kernel, or None where this zygote cannot make it."""
        if not self.ok:
            return None
        self.stream.write(json.dumps({"args": args, "env": env, "cwd": cwd}).encode() + b"\n")
        reply = self._reply()
        if "pid" not in reply:
            self.ok = self.ok and reply.get("error") != "the zygote exited"
            return None
        return reply["pid"]

    def close(self):
        self.stream.close()
        self._sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_zygote = None


def _fork_kernel(cmd, env, cwd):
    """The pid of a kernel for `cmd` forked from this process's zygote, or None."""
    global _zygote
    if not hasattr(os, "pidfd_open") or len(cmd) < 3 or cmd[1:3] != ["-m", "ipykernel_launcher"]:
        return None
    if _zygote is not None and _zygote.python != cmd[0]:
        return None
    if _zygote is None:
        try:
            _zygote = Zygote(cmd[0], env)
        except OSError:
            return None
    return _zygote.fork(cmd[3:], env, cwd)


class ForkedKernelProcess:
    """What jupyter_client asks of a kernel's Popen, for a process that is the zygote's
    child: exit is seen through a pidfd. Its exit status is not known here: 0 once it
    has exited."""
    stdin = stdout = stderr = None

    def __init__(self, pid):
        self.pid = pid
        self._fd = os.pidfd_open(pid)
        self.returncode = None

    def poll(self):
        if self.returncode is None and self._fd is not None and select.select([self._fd], [], [], 0)[0]:
            self.returncode = 0
            os.close(self._fd)
            self._fd = None
        return self.returncode

    def wait(self, timeout=None):
        if self.poll() is None:
            if not select.select([self._fd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
        return self.poll()

    def send_signal(self, signum):
        if self.poll() is None:
            signal.pidfd_send_signal(self._fd, signum)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)


class ForkProvisioner(LocalProvisioner):
    """LocalProvisioner whose ipykernel kernels are forked from the zygote."""

    async def launch_kernel(self, cmd, **kwargs):
        kw = self._scrub_kwargs(kwargs)
        plain = not any(kw.get(k) is not None for k in ("stdin", "stdout", "stderr")) and not kw.get("independent")
        env = dict(kw.get("env") or os.environ)
        env["JPY_PARENT_PID"] = str(os.getpid())   # as jupyter_client's launch sets it
        cmd = [os.path.expanduser(s) for s in cmd]
        pid = _fork_kernel(cmd, env, str(kw.get("cwd") or os.getcwd())) if plain else None
        if pid is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = ForkedKernelProcess(pid)
        self.pid = self.pgid = pid
        self.cwd = kwargs.get("cwd", os.getcwd())
        return self.connection_info


class ForkingKernelManager(AsyncKernelManager):
    """AsyncKernelManager whose kernels come from the zygote (ForkProvisioner)."""

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None:
            import uuid
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


def shutdown():
    """Stop this process's zygote, if it has one (its kernels have been shut down by then)."""
    global _zygote
    if _zygote is not None:
        _zygote.close()
        _zygote = None
