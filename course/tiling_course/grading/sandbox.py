"""Running a student's code in a sandbox made by bubblewrap (`bwrap`, Debian's and Ubuntu's
package `bubblewrap`): the only way the grader runs anything a student wrote.

    box = sandbox.Bubblewrap()          # SandboxUnavailable (with its reason) if it cannot start
    out = box.run(["python", "-m", "tiling_course.grading.launcher"], job=job_dir, warm=cache_dir)

What the sandboxed command sees and may do:

- files: the operating system's folders (/usr, /etc, the Python installation and the
  virtual environment, read-only), a copy of the two packages' public files (what the
  wheel ships: no exercise solution, no hidden test) at /grader/site, the job (the
  submission's CUDA and the test inputs) read-only at /job, a warm compile cache read-only
  at /warm, and a scratch folder at /scratch: a tmpfs of Limits.scratch bytes, gone when
  the run ends. Nothing else: not the course directory, its sources and gradebook, other
  submissions or the hidden tests.
- no network (its own empty network namespace), its own process, IPC and UTS namespaces: it
  sees only its own processes in /proc, and nothing it starts outlives the run.
- limits: wall time for the whole run (then every process of it is killed), per process
  CPU seconds, data memory, open files and file size (prlimit), processes and threads
  together (RLIMIT_NPROC, which root escapes: run as root, the sandbox drops to a user of
  its own, leased for the run, with setpriv: no capabilities and no_new_privs, so no setuid
  program regains any), and bytes printed (past Limits.output the run is killed and
  reported as flooding). bwrap reads its options from a pipe, so not even its own command
  line, which the sandbox's /proc shows, says where the grader keeps its files.
- a result channel: its standard output, a pipe the grader reads (at most Limits.result
  bytes); what it prints for people goes to standard error (tiling_course.grading.launcher points
  its standard output there before it loads any kernel).

The grader's own reading of a submission (tiling_course.grading.reading) runs in a sandbox of
its own, box.read(argv, folder, limits): the same namespaces and limits, the submission
folder alone read-only at /submission (no job, no warm cache, no /etc), as uid 0 with
every capability dropped when the grader is root (Bubblewrap.read says why).

If bwrap is missing or cannot make its namespaces (a container that forbids them), the
grader refuses to grade and says why: SandboxUnavailable. It never falls back to running
the code unsandboxed. `Unsandboxed` exists for benchmarks/grading.py alone, to measure what
the sandbox costs.
"""
import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# What the wheel leaves out of tiling_course: the exercises' solutions (pyproject.toml's
# package-data; scripts/colab_install_check.py holds the same list for the wheel's test).
INSTRUCTOR_ONLY = ("tiling_course/exercises/*.toml", "tiling_course/exercises/cu/*")
INSTALL_HINT = ("install it as root with `apt-get install -y bubblewrap` (Debian, Ubuntu), or run "
                "scripts/install_sandbox.sh")
