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
- **Writing.** Every output file of every command is written here (:func:`write_files`, or
  :func:`stage` then :func:`commit`): each to a fresh temporary file in its own folder
  (``mkstemp``: ``O_CREAT | O_EXCL | O_NOFOLLOW`` and a random name, so that no link planted
  at a name it could take is ever followed), fsync'd, then renamed over its place. A rename
  replaces whatever name is there, a symbolic link included, and never writes through it.
  :func:`commit` moves a set of files with SIGINT and SIGTERM held back until the last one is
  in place (a signal that comes meanwhile is delivered after), and should a move fail, puts
  back the files it had already replaced: the folder holds all the old files or all the new.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import stat
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Callable, Iterable, Iterator, Mapping

try:
    import fcntl
except ImportError:  # not POSIX: no locking (the sandbox needs POSIX anyway)
    fcntl = None  # type: ignore[assignment]


# A full run of the corpus (1,745 cases, 22,686 items on seven frameworks and six compiled
# modes) writes results.json 30.7 MB, behaviour.html 7.1 MB and behaviour.md 3.5 MB: 41 MB,
# next to the previous files until each is replaced. 500 MB leaves room for a corpus about
# six times as large (it was 100 MB, ten times the run of 775 cases).
MIN_FREE_BYTES = 500 * 1024 * 1024
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
    if _is_folder(path):  # a link is no folder: it is replaced, never written through
        raise OutputError(f"cannot write {label}: {path} is a folder")
    check_folder(path.parent, label, min_free)


def linked_component(folder: Path) -> Path | None:
    """The first part of ``folder`` (as written, from the left) that is a symbolic link;
    None when none is. For the folders a command writes to by default: a committed link
    there would carry its outputs elsewhere, which only a folder the user names may do."""
    current = Path()
    for part in Path(folder).parts:
        current = current / part
        if os.path.islink(current):
            return current
        if not os.path.lexists(current):
            return None
    return None


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


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
    key = _lock_key(lock)
    if key in _held:
        _held[key][1] += 1
        return
    if fcntl is None:
        _held[key] = [None, 1]
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = _open_lock(lock, what)
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
            same = os.path.samestat(os.fstat(fd), os.lstat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n{holder}\n".encode("utf-8", "replace"))
    _held[key] = [fd, 1]


def release(lock: Path) -> None:
    key = _lock_key(lock)
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
        if os.path.samestat(os.fstat(fd), os.lstat(lock)):
            os.unlink(lock)
    except OSError:
        pass
    os.close(fd)


def _lock_key(lock: Path) -> str:
    """The lock file's name with its folder's links resolved, and not its own: a link
    planted at its name is replaced by the lock file, which must still count as the same."""
    lock = Path(lock)
    return os.path.join(os.path.realpath(lock.parent), lock.name)


_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
    getattr(os, "O_CLOEXEC", 0)


def _open_lock(lock: Path, what: str) -> int:
    """The lock file, opened (made if missing) without following a link: a link planted at
    its name is removed and a lock file made in its place; anything else that is not a
    regular file is refused (:class:`OutputError`)."""
    for _ in range(100):
        try:
            fd = os.open(lock, _LOCK_FLAGS, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP and os.path.islink(lock):  # a link: replaced, never followed
                with _suppress_os_error():
                    os.unlink(lock)
                continue
            if exc.errno in (errno.EISDIR, errno.ENXIO):
                raise OutputError(f"cannot write {what}: its lock file {lock} is not a regular file; remove "
                                  "it") from None
            raise
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        raise OutputError(f"cannot write {what}: its lock file {lock} is not a regular file; remove it")
    raise OutputError(f"cannot write {what}: its lock file {lock} keeps being replaced by a link")


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


# ---- writing: every output file of every command

Data = str | bytes  # str is written as UTF-8
TemporaryMaker = Callable[[Path], tuple[int, str]]
Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers

_SIGNALS: tuple[int, ...] = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None))
                                  if s is not None)
