"""Case files loaded by a helper process while pytest collects, so that collecting a large
corpus the case cache does not hold uses a second core.

pytest asks for the files one at a time, in its own order (:meth:`Preloader.take`). The
helper, started when collection starts, loads the same list from the other end and sends
each result back (a pickled :class:`~conformance.load.reader.LoadResult`; both ends are this
module, never case text). A file the helper has finished is taken from it; a file it is
loading is waited for; a file it has not reached is loaded by the pytest process itself,
and the helper is told to skip it: the two meet in the middle. A file's result is the
same whichever process loads it (the same loader, vocabulary, shown path and case cache,
which the helper fills as the pytest process would). If the helper fails or dies, the
pytest process loads what is left itself, so results are never lost, only slower.

Used only where it pays (:func:`possible`, :func:`worth_it`): at least :data:`MIN_BYTES`
of files to parse (a helper takes about 0.13 s to start), and two CPUs for each process
collecting at once (one pytest process, or each xdist worker: on 2 CPUs with ``-n 2`` the
workers already use them). ``CONFORMANCE_PRELOAD=off`` never starts one;
``=on`` always does (the tests use it on small corpora). Pure: no pytest.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Sequence

from conformance.load.cache import CaseCache, load_through
from conformance.run.children import child_environment, die_with_parent
from conformance.load.reader import LoadResult, Vocabulary

PRELOAD_ENV = "CONFORMANCE_PRELOAD"
MIN_BYTES = 1_000_000  # about 1,300 cases of the corpus's mix: 0.2 s of parsing
# one file loads in well under a second (at most 1 MB); a helper silent this long is lost
WAIT_S = 30.0


def _setting() -> str:
    return os.environ.get(PRELOAD_ENV, "").strip().lower()


def possible(collecting_processes: int = 1) -> bool:
    """Whether a helper may be started (before looking at the files), when this process is
    one of ``collecting_processes`` collecting at once (xdist's workers): each would start
    its own helper, so it takes two CPUs per collecting process."""
    setting = _setting()
    if setting in ("off", "0", "no", "false") or os.name != "posix":  # the socket goes by file descriptor
        return False
    if setting in ("on", "1", "yes", "true"):
        return True
    return _usable_cpus() >= 2 * collecting_processes


def _usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):  # Linux: the CPUs this process may run on
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worth_it(total_bytes: int) -> bool:
    """Whether ``total_bytes`` of case files to parse pay for a helper's start."""
    return total_bytes >= MIN_BYTES or _setting() in ("on", "1", "yes", "true")


class Preloader:
    """The helper of one collection, for ``files``: (path, shown path) in the order pytest
    will ask for them."""

    def __init__(self, files: Sequence[tuple[str, str]], vocabulary: Vocabulary,
                 cache: CaseCache | None) -> None:
        self.files = list(files)
        self.vocabulary = vocabulary
        self.cache = cache
        self.index = {path: i for i, (path, _) in enumerate(self.files)}
        self.started: set[int] = set()  # the helper said it began these
        self.done: dict[int, LoadResult] = {}  # sent by the helper, not yet taken
        self.taken = 0  # files whose result came from the helper
        self.lost: str | None = None  # why the helper stopped helping, if it failed
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None

    def start(self) -> None:
        parent, child = socket.socketpair()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "conformance.preload", str(child.fileno())],
                pass_fds=[child.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                env=child_environment(), close_fds=True)
        finally:
            child.close()
        self._conn = Connection(parent.detach())
        self._send((self.files, self.vocabulary, self.cache))

    def take(self, path: str | Path) -> LoadResult | None:
        """The helper's result for ``path``, or None: then the caller loads it (and the
        helper will not)."""
        i = self.index.get(str(path))
        if i is None:
            return None
        while self._conn is not None and self._conn.poll(0):  # what has arrived, without waiting
            self._receive()
        while self._conn is not None and i in self.started and i not in self.done:
            self._receive()  # the helper is loading this very file
        result = self.done.pop(i, None)
        if result is not None:
            self.taken += 1
            return result
        self._send(i)  # claimed: the helper skips it
        return None

    def close(self) -> None:
        """Tell the helper to stop after its current file (its cache writes are never cut
        short), and drop what was not taken."""
        self._send(None)
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        self.done.clear()

    def _send(self, message: Any) -> None:
        if self._conn is None:  # the helper was lost: nothing to tell it
            return
        try:
            self._conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as exc:  # the helper is gone
            self._lose(f"the helper could not be reached: {exc}")

    def _receive(self) -> None:
        assert self._conn is not None
        try:
            if not self._conn.poll(WAIT_S):
                self._lose(f"the helper sent nothing for {WAIT_S:g} s")
                return
            message = pickle.loads(self._conn.recv_bytes())
        except (EOFError, OSError):
            # the helper exits when it has passed every file: only an early end is a loss
            self._lose(None if self._finished() else "the helper ended early")
            return
        kind, i = message[0], message[1]
        if kind == "start":
            self.started.add(i)
        elif kind == "done":
            self.done[i] = message[2]
        else:  # "failed": loading raised in the helper; the caller's own load shows why
            self.started.discard(i)

    def _finished(self) -> bool:
        """Whether the helper exited normally (it may be exiting as its socket closes)."""
        if self._proc is None:
            return False
        try:
            return self._proc.wait(timeout=1) == 0
        except subprocess.TimeoutExpired:
            return False

    def _lose(self, why: str | None) -> None:
        self.lost = self.lost or why
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        self.started.clear()  # nothing more will come: the caller loads the rest


# --------------------------------------------------------------------------- the helper


def serve(fd: int) -> None:
    """The helper's loop: load the files from the last to the first, skipping those the
    parent claimed, until it has passed them all or is told to stop."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    gc.disable()  # the results are sent and dropped; the process is short-lived
    conn = Connection(fd)
    if os.getppid() == 1:  # the parent died before prctl took effect
        return
    files, vocabulary, cache = pickle.loads(conn.recv_bytes())
    claimed: set[int] = set()
    for i in range(len(files) - 1, -1, -1):
        while conn.poll(0):
            message = pickle.loads(conn.recv_bytes())
            if message is None:
                return
            claimed.add(message)
        if i in claimed:
            continue
        path, display = files[i]
        conn.send_bytes(pickle.dumps(("start", i)))
        try:
            result = load_through(cache, path, display, vocabulary)
            data = pickle.dumps(("done", i, result), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            data = pickle.dumps(("failed", i))
        conn.send_bytes(data)


if __name__ == "__main__":
    try:
        serve(int(sys.argv[1]))
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass  # the parent is gone or stopped listening