# Run as root, each sandbox runs as a user of its own, leased from this range for the run,
# so that RLIMIT_NPROC, which counts a user's processes across the system, holds one
# sandbox's processes only: a fork bomb in one cannot starve the others graded beside it.
UIDS = range(200000, 201024)
LEASES = Path("/run/tiling-course-sandbox-uids")


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start here; the message says why and what to install."""


@dataclass(frozen=True)
class Limits:
    wall: float = 30.0            # seconds for the whole run, start-up and compiles included (the judge
                                  # adds twice the rubric's time limit per test)
    cpu: int = 60                 # CPU seconds per process
    memory: int = 3 << 30         # bytes of data (heap and private mappings) per process
    processes: int = 64           # processes and threads, all together
    files: int = 256              # open files per process
    file_size: int = 64 << 20     # bytes per file written
    scratch: int = 256 << 20      # bytes of /scratch (a tmpfs: it counts as memory)
    output: int = 256 << 10       # bytes printed (stdout and stderr together) before the run is killed
    result: int = 32 << 20        # bytes of results (its standard output)


@dataclass
class Outcome:
    """How a sandboxed run ended."""
    exit_code: int | None         # its exit status, None if a signal ended it
    signal: int | None            # the signal that ended it
    timed_out: bool               # killed at Limits.wall
    flooded: str = ""             # "output" or "results": killed for printing or writing past its limit
    output: str = ""              # what it printed (at most Limits.output bytes)
    result: bytes = b""           # what it wrote on its standard output
    wall: float = 0.0
    limits: Limits = field(default_factory=Limits)

    def reason(self):
        """Why the run did not finish normally, in a sentence, or "" if it did."""
        lim = self.limits
        if self.timed_out:
            return f"it did not finish within {lim.wall:g} s, so the sandbox stopped it"
        if self.flooded == "output":
            return f"it printed more than {lim.output // 1024} KiB, so the sandbox stopped it"
        if self.flooded == "results":
            return f"it wrote more than {lim.result >> 20} MiB of results, so the sandbox stopped it"
        if self.signal is not None:
            name = signal.Signals(self.signal).name if self.signal in signal.valid_signals() else str(self.signal)
            why = {"SIGKILL": " (killed: past a memory or process limit, or by the system)",
                   "SIGXCPU": f" (past its {lim.cpu} s of CPU time)", "SIGSEGV": " (a crash)",
                   "SIGXFSZ": f" (a file past {lim.file_size >> 20} MiB)"}.get(name, "")
            return f"it was ended by {name}{why}"
        if self.exit_code:
            return f"it exited with status {self.exit_code} before it had run every test"
        return ""


def public_tree(dest):
    """Copy the public files of cudacheck and tiling_course (what the wheel ships) from
    where they are imported into dest/; returns dest. The instructor's exercise data is
    left out, and so is everything else outside the two packages (the hidden tests live
    outside them) but the book's kernels, which go where the wheel puts them."""
    import cudacheck
    import tiling_course

    from .. import sources
    dest = Path(dest)
    tag = sys.implementation.cache_tag
    for package in (cudacheck, tiling_course):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            rel = PurePosixPath(package.__name__, *path.relative_to(root).parts)
            if path.is_dir() or "__pycache__" in rel.parts or any(rel.match(p) for p in INSTRUCTOR_ONLY):
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / rel)
            # A module's bytecode beside it, where this Python has compiled it: the sandbox may
            # write none (PYTHONDONTWRITEBYTECODE, a read-only tree), and each of its processes
            # would compile every module it imports. copy2 keeps the source's time, which the
            # .pyc's header must match to be used; a stale one is ignored and the source read.
            compiled = path.parent / "__pycache__" / f"{path.stem}.{tag}.pyc"
            if path.suffix == ".py" and compiled.is_file():
                (dest / rel).parent.joinpath("__pycache__").mkdir(exist_ok=True)
                shutil.copy2(compiled, (dest / rel).parent / "__pycache__" / compiled.name)
    if sources.FOLDER != sources.INSTALLED:   # a checkout's kernels/: into the package, as in the wheel
        (dest / "tiling_course" / "kernels").mkdir(parents=True, exist_ok=True)
        for path in sources.files():
            shutil.copy2(path, dest / "tiling_course" / "kernels" / path.name)
    return dest


def _system_binds():
    """(option, source, destination) for the operating system and this Python, read-only."""
    out = []
    for top in ("/usr", "/etc"):
        out.append(("--ro-bind", top, top))
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            out.append(("--symlink", os.readlink(top), top))
        elif os.path.isdir(top):
            out.append(("--ro-bind", top, top))
    seen = {"/usr", "/etc"}
    for prefix in (sys.base_prefix, sys.prefix):   # the Python installation, and the virtual environment
        p = os.path.realpath(prefix)
        if not any(p == s or p.startswith(s + "/") for s in seen):
            out.append(("--ro-bind", p, p))
            if prefix != p:
                out.append(("--symlink", p, prefix))
            seen.add(p)
    return out


def _mounts(binds):
    """bwrap's arguments for the (option, source, mount point) binds. bwrap makes a mount
    point's missing parents with mode 0700, which only root may enter: they are made first,
    readable by the sandbox's user."""
    cmd, made = [], {"/"}
    for option, src, dst in binds:
        for parent in reversed(PurePosixPath(dst).parents):
            if str(parent) not in made:
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        cmd += [option, src, dst]
        made.add(dst)
    return cmd


def _env(extra):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/scratch", "TMPDIR": "/scratch/tmp",
           "LANG": "C.UTF-8", "PYTHONPATH": "/grader/site", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONNOUSERSITE": "1", "CUDACHECK_CACHE_DIR": "/scratch/cache",
           # one thread each: RLIMIT_NPROC counts threads, and a BLAS pool per core would pass it
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.update(extra)
    return env


