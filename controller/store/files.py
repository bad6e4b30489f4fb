"""Opening the table's files safely: no symlinks, only regular files, bounded reads, fixed modes.

This is the one opener of every file the table writes or publishes (the game
log's files, the web page's PIN and secret, the MQTT outbox's mark and the
lines it reads, the club board's mirrors):

- Every file is opened with ``O_NOFOLLOW``: a symlink planted in the log dir
  (``events.jsonl``, ``checkpoints.jsonl``, ``web-pin.tmp``, a stale
  ``summary.json.tmp``) is refused, never followed out of the log dir.  With
  ``folder=True`` the folder holding it may not be a symlink either (a session
  folder of the log dir is opened ``O_DIRECTORY | O_NOFOLLOW`` and the file
  inside it relative to that descriptor).
- Only regular files are opened: the open is non-blocking (a FIFO planted at
  ``config.toml`` cannot hang a start) and checked with ``fstat``; anything
  else is the OSError :data:`errno.EINVAL` "not a regular file".
- :func:`read_bounded` reads a whole file only up to a bound (a 1 GiB sparse
  ``config.toml`` is refused from its size, never read).
- Temporaries are created with ``O_CREAT | O_EXCL``; a leftover temporary (or
  a symlink in its place) is removed first, never written through; a folder in
  its place is moved aside once, with one WARNING line.
- Files are 0640 (or the mode asked, 0600 for secrets) and folders 0750
  whatever the umask (``fchmod``/``chmod`` after creating them): a game log
  is the players' record, not the world's.
- :class:`LogDirLock` is an exclusive ``flock`` on the log dir: a second
  service on the same log dir is refused with one line naming the process
  that holds it (from ``/proc/locks``), instead of interleaving lines.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import stat
from pathlib import Path

from ..core.errors import LogError

log = logging.getLogger(__name__)

FILE_MODE = 0o640
SECRET_MODE = 0o600
DIR_MODE = 0o750
ASIDE = ".aside"


def not_regular(path: Path | str) -> OSError:
    return OSError(errno.EINVAL, "not a regular file", str(path))


def _open_folder(folder: Path) -> int:
    """A descriptor of ``folder`` itself, refusing a symlink there (ELOOP/ENOTDIR)."""
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def open_fd(path: Path, flags: int, mode: int = FILE_MODE, *, folder: bool = False) -> int:
    """``os.open`` of a regular file that never follows a symlink at ``path`` (nor, with
    ``folder``, at its folder) and never blocks on a FIFO; a created file gets ``mode``."""
    path = Path(path)
    dir_fd = _open_folder(path.parent) if folder else None
    try:
        fd = os.open(path.name if folder else path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     mode, dir_fd=dir_fd)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path)
        if not flags & os.O_NONBLOCK:       # a regular file: blocking reads and writes as usual
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        if flags & os.O_CREAT and stat.S_IMODE(st.st_mode) != mode:
            os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_append(path: Path, mode: int = FILE_MODE, *, folder: bool = False):
    """An unbuffered binary file appending to ``path`` (created with ``mode`` if missing)."""
    return os.fdopen(open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode, folder=folder), "ab",
                     buffering=0)


def open_read(path: Path, *, folder: bool = False):
    """A binary file reading ``path``; a symlink there is an error (ELOOP), so is a FIFO,
    a device or a folder (EINVAL, "not a regular file")."""
    return os.fdopen(open_fd(path, os.O_RDONLY, folder=folder), "rb")


def open_update(path: Path, *, folder: bool = False):
    """A binary file reading and writing ``path`` in place (for truncating a torn tail)."""
    return os.fdopen(open_fd(path, os.O_RDWR, folder=folder), "rb+", buffering=0)


def read_bounded(path: Path, limit: int, *, folder: bool = False) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; a larger one is the OSError
    EFBIG, told from its size before anything is read (a sparse giant costs nothing)."""
    with open_read(path, folder=folder) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit:,} bytes ({size:,})", str(path))
        data = fh.read(limit + 1)
    if len(data) > limit:               # it grew meanwhile
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
    return data


def clear_temporary(tmp: Path) -> None:
    """Make room for a temporary: a leftover file or symlink is removed; a folder (or
    anything ``unlink`` refuses) is moved aside to ``<name>.aside`` once, with one WARNING."""
    try:
        os.unlink(tmp)
        return
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError) as exc:
        if not os.path.lexists(tmp) or stat.S_ISLNK(os.lstat(tmp).st_mode):
            raise
        reason = exc.strerror
    target = tmp.with_name(tmp.name + ASIDE)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = tmp.with_name(f"{tmp.name}{ASIDE}-{n}")
    os.rename(tmp, target)
    log.warning("%s: not a file (%s); moved to %s", tmp, reason, target.name)


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


def write_atomic(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write a whole file so that a crash leaves either the old or the new one.

    The temporary ``<name>.tmp`` is created exclusively (with ``mode``): whatever
    stood there (a torn temporary, a planted symlink) is unlinked first, not
    written through (:func:`clear_temporary`).
    """
    tmp = path.with_name(path.name + ".tmp")
    clear_temporary(tmp)
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
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
