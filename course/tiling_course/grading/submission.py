"""A submission's files, read as data: the grader's only way into an upload's folder.

    files = submission.read_folder(folder, wanted=lambda name: name.endswith(".ipynb"))
    files.read       # {"sub/a.ipynb": b"..."}: the wanted regular files, each read whole
    files.unread     # {"rect_src.cu": "a symbolic link: ..."}: wanted names it did not read, and why

A submission is whatever a student uploaded, so a name can be anything: a symbolic link to
the hidden tests or to /etc/shadow, a link to /dev/zero, a FIFO that blocks whoever opens
it, a 10 GiB file, a folder a million deep. The walk never follows a link, not even a
folder's (every folder is opened beneath the one before it, with O_NOFOLLOW), reads only
regular files (checked on the open file, after the open: a name swapped for a link in
between is refused by O_NOFOLLOW, one swapped for a FIFO by the check), opens without
blocking, and reads at most Limits.file bytes of a file and Limits.total of the whole;
past Limits.entries names or Limits.depth folders it stops looking. What it passes over
is reported with its reason, so the student learns which file cost which points.
"""
import os
import stat
from dataclasses import dataclass, field

_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
# Names no student means as an answer: hidden files and the folders macOS adds to a zip.
_IGNORED = ("__MACOSX",)


@dataclass(frozen=True)
class Limits:
    file: int = 16 << 20       # bytes of one file (a notebook with its outputs fits)
    total: int = 64 << 20      # bytes of every file read from one submission
    entries: int = 10_000      # names looked at
    depth: int = 16            # folders within folders


@dataclass
class Files:
    read: dict = field(default_factory=dict)      # relative path -> its bytes
    unread: dict = field(default_factory=dict)    # relative path -> why it was not read


def _kind(mode):
    """What a file that is not a regular one is, in words."""
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


def _not_regular(mode):
    return (f"{_kind(mode)}, and the grader reads only regular files: upload the file itself "
            "(not a link or a special file)")


def _read_bounded(fd, most):
    """At most most + 1 bytes of fd (one past the limit tells that there were more)."""
    chunks, size = [], 0
    while size <= most:
        chunk = os.read(fd, min(1 << 20, most + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class _Walk:
    def __init__(self, wanted, limits):
        self.wanted, self.limits, self.files = wanted, limits, Files()
        self.seen, self.total = 0, 0

    def folder(self, fd, prefix, depth):
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _IGNORED:
                continue
            path = prefix + entry.name
            self.seen += 1
            if self.seen > self.limits.entries:
                self.files.unread["..."] = (f"the submission has more than {self.limits.entries} files and folders; "
                                            "the rest were not looked at")
                return False
            mode = 0
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if depth >= self.limits.depth:
                        self.files.unread[path + "/"] = f"a folder more than {self.limits.depth} deep: not looked into"
                        continue
                    sub = os.open(entry.name, _OPEN_DIR, dir_fd=fd)
                    try:
                        if not self.folder(sub, path + "/", depth + 1):
                            return False
                    finally:
                        os.close(sub)
                elif self.wanted(entry.name):
                    self.file(fd, entry.name, path, mode)
            except OSError as e:   # it vanished, was swapped for a link (ELOOP), or is unreadable
                if self.wanted(entry.name) or stat.S_ISDIR(mode):
                    self.files.unread[path] = f"it could not be read ({e.strerror or e})"
        return True

    def file(self, dir_fd, name, path, mode):
        if not stat.S_ISREG(mode):
            self.files.unread[path] = _not_regular(mode)
            return
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):   # swapped since the scan
                self.files.unread[path] = _not_regular(st.st_mode)
                return
            most = min(self.limits.file, self.limits.total - self.total)
            if st.st_size > self.limits.file:
                self.files.unread[path] = f"it is over {self.limits.file >> 20} MiB"
                return
            data = _read_bounded(fd, most)
        finally:
            os.close(fd)
        if len(data) > self.limits.file:   # it grew while read
            self.files.unread[path] = f"it is over {self.limits.file >> 20} MiB"
        elif len(data) > most:
            self.files.unread[path] = f"the submission's files are over {self.limits.total >> 20} MiB together"
        else:
            self.total += len(data)
            self.files.read[path] = data


def read_folder(folder, wanted, limits=None):
    """Files: the regular files under `folder` whose names `wanted(name)` accepts, read
    (relative paths with /, in name order), and the wanted names not read, with why.
    `folder` itself is the grader's (it may be reached through links); nothing under it is."""
    walk = _Walk(wanted, limits or Limits())
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        walk.folder(fd, "", 0)
    finally:
        os.close(fd)
    return walk.files