class Bubblewrap:
    """The sandbox. `site`: the folder of public packages (public_tree) it sees at
    /grader/site; built in a temporary folder when not given."""

    name = "bubblewrap"

    def __init__(self, limits=None, site=None):
        self.limits = limits or Limits()
        self.bwrap = shutil.which("bwrap")
        if self.bwrap is None:
            raise SandboxUnavailable(f"The grader runs every submission in a bubblewrap sandbox, and `bwrap` is not "
                                     f"installed: {INSTALL_HINT}. It will not grade without it.")
        if site is None:
            import tempfile
            self._tmp = tempfile.TemporaryDirectory(prefix="grader-site-")
            site = public_tree(Path(self._tmp.name) / "site")
        self.site = Path(site)
        # Run as root, bwrap makes its namespaces itself and the sandbox drops to a user of its
        # own; where that is not allowed (a container without CAP_SYS_ADMIN), inside a user
        # namespace, as bwrap does for any other user (the process limit then counts every
        # sandbox of this machine's root together: in a container that grades one submission
        # at a time, as Gradescope's do, that is the one).
        said = []
        for self.privileged in ([True, False] if os.geteuid() == 0 else [False]):
            out = self._probe()
            if out is None:
                return
            said.append(out)
        raise SandboxUnavailable(
            "The grader runs every submission in a bubblewrap sandbox, and it could not start one here (bwrap said: "
            f"{' / '.join(said)}). Where bwrap is installed, this means the system forbids the namespaces it needs "
            "(a container without user namespaces or CAP_SYS_ADMIN). The grader will not grade without the sandbox.")

    def _probe(self):
        """None if the sandbox starts, else what went wrong."""
        out = self.run(["python", "-c", "import sys; print('sandbox ok', sys.version_info[0])"], limits=Limits(wall=60))
        if out.exit_code == 0 and b"sandbox ok" in out.result:
            return None
        return out.output.strip()[-600:] or out.reason() or "nothing"

    def _namespaces(self):
        """bwrap's namespaces, the same for every sandbox: no network, IPC, PIDs or host name of
        the grader's."""
        cmd = ["--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net",
               "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not self.privileged:
            cmd.append("--unshare-user")   # unprivileged: bwrap makes its namespaces inside a user namespace
        return cmd

    def command(self, argv, job=None, warm=None, limits=None, warm_writable=False, uid=None):
        """bwrap's arguments that run argv in the sandbox (as user `uid`, run as root).
        warm_writable: the warm cache is the compile cache, writable (the grader's own
        warm-up run only)."""
        lim = limits or self.limits
        cmd = self._namespaces()
        binds = [*_system_binds(), ("--ro-bind", str(self.site), "/grader/site")]
        if job is not None:
            binds.append(("--ro-bind", str(job), "/job"))
        if warm is not None:
            binds.append(("--bind" if warm_writable else "--ro-bind", str(warm), "/warm"))
        cmd += _mounts(binds)
        cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(lim.scratch), "--perms", "1777", "--tmpfs",
                "/scratch", "--perms", "1777", "--dir", "/scratch/tmp"]
        cmd += ["--chdir", "/scratch", "--clearenv"]
        cache = {"CUDACHECK_CACHE_DIR": "/warm", "GRADER_WARM": ""} if warm_writable else {
            "GRADER_WARM": "/warm" if warm is not None else ""}
        for k, v in _env({"GRADER_JOB": "/job", **cache}).items():
            cmd += ["--setenv", k, v]
        if self.privileged:   # a user of its own, so that RLIMIT_NPROC holds, and no way back to root
            cmd += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add",
                    "CAP_SETPCAP"]
        else:
            cmd += ["--cap-drop", "ALL"]
        cmd += ["--", *_prlimit(lim)]
        if self.privileged:
            cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                    "--bounding-set=-all", "--no-new-privs", "--"]
        else:
            cmd += ["setpriv", "--no-new-privs", "--"]
        return cmd + [sys.executable if a == "python" else a for a in argv]

    def run(self, argv, job=None, warm=None, limits=None, warm_writable=False):
        lim = limits or self.limits
        with _lease_uid() if self.privileged else contextlib.nullcontext() as uid:
            args = self.command(argv, job, warm, lim, warm_writable, uid)
            split = args.index("--")   # bwrap's options through a pipe, the command on its command line
            rfd, wfd = os.pipe()
            os.write(wfd, b"".join(a.encode() + b"\0" for a in args[:split]))   # well under a pipe's 64 KiB
            os.close(wfd)
            try:
                return _supervise([self.bwrap, "--args", str(rfd), *args[split:]], lim, env={}, pass_fds=(rfd,))
            finally:
                os.close(rfd)


    def read(self, argv, submission, limits):
        """Run argv, the grader's own reader of a submission (tiling_course.grading.reading), in a
        sandbox of its own that sees the submission folder read-only at /submission and,
        besides it, only what Python needs (no /etc, no job, no warm cache, no scratch
        worth the name); its result is its standard output, as for run().

        Run as root, this one sandbox stays uid 0, with every capability dropped (bwrap's
        --cap-drop ALL, then setpriv empties the bounding set and the inheritable set, so no
        exec gives root's capabilities back, and sets no_new_privs), rather than a leased
        user. Gradescope unpacks a submission as root, and the files may be readable by
        root only: a leased user could not read them, and making them readable (a chown or
        a copy) would mean the grader touching the submission's names outside a sandbox,
        which is what this sandbox is for. uid 0 without CAP_DAC_OVERRIDE or
        CAP_DAC_READ_SEARCH reads only what root owns or what anyone may read, and sees
        only the submission and the system's programs: the hidden tests, the grader's
        files and /etc are not in its view, so even a reader that followed a link would
        find nothing behind it. Its mounts are read-only, its /proc/sys is read-only
        (bwrap covers it), it has no network and its own PID namespace. What uid 0 keeps
        that a leased user would not: RLIMIT_NPROC does not hold for root, so this
        sandbox runs the grader's code only, never a student's (the student's CUDA runs
        in run(), as a leased user); its processes still die with it at Limits.wall."""
        lim = limits or self.limits
        cmd = self._namespaces()
        binds = [b for b in _system_binds() if b[2] != "/etc"]
        binds += [("--ro-bind", str(self.site), "/grader/site"), ("--ro-bind", str(submission), "/submission")]
        cmd += _mounts(binds)
        cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(16 << 20), "--perms", "1777", "--tmpfs", "/scratch",
                "--remount-ro", "/", "--chdir", "/submission", "--clearenv"]
        for k, v in _env({"GRADER_SUBMISSION": "/submission", "TMPDIR": "/scratch"}).items():
            cmd += ["--setenv", k, v]
        # CAP_SETPCAP only for setpriv to empty the bounding set (it drops it too, before the exec)
        cmd += ["--cap-drop", "ALL", *(["--cap-add", "CAP_SETPCAP"] if self.privileged else []), "--",
                *_prlimit(lim), "setpriv", "--inh-caps=-all", *(["--bounding-set=-all"] if self.privileged else []),
                "--no-new-privs", "--"]
        args = cmd + [sys.executable if a == "python" else a for a in argv]
        split = args.index("--")
        rfd, wfd = os.pipe()
        os.write(wfd, b"".join(a.encode() + b"\0" for a in args[:split]))
        os.close(wfd)
        try:
            return _supervise([self.bwrap, "--args", str(rfd), *args[split:]], lim, env={}, pass_fds=(rfd,))
        finally:
            os.close(rfd)