_pending: set[str] = set()  # temporary files this process wrote and has not moved into place or removed


def temporary_file(path: Path) -> tuple[int, str]:
    """A new, empty file in ``path``'s folder, for ``path``'s next contents: ``mkstemp``
    (``O_CREAT | O_EXCL | O_NOFOLLOW``, a random name), so no link planted at its name is
    followed. Returns its descriptor (open for writing) and its path."""
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


class Staged:
    """Files written in full beside their places, not yet in them: :func:`commit` moves
    them into place, :meth:`discard` removes them."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, Path]] = []  # (temporary file, its place)
        self.committed = False

    @property
    def paths(self) -> list[Path]:
        return [path for _, path in self.moves]

    def discard(self) -> None:
        for temporary, _ in self.moves:
            _unlink(temporary)
            _pending.discard(temporary)
        self.moves = []


def stage(files: Mapping[Path, Data], *, temporary: TemporaryMaker | None = None) -> Staged:
    """Write each file's contents to a temporary file beside it (:func:`temporary_file`, or
    ``temporary``), fsync'd, mode ``0o666 & ~umask``. Raises what the writes raise (a full
    disk: ``OSError``), having removed every temporary file; nothing is in place yet."""
    make = temporary or temporary_file
    mode = file_mode()
    staged = Staged()
    try:
        for path, data in files.items():
            path = Path(path)
            _refuse_folder(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = make(path)
            staged.moves.append((name, path))
            _pending.add(name)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
                os.fchmod(fh.fileno(), mode)  # mkstemp makes it 0600
    except BaseException:
        staged.discard()
        raise
    return staged


def commit(*staged: Staged | None, remove: Iterable[Path] = ()) -> None:
    """Move every staged file into place, then remove the names in ``remove`` (the names
    themselves: a link is removed, never what it points to), as one step: SIGINT and SIGTERM
    wait until it is done (:func:`signals_held`), and should a move fail, the files already
    replaced are put back and the error raised, so that the folders hold the old files or the
    new ones, never some of each. Each rename replaces whatever name is at the place, a link
    included."""
    batches = [s for s in staged if s is not None]
    moves = [move for batch in batches for move in batch.moves]
    removed = [Path(path) for path in remove]
    try:
        for _, path in moves:
            _refuse_folder(path)
    except BaseException:
        for batch in batches:
            batch.discard()
        raise
    with signals_held():
        done: list[tuple[Path, str | None]] = []
        try:
            for temporary, path in moves:
                aside = _link_aside(path)
                try:
                    os.replace(temporary, path)
                except BaseException:
                    if aside is not None:
                        _unlink(aside)
                    raise
                _pending.discard(temporary)
                done.append((path, aside))
        except BaseException:
            for path, aside in reversed(done):  # the previous files back, each in its place
                with _suppress_os_error():
                    if aside is None:
                        os.unlink(path)
                    else:
                        os.replace(aside, path)
            for batch in batches:
                batch.discard()
            raise
        for _, aside in done:
            if aside is not None:
                _unlink(aside)
        for path in removed:
            _unlink(path)
        for batch in batches:
            batch.moves, batch.committed = [], True
        _sync_folders({path.parent for _, path in moves} | {path.parent for path in removed})


def write_files(files: Mapping[Path, Data], *, remove: Iterable[Path] = (),
                temporary: TemporaryMaker | None = None) -> list[Path]:
    """Write the files (and remove the names in ``remove``) as one step: :func:`stage`,
    then :func:`commit`. Returns the paths written."""
    staged = stage(files, temporary=temporary)
    commit(staged, remove=remove)
    return [Path(path) for path in files]


def write_new_file(path: Path, data: Data) -> None:
    """Write a file that must not exist yet (``FileExistsError`` if anything is at its
    name, a dangling link included): written beside it first, then hard-linked into place,
    which never follows a link and never replaces anything."""
    path = Path(path)
    staged = stage({path: data})
    try:
        (temporary, _), = staged.moves
        os.link(temporary, path, follow_symlinks=False)
    finally:
        staged.discard()


def create_replacing(path: Path) -> int:
    """A new, empty file at ``path``, mode ``0o666 & ~umask``, open for writing: made under
    a temporary name, then renamed over whatever is at ``path`` (a link is replaced, never
    followed). Returns its descriptor."""
    path = Path(path)
    _refuse_folder(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = temporary_file(path)
    try:
        os.fchmod(fd, file_mode())
        os.replace(name, path)
    except BaseException:
        os.close(fd)
        _unlink(name)
        raise
    return fd


def discard_pending() -> None:
    """Remove every temporary file this process wrote and did not move into place (a
    command that was interrupted between writing and moving its files)."""
    for name in list(_pending):
        _unlink(name)
        _pending.discard(name)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait for the block: blocked in this thread
    (``pthread_sigmask``), and, should another thread take one meanwhile, its Python
    handler is held back too; each signal that came is delivered, to the handler it would
    have reached, once the block is done."""
    came: list[int] = []
    replaced: dict[int, Handler] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _SIGNALS:
            previous = signal.getsignal(signum)
            if previous is not None:  # None: installed from C, left alone
                signal.signal(signum, lambda number, frame: came.append(number))
                replaced[signum] = previous
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        for signum, previous in replaced.items():
            signal.signal(signum, previous)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal that waited is delivered now
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)


