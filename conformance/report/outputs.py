"""Where a run writes: the results file and the reports folder. Checked before anything
runs, locked for the whole run, written with the user's umask.

- **Locks.** A run that writes a file holds an ``fcntl.flock`` lock on a lock file beside
  it: ``<results>.lock`` for the results file (the pytest plugin, on the controller only),
  ``<reports>/behaviour.lock`` for the reports (``conformance run`` and ``conformance
  report``). A second run that wants the same file is refused at once, with the lock file
  and the pid that holds it. The lock file holds the holder's pid and is removed when the
  lock is released; one left behind by a killed run holds no lock (the kernel releases
  ``flock`` locks with the process), so it never blocks the next run. Locks are counted per
  process: ``conformance run`` takes the results lock and pytest's plugin, in the same
  process, takes it again without waiting on itself.
- **Checks.** A location is usable when the file is not a folder, the nearest existing
  folder above it is a folder in which a file can be created, and that file system has at
  least :data:`MIN_FREE_BYTES` free.
- **Modes.** Output files are created ``0o666 & ~umask``, as ``open()`` would.
"""

from __future__ import annotations

import errno
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # not POSIX: no locking (the sandbox needs POSIX anyway)
    fcntl = None  # type: ignore[assignment]


# A full run of the corpus (775 cases, 5,425 items on seven frameworks) writes results.json
# 5.9 MB, behaviour.html 2.5 MB and behaviour.md 1.2 MB: 9.6 MB, next to the previous files
# until each is replaced. Ten times that leaves room for a corpus ten times as large.
MIN_FREE_BYTES = 100 * 1024 * 1024
LOCK_SUFFIX = ".lock"
REPORTS_LOCK_NAME = "behaviour.lock"


class OutputError(Exception):
    """An output location that cannot be used; the message names the path and why."""


class LockHeld(OutputError):
    def __init__(self, message: str, lock: Path, pid: int | None) -> None:
        super().__init__(message)
        self.lock = lock
        self.pid = pid


# ---- umask and modes

def _umask_from_proc() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _umask_by_setting() -> int:
    # the only portable way, and it changes the umask for a moment: done once, at import
    # (start-up, before any thread of the suite's), and only where /proc cannot tell
    old = os.umask(0o022)
    os.umask(old)
    return old


_umask_at_start = _umask_from_proc()
_STARTUP_UMASK: int = _umask_by_setting() if _umask_at_start is None else _umask_at_start


def current_umask() -> int:
    """The process's umask, read without changing it (Linux ``/proc/self/status``), else
    the one it had when this module was imported."""
    value = _umask_from_proc()
    return _STARTUP_UMASK if value is None else value


def file_mode() -> int:
    """The mode a new output file gets: what ``open()`` would give it."""
    return 0o666 & ~current_umask()


# ---- checks

def error_text(exc: BaseException) -> str:
    """``No space left on device (ENOSPC)``: an OS error's reason without its traceback."""
    if isinstance(exc, OSError) and exc.errno:
        name = errno.errorcode.get(exc.errno, str(exc.errno))
        return f"{exc.strerror or os.strerror(exc.errno)} ({name})"
    return str(exc) or type(exc).__name__


def _existing_ancestor(folder: Path) -> Path:
    for candidate in [folder, *folder.parents]:
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def check_folder(folder: Path, label: str, min_free: int = MIN_FREE_BYTES) -> None:
    """Raise :class:`OutputError` ("cannot write <label>: <why>") unless files can be
    created in ``folder`` (or in the nearest folder above it, where it will be made) on a
    file system with ``min_free`` bytes free."""
    base = _existing_ancestor(Path(folder))
    if not base.is_dir():
        raise OutputError(f"cannot write {label}: {base} is not a folder")
    try:  # the one sure test: access() says yes to root on a read-only folder
        fd, probe = tempfile.mkstemp(prefix=".conformance-probe-", dir=base)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise OutputError(f"cannot write {label}: {base} is not writable: {error_text(exc)}") from None
        raise OutputError(f"cannot write {label}: cannot create a file in {base}: {error_text(exc)}") from None
    os.close(fd)
    os.unlink(probe)
    try:
        stats = os.statvfs(base)
    except (OSError, AttributeError):
        return  # no way to tell: a write that fails at the end says so
    free = stats.f_bavail * stats.f_frsize
    if free < min_free:
        raise OutputError(f"cannot write {label}: less than {min_free // 2**20} MB free on the file system of "
                          f"{base} ({free / 2**20:.1f} MB)")


def check_file(path: Path, label: str, min_free: int = MIN_FREE_BYTES) -> None:
    """Raise :class:`OutputError` unless the file ``path`` can be written (replaced) at the
    end of the run."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"cannot write {label}: {path} is a folder")
    check_folder(path.parent, label, min_free)


# ---- locks

_held: dict[str, list] = {}  # real path of a lock file -> [fd, count] held by this process


def lock_path(output: Path) -> Path:
    """The lock file of one output file: ``results.json`` -> ``results.json.lock``."""
    output = Path(output)
    return output.with_name(output.name + LOCK_SUFFIX)


def reports_lock_path(folder: Path) -> Path:
    return Path(folder) / REPORTS_LOCK_NAME


@contextmanager
def holding(lock: Path, what: str, holder: str) -> Iterator[None]:
    """Hold ``lock`` for the block (see :func:`acquire`)."""
    acquire(lock, what, holder)
    try:
        yield
    finally:
        release(lock)


def acquire(lock: Path, what: str, holder: str) -> None:
    """Take the lock file ``lock`` (made, with its folder, if missing) or raise
    :class:`LockHeld` naming it and the pid that holds it. ``what`` says what it guards (for
    the message); ``holder`` is written into it after the pid. Taken again by the process
    that holds it, it is counted, not waited for."""
    lock = Path(lock)
    key = os.path.realpath(lock)
    if key in _held:
        _held[key][1] += 1
        return
    if fcntl is None:
        _held[key] = [None, 1]
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            pid, by = _read_holder(fd)
            os.close(fd)
            held_by = f"pid {pid}" + (f" ({by})" if by else "") if pid else "another process"
            raise LockHeld(f"another run is writing {what}: its lock file {lock} is held by {held_by}; wait for "
                           "it to finish, or write elsewhere", lock, pid) from None
        # the holder before us may have removed the file after we opened it: only the lock
        # on the file that is at the path counts
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n{holder}\n".encode("utf-8", "replace"))
    _held[key] = [fd, 1]


def release(lock: Path) -> None:
    key = os.path.realpath(lock)
    entry = _held.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] > 0:
        return
    del _held[key]
    fd = entry[0]
    if fd is None:
        return
    try:  # removed while still held, so that no other run can be holding this file
        if os.path.samestat(os.fstat(fd), os.stat(lock)):
            os.unlink(lock)
    except OSError:
        pass
    os.close(fd)


def _read_holder(fd: int, wait_s: float = 0.5) -> tuple[int | None, str]:
    """The pid (and what it is) written in a lock file by its holder, which writes it just
    after taking the lock: read again for a moment while it is still empty."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            text = os.pread(fd, 200, 0).decode("utf-8", "replace")
        except OSError:
            text = ""
        first, _, rest = text.partition("\n")
        if first.strip().isdigit():
            return int(first), rest.strip().splitlines()[0] if rest.strip() else ""
        if time.monotonic() >= deadline:
            return None, ""
        time.sleep(0.02)