@contextlib.contextmanager
def _lease_uid():
    """A user id of UIDS that no other sandbox on this machine is using and that owns no
    process, for as long as the block runs (an exclusive lock on a file per id).

    A run's processes outlive the wait for its bwrap: killing bwrap only starts the
    kernel's tear-down of the PID namespace, and a fork bomb's processes count against
    RLIMIT_NPROC until they are reaped. The next run under that user would then fail to
    start (execve's EAGAIN, setpriv's status 126), so a lease ends only once its user's
    processes are gone, and a user that still has some is passed over."""
    import fcntl
    LEASES.mkdir(mode=0o700, exist_ok=True)
    for uid in UIDS:
        f = open(LEASES / str(uid), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        if _processes_of(uid):
            f.close()
            continue
        try:
            yield uid
        finally:
            _end_processes_of(uid)
            f.close()
        return
    raise SandboxUnavailable(f"all {len(UIDS)} sandbox user ids are in use or still own processes")


def _processes_of(uid):
    """The ids of the processes whose real user is uid (zombies included: they count
    against RLIMIT_NPROC until reaped)."""
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:   # it ended while we looked
            continue
        line = next((ln for ln in text.splitlines() if ln.startswith("Uid:")), "")
        if line.split()[1:2] == [str(uid)]:
            pids.append(int(status.parent.name))
    return pids


def _end_processes_of(uid, wait=10.0):
    """Kill whatever still runs as the sandbox user uid (only a sandbox ever runs as
    one), and wait, at most `wait` seconds, until the kernel has reaped it all."""
    deadline = time.monotonic() + wait
    while (pids := _processes_of(uid)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _prlimit(lim):
    return ["prlimit", f"--cpu={lim.cpu}", f"--data={lim.memory}", f"--nproc={lim.processes}",
            f"--nofile={lim.files}", f"--fsize={lim.file_size}", "--core=0", "--"]


class Unsandboxed:
    """The same command and limits on file size, CPU and memory, with no sandbox: for
    benchmarks/grading.py's comparison only; the grader never uses it."""

    name = "no sandbox"

    def __init__(self, limits=None, site=None):
        import tempfile
        self.limits = limits or Limits()
        self._tmp = tempfile.TemporaryDirectory(prefix="grader-nosandbox-")
        self.site = Path(site) if site else public_tree(Path(self._tmp.name) / "site")

    def run(self, argv, job=None, warm=None, limits=None, warm_writable=False):
        import tempfile
        lim = limits or self.limits
        with tempfile.TemporaryDirectory(prefix="scratch-") as scratch:
            (Path(scratch) / "tmp").mkdir()
            cache = {"CUDACHECK_CACHE_DIR": str(warm), "GRADER_WARM": ""} if warm_writable else {
                "CUDACHECK_CACHE_DIR": f"{scratch}/cache", "GRADER_WARM": str(warm or "")}
            env = {**os.environ, **_env({"GRADER_JOB": str(job or ""), "HOME": scratch, "TMPDIR": f"{scratch}/tmp",
                                         "PYTHONPATH": str(self.site), "PATH": os.environ["PATH"], **cache})}
            cmd = ["prlimit", f"--cpu={lim.cpu}", f"--data={lim.memory}", f"--fsize={lim.file_size}", "--",
                   *[sys.executable if a == "python" else a for a in argv]]
            return _supervise(cmd, lim, env=env, cwd=scratch)


def _supervise(cmd, lim, env, cwd=None, pass_fds=()):
    """Run cmd with its standard output (results) and standard error (what it printed)
    read, each up to its limit, and the whole of it killed at lim.wall or at a flood."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env or None, cwd=cwd, start_new_session=True, pass_fds=pass_fds)
    output, result = bytearray(), bytearray()
    flooded, timed_out = "", False
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, ("results", result, lim.result))
    sel.register(proc.stderr, selectors.EVENT_READ, ("output", output, lim.output))
    open_streams = 2
    while open_streams and not flooded:
        left = lim.wall - (time.monotonic() - start)
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 1.0)):
            name, buf, most = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            buf += chunk
            if len(buf) > most:
                flooded = name
                del buf[most:]
                break
    if timed_out or flooded:
        _kill(proc)
    try:
        proc.wait(timeout=max(1.0, lim.wall - (time.monotonic() - start)))
    except subprocess.TimeoutExpired:   # it closed its pipes and kept running
        timed_out = True
        _kill(proc)
        proc.wait()
    sel.close()
    proc.stdout.close()
    proc.stderr.close()
    rc = proc.returncode
    if 128 < rc < 128 + 65 and not (timed_out or flooded):   # bwrap passes on its child's death by a signal so
        rc = 128 - rc
    return Outcome(exit_code=rc if rc >= 0 else None, signal=-rc if rc < 0 else None, timed_out=timed_out,
                   flooded=flooded, output=output.decode("utf-8", "replace"), result=bytes(result),
                   wall=time.monotonic() - start, limits=lim)


def _kill(proc):
    """Kill the run: its process group (bwrap, whose death takes every process of the
    sandbox's PID namespace with it)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
