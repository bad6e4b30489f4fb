"""Opening the game log's files safely (issue 10): no symlinks, fixed modes, one writer.

- Every file of a log dir is opened with ``O_NOFOLLOW``: a symlink planted in
  the log dir (``events.jsonl``, ``checkpoints.jsonl``, a stale
  ``summary.json.tmp``) is refused, never followed out of the log dir.
- Temporaries are created with ``O_CREAT | O_EXCL``; a leftover temporary (or
  a symlink in its place) is removed first, never written through.
- Files are 0640 and folders 0750 whatever the umask (``fchmod``/``chmod``
  after creating them): a game log is the players' record, not the world's.
- :class:`LogDirLock` is an exclusive ``flock`` on the log dir: a second
  service on the same log dir is refused with one line naming the process
  that holds it (from ``/proc/locks``), instead of interleaving lines.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from ..core.errors import LogError

FILE_MODE = 0o640
DIR_MODE = 0o750


def open_fd(path: Path, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` that never follows a symlink at ``path``; a created file gets ``mode``."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    if flags & os.O_CREAT:
        try:
            os.fchmod(fd, mode)
        except OSError:
            os.close(fd)
            raise
    return fd


def open_append(path: Path):
    """An unbuffered binary file appending to ``path`` (created 0640 if missing)."""
    return os.fdopen(open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab", buffering=0)


def open_read(path: Path):
    """A binary file reading ``path``; a symlink there is an error (ELOOP)."""
    return os.fdopen(open_fd(path, os.O_RDONLY), "rb")


def open_update(path: Path):
    """A binary file reading and writing ``path`` in place (for truncating a torn tail)."""
    return os.fdopen(open_fd(path, os.O_RDWR), "rb+", buffering=0)


def make_dir(path: Path) -> None:
    """``mkdir`` with mode 0750 whatever the umask; FileExistsError if it exists."""
    os.mkdir(path, DIR_MODE)
    os.chmod(path, DIR_MODE, follow_symlinks=False)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte or raise: a short write (a disk filling up) is retried, then
    reported as the OSError the kernel gives for the rest (ENOSPC)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def write_atomic(path: Path, data: bytes) -> None:
    """Write a whole file so that a crash leaves either the old or the new one.

    The temporary ``<name>.tmp`` is created exclusively: whatever stood there
    (a torn temporary, a planted symlink) is unlinked first, not written through.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _lock_holder(fd: int) -> str:
    """The pid holding a flock on the file of ``fd``, from ``/proc/locks`` ("unknown" elsewhere)."""
    return flock_holder(os.fstat(fd)) or "unknown"


def flock_holder(st: os.stat_result, locks: str | Path = "/proc/locks") -> str | None:
    """The pid holding a flock on the file ``st`` describes, from ``/proc/locks`` (None: none known).

    Read, never taken: a look at a running service's log dir must not race its start."""
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open(locks, encoding="ascii", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (a "->" marks a waiter)
                if "FLOCK" in fields and "->" not in fields and len(fields) >= 6 and fields[5] == ident:
                    return fields[4]
    except OSError:
        pass
    return None


def log_dir_holder(log_dir: Path, locks: str | Path = "/proc/locks") -> str | None:
    """The pid of the preftable whose :class:`LogDirLock` holds ``log_dir`` (None: free, or no such
    folder).  Needs no permission on the folder itself: a user may look at the service's."""
    try:
        st = os.stat(log_dir)
    except OSError:
        return None
    return flock_holder(st, locks) if stat.S_ISDIR(st.st_mode) else None


class LogDirLock:
    """An exclusive ``flock`` on the log dir itself, held for the life of the service.

    The lock is on the directory (no lock file among the session folders); the
    kernel drops it when the process ends, however it ends.
    """

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self._fd: int | None = None

    def acquire(self) -> "LogDirLock":
        try:
            if not self.log_dir.is_dir():
                self.log_dir.mkdir(parents=True, mode=DIR_MODE)
                os.chmod(self.log_dir, DIR_MODE)
            fd = os.open(self.log_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise LogError(f"{self.log_dir}: cannot create a session folder: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fd)
            os.close(fd)
            raise LogError(f"{self.log_dir}: in use by another preftable (pid {holder}); "
                           "one table per log dir") from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)      # closing the descriptor drops the flock
            self._fd = None