class Interrupts:
    """For the length of a command: the first SIGINT or SIGTERM raises
    ``KeyboardInterrupt`` (so that a polite kill ends the command as Ctrl-C does, where it
    can say what it left behind); once :meth:`hold` is called, or for any later one, a
    signal is only recorded, and a second signal before :meth:`hold` ends the process at
    once (status 130) after removing the temporary files it wrote, with one line on stderr
    (``line``'s). Installed from the main thread only."""

    def __init__(self, line: Callable[[Interrupts], str] | None = None) -> None:
        self.line = line  # what the command says when a signal stops it (given this object)
        self.received: int | None = None
        self.holding = False
        self._previous: dict[int, Handler | None] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    @property
    def name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else "a signal"

    def hold(self) -> None:
        """From now on a signal is recorded only (what is left to do is letting go)."""
        self.holding = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            if not self.holding:
                raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
            return
        if self.holding:
            return
        discard_pending()
        said = self.line(self) if self.line is not None else f"conformance: stopped by {self.name}"
        os.write(2, f"{said} (at once, by a second {signal.Signals(signum).name})\n".encode("utf-8", "replace"))
        os._exit(130)


def _refuse_folder(path: Path) -> None:
    if _is_folder(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))


def _link_aside(path: Path) -> str | None:
    """A second name (hard link) for what is at ``path`` now, so that it can be put back;
    None when nothing is there or the file system has no hard links."""
    try:
        os.lstat(path)
    except OSError:
        return None
    for _ in range(100):
        aside = path.with_name(f".{path.name}.{secrets.token_hex(8)}.old")
        try:
            os.link(path, aside, follow_symlinks=False)  # never follows a link, at either end
        except FileExistsError:
            continue
        except OSError:
            return None
        return str(aside)
    return None


def _sync_folders(folders: Iterable[Path]) -> None:
    """The renames themselves on disk (fsync of each folder), where the system allows it."""
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _unlink(path: str | Path) -> None:
    with _suppress_os_error():
        os.unlink(path)


@contextmanager
def _suppress_os_error() -> Iterator[None]:
    try:
        yield
    except OSError:
        pass


def read_regular_text(path: Path, limit: int = 64 * 2**20) -> str:
    """The UTF-8 text of a regular file, read without following a link (``OSError`` for a
    link, a FIFO, a device or a folder; ``UnicodeDecodeError`` for other bytes), at most
    ``limit`` bytes: for outputs read back (``report --check``), which a checkout may hold as
    links to anything."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return stream.read(limit).decode("utf-8")
