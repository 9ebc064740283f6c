"""Run cases in a child process, so that a crash or a hang of a framework costs one item,
never the run.

The pytest process (or each xdist worker) imports no framework. It starts one child
``python -m conformance.run.sandbox`` on first use; the child imports each framework when a
case first needs it and runs ``engine.run(case, adapter)`` for every item it is sent, over
a socket pair. Messages are plain data (:mod:`conformance.codec`, never pickle): the child
builds only the model's classes from what the parent sends (the ``Case``), and the parent
only the engine's outcome classes from what the child sends (the ``Outcome``, whose
observations the engine already reduced to plain data). The child runs code a case drives
into a framework, so the parent trusts nothing it says beyond those classes.

One child for all frameworks, not one per framework: interop cases import the other
frameworks anyway, and importing each framework once per process is most of a run's cost
(docs/reliability.md). A framework whose adapter declares ``own_process`` runs in a child
of its own instead: one that cannot share a process with the others in every import order
(MindSpore 2.10 fails to import after Paddle 3.3, whose bundled oneDNN shadows MindSpore's:
"undefined symbol: dnnl_threadpool_interop_stream_create").

When the child dies (segfault, abort, out-of-memory kill) the item it was running gets an
``error`` naming the signal and the last lines the child wrote (faulthandler prints the
Python stack of a segfault); when an item runs past the timeout the child is asked for its
stack (faulthandler on SIGUSR1), killed, and the item gets an ``error`` with that stack.
Either way the next item starts a fresh child, which re-imports what it needs.

A crash can belong to an earlier item: a case that leaves a dangling alias (a NumPy view of
a torch tensor's storage that a later ``resize_`` frees) passes, and the heap it damaged
aborts whatever runs next. So an item whose child crashed after running others is run
again alone in a fresh child: if it crashes again the crash is its own; if not, its outcome
is what it did, and the items that ran before it in the dead child are tried, most recent
first, each followed by the crashed item in a fresh child, to name the one that left the
process in a bad state (:attr:`FrameworkProcess.last_crash`).

The child's memory is capped (``RLIMIT_DATA``, :data:`MEMORY_LIMIT_MB`): an allocation past
it fails in the framework (MemoryError), which the engine turns into the item's error,
instead of the machine swapping or the kernel killing processes.

Cost: one round trip per item, the case sent once for its consecutive items (see
docs/reliability.md for the figures). Pure: no pytest.
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from conformance import codec, kinds, registry
from conformance.model import CASE_TYPES, Case
from conformance.outcomes import OUTCOME_TYPES
from conformance.run.caches import CompilerCaches, open_caches

# what each end may build from the other's messages
_FROM_PARENT = codec.Allowlist((*CASE_TYPES, *kinds.value_types()))
_FROM_CHILD = codec.Allowlist(OUTCOME_TYPES)

DEFAULT_TIMEOUT_S = 60.0  # per item, not counting the framework's import
STARTUP_TIMEOUT_S = 300.0  # the child's start, framework import included
# lines of the child's output kept in a crash or timeout report: the start (a framework's
# own message, e.g. torch's "terminate called ... what(): ...") and the end (the stack)
OUTPUT_HEAD_LINES, OUTPUT_TAIL_LINES = 20, 60
_STACK_DUMP_WAIT_S = 2.0  # how long a hung child gets to write its stack before SIGKILL
# The child's data segment (heap and private mappings), in MiB: torch and Paddle imported
# take about 350 MiB, and the limits of conformance.limits keep a case's tensors to a few
# MiB, so this is far above what a case needs and far below what would hurt the machine.
# CONFORMANCE_CHILD_MEMORY_MB sets another value; 0 switches the cap off.
MEMORY_LIMIT_MB = 4096
MEMORY_ENV = "CONFORMANCE_CHILD_MEMORY_MB"
# earlier items tried, most recent first, when looking for the one that left a crash behind
MAX_CULPRIT_TRIES = 5
# An earlier item is named only when the crash comes back after it in each of this many
# tries, each in a fresh child: a crash that came from outside during one try (a kill, the
# machine's OOM killer) must not blame it.
CULPRIT_CONFIRMATIONS = 2
# Signals that come from outside the process (a user, a supervisor, the OOM killer): a
# framework crashing on its own raises SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL, never
# these, so a child ended by one is not a crash any item caused, and no item is blamed.
EXTERNAL_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT})
# The child's interpreter, when it is not this one: the Python of another environment (a
# framework release's, made by ``conformance matrix``), which imports the frameworks from
# its own site-packages and only this package from here (:func:`child_environment`).
CHILD_PYTHON_ENV = "CONFORMANCE_CHILD_PYTHON"
# the child: this module's serve(), given the socket's file descriptor
CHILD_MODULE = ["-m", "conformance.run.sandbox"]
# A fork copies the locks a framework's own threads hold at that moment, and nothing in the
# new process ever releases them: Paddle's interpreter frees a program's tensors on a
# garbage-collector thread of its own (InterpreterCoreEventGarbageCollector), which holds
# the allocator's lock while it runs: the one cause found for an item that once hung in its
# first to_tensor (a hang not reproduced since).
# So a fork server forks only when every other thread of it is asleep (waiting for work,
# so holding no lock), seen so twice this far apart, and waits at most QUIET_WAIT_S for it.
QUIET_RECHECK_S = 0.001
QUIET_WAIT_S = 10.0
# the states of /proc/<pid>/task/<tid>/stat of a thread that is not running: sleeping in
# the kernel (a futex, a poll, a condition variable), or gone
_ASLEEP_STATES = frozenset("SZXI")


def child_python() -> str | None:
    """The interpreter of another environment the children run in (:data:`CHILD_PYTHON_ENV`),
    or None: this process's own. In another environment the framework this process sees
    (its version, whether it is installed) is not the one the items run on: only the child
    can say."""
    return os.environ.get(CHILD_PYTHON_ENV, "").strip() or None


def child_command() -> list[str]:
    return [child_python() or sys.executable, *CHILD_MODULE]


class SandboxError(Exception):
    """The item could not be run to an outcome: the child crashed, hung, or the adapter
    raised. ``reason`` is one line for the results; ``details`` the child's last output
    or the traceback."""

    def __init__(self, reason: str, details: str = "", crashed: bool = False, signal_number: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = details
        self.crashed = crashed  # the child died (not a timeout, not an adapter exception)
        self.signal_number = signal_number  # the signal that ended it, if one did

    @property
    def external(self) -> bool:
        """The child was ended from outside (:data:`EXTERNAL_SIGNALS`), not by what it ran."""
        return self.crashed and self.signal_number in EXTERNAL_SIGNALS


@dataclass
class CrashNote:
    """An item's child crashed, and the item ran to an outcome when run again alone in a
    fresh child: the crash came from the state an earlier item left."""

    reason: str  # the crash, as it was first seen ("... crashed with signal SIGABRT ...")
    culprit: tuple[str, str] | None  # (case id, framework) of the item after which it crashes again
    tried: list[tuple[str, str]] = field(default_factory=list)  # earlier items tried, most recent first
    ran_before: list[tuple[str, str]] = field(default_factory=list)  # what the dead child had run, in order
    external: bool = False  # ended by a signal from outside: no earlier item was tried

    def text(self) -> str:
        first = f"the framework process crashed while running this item ({self.reason.split(';')[0]}), "
        first += "and run again alone in a fresh process it ran to the outcome recorded"
        if self.external:
            return (f"{first}; that signal comes from outside the process (a kill, the system's out-of-memory "
                    "killer), never from a framework's own crash, so no earlier item is blamed")
        if self.culprit is not None:
            case, framework = self.culprit
            return (f"{first}: the crash comes from {case}[{framework}], which ran before it in the same process: "
                    f"run alone before this item in a fresh process, it makes this item crash again")
        tried = ", ".join(f"{c}[{f}]" for c, f in self.tried) or "none"
        return (f"{first}; the crash did not come back after any single earlier item tried alone, each "
                f"{CULPRIT_CONFIRMATIONS} times ({tried}), so it depends on several of the {len(self.ran_before)} "
                "items that ran before it, or came from outside")


class FrameworkUnavailable(Exception):
    """The child could not set the framework up (its import failed): items skip with this."""


def signal_description(returncode: int) -> str:
    """``-11`` -> ``signal SIGSEGV (Segmentation fault)``; other codes -> ``exit status N``."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"signal {-returncode}"
        return f"signal {sig.name} ({signal.strsignal(sig) or sig.name})"
    return f"exit status {returncode}"


class Sandbox:
    """The child processes of one pytest process: the one all frameworks share, and one for
    each framework whose adapter declares ``own_process`` (the module's docstring), each
    started on the first item it runs and again after it is lost."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT_S,
                 startup_timeout: float = STARTUP_TIMEOUT_S, caches: CompilerCaches | None = None) -> None:
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        # the compilers' caches of the children (conformance.run.caches): the caller's, or
        # this sandbox's own, opened on first use and closed with it
        self._caches = caches
        self._own_caches = caches is None
        self._children: dict[str, FrameworkProcess] = {}
        self._last: FrameworkProcess | None = None  # the child of the last item run
        # set by run(): the item's child crashed and the crash came from an earlier item
        self.last_crash: CrashNote | None = None

    def run(self, case: Case, framework: str) -> Any:
        """The case's Outcome on the framework, from the shared child or the framework's own
        (:meth:`FrameworkProcess.run`)."""
        place = framework if _own_process(framework) else ""
        child = self._children.get(place)
        if child is None:
            if self._caches is None:
                self._caches = open_caches()
            child = self._children[place] = FrameworkProcess(self.timeout, self.startup_timeout, self._caches)
        self._last = child
        try:
            return child.run(case, framework)
        finally:
            self.last_crash = child.last_crash

    def new_output(self) -> str:
        """What the child of the last item wrote since the last call."""
        return self._last.new_output() if self._last is not None else ""

    @property
    def environments(self) -> dict[str, dict[str, Any]]:
        """framework -> {"version", "devices"}, as its child found them."""
        found: dict[str, dict[str, Any]] = {}
        for child in self._children.values():
            found.update(child.environments)
        return found

    @property
    def starts(self) -> int:
        return sum(child.starts for child in self._children.values())

    def close(self) -> None:
        for child in self._children.values():
            child.close()
        if self._own_caches and self._caches is not None:
            self._caches.close()
            self._caches = None


def _own_process(framework: str) -> bool:
    return bool(getattr(registry.adapter_class(framework), "own_process", False)
                or _process_per_item(framework))


def _process_per_item(framework: str) -> bool:
    return bool(getattr(registry.adapter_class(framework), "process_per_item", False))


class FrameworkProcess:
    """One child process, which runs the items of one framework: started on first use and
    again after it is lost."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT_S,
                 startup_timeout: float = STARTUP_TIMEOUT_S, caches: CompilerCaches | None = None) -> None:
        self.timeout = timeout if timeout and timeout > 0 else None
        self.startup_timeout = startup_timeout
        self.caches = caches  # the child's environment: no variable into a checkout, the compilers' caches
        self._folder: str | None = None  # the child's working folder: its own, empty, removed with it
        # framework -> {"version", "devices"}, as the child found them
        self.environments: dict[str, dict[str, Any]] = {}
        self.starts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._log: Any = None  # the child's stdout and stderr
        self._log_read = 0
        # the child keeps the last case it was sent: sent again when another case, or the same
        # case with other expectations (conformance observe's probe of one framework's names)
        self._case_in_child: Case | None = None
        self._set_up: set[str] = set()  # frameworks the child has imported
        self._busy = False  # a request was sent and its answer not yet received
        self._history: list[tuple[Case, str]] = []  # items the current child has run, in order
        self._item_pid: int | None = None  # a fork server's process of the item running now
        # set by run(): the item's child crashed and the crash came from an earlier item
        self.last_crash: CrashNote | None = None

    # ---- lifecycle

    def _start(self) -> None:
        parent, child = socket.socketpair()
        self._log = tempfile.TemporaryFile(prefix="conformance-sandbox-")
        self._log_read = 0
        self._case_in_child = None
        self._set_up = set()
        self._history = []
        # A working folder of its own, empty: ``python -m`` puts the working folder first on
        # the child's import path, and frameworks read and write files relative to it
        # (docs/security.md, "The framework process starts in an empty folder of its own").
        self._folder = tempfile.mkdtemp(prefix="conformance-child-")
        try:
            self._proc = subprocess.Popen(
                [*child_command(), str(child.fileno())],
                pass_fds=[child.fileno()], stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=self._log, env=child_environment(self.caches), cwd=self._folder, close_fds=True)
        finally:
            child.close()
        self._conn = Connection(parent.detach())
        self.starts += 1
        self._receive(self.startup_timeout, "starting")

    def close(self) -> None:
        """Stop the child (politely when it is idle, by force when it is still running an
        item, e.g. after Ctrl-C) and drop its log."""
        if self._conn is not None:
            try:
                _send(self._conn, None)
            except OSError:
                pass
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            if self._busy:
                self._proc.kill()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
            self._busy = False
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    # ---- running

    def run(self, case: Case, framework: str) -> Any:
        """The case's Outcome on the framework. Raises SandboxError when the child crashed,
        timed out or the adapter raised; FrameworkUnavailable when the framework cannot be
        set up. A crash after other items is run again alone first (the module's
        docstring); :attr:`last_crash` then says where it came from."""
        self.last_crash = None
        before = list(self._history)
        try:
            return self._run(case, framework)
        except SandboxError as lost:
            if not lost.crashed or not before:
                raise
            crash = lost
        try:
            outcome = self._run(case, framework)  # alone: the crash closed the child
        except SandboxError as again:
            if again.external:
                raise SandboxError(f"{crash.reason}; run again alone in a fresh process it was ended again by a "
                                   "signal from outside the process (a kill, the system's out-of-memory killer), "
                                   "so it has no outcome", again.details, crashed=True,
                                   signal_number=again.signal_number) from None
            if again.crashed:
                raise SandboxError(f"{crash.reason}; run again alone in a fresh process it crashed again, so the "
                                   "crash is its own", crash.details, crashed=True,
                                   signal_number=again.signal_number) from None
            raise
        if crash.external:
            self.last_crash = CrashNote(crash.reason, None, ran_before=[(c.id, f) for c, f in before], external=True)
        else:
            self.last_crash = self._find_culprit(case, framework, before, crash)
        return outcome

    def _find_culprit(self, case: Case, framework: str, before: list[tuple[Case, str]],
                      crash: SandboxError) -> CrashNote:
        """Try the items that ran before the crash, most recent first: each in a fresh
        child, then the crashed item; the first after which it crashes again, by a
        framework's own signal, in each of :data:`CULPRIT_CONFIRMATIONS` tries is named."""
        note = CrashNote(crash.reason, None, ran_before=[(c.id, f) for c, f in before])
        for earlier, earlier_framework in reversed(before[-MAX_CULPRIT_TRIES:]):
            note.tried.append((earlier.id, earlier_framework))
            if all(self._crashes_after(earlier, earlier_framework, case, framework)
                   for _ in range(CULPRIT_CONFIRMATIONS)):
                note.culprit = (earlier.id, earlier_framework)
                break
        self.close()  # the next item starts from a fresh process, whatever the last try left
        return note

    def _crashes_after(self, earlier: Case, earlier_framework: str, case: Case, framework: str) -> bool:
        """Whether ``case`` crashes, by a framework's own signal, right after ``earlier`` in a
        fresh child."""
        self.close()
        try:
            self._run(earlier, earlier_framework)
            self._run(case, framework)
        except SandboxError as lost:
            return lost.crashed and not lost.external
        except FrameworkUnavailable:
            return False
        return False

    def _run(self, case: Case, framework: str) -> Any:
        if self._conn is None:
            self._start()
        assert self._conn is not None
        if framework not in self._set_up:
            # the framework's import has the startup limit, not the item's
            _send(self._conn, ("setup", framework))
            message = self._receive(self.startup_timeout, f"importing {framework}")
            if message[0] == "unavailable":
                raise FrameworkUnavailable(message[1])
            self.environments[framework] = message[1]
            self._set_up.add(framework)
        # a case's items run one after another: send the case once, then name it
        payload = None if self._case_in_child is case or self._case_in_child == case else case
        forked = _process_per_item(framework)
        try:
            _send(self._conn, ("fork" if forked else "run", case.id, payload, framework))
        except OSError:  # the child died while it waited for this item: _receive says how
            pass
        self._case_in_child = case
        if forked:  # the item runs in a process of its own, forked from this child (fork_item)
            message = self._receive(self.startup_timeout, "starting this case's process")
            if message[0] == "forked":
                self._item_pid = message[1]
                message = self._receive(self.timeout, "running this case")
            self._item_pid = None
            if message[0] == "crashed":
                raise SandboxError(f"the framework process crashed with {signal_description(message[1])} while "
                                   "running this case (in a process of its own, forked for this item)",
                                   self._last_output(), crashed=True,
                                   signal_number=-message[1] if message[1] < 0 else None)
        else:
            message = self._receive(self.timeout, "running this case")
        if message[0] == "outcome":
            if not forked:  # an item in a process of its own leaves nothing behind for the next
                self._history.append((case, framework))
            return message[1]
        raise SandboxError(message[1], message[2])  # the engine or adapter raised

    def new_output(self) -> str:
        """What the child wrote since the last call (framework warnings, prints)."""
        if self._log is None:
            return ""
        size = os.fstat(self._log.fileno()).st_size
        if size == self._log_read:
            return ""
        data = os.pread(self._log.fileno(), size - self._log_read, self._log_read)
        self._log_read = size
        return data.decode("utf-8", errors="replace")

    def _receive(self, timeout: float | None, doing: str) -> Any:
        assert self._conn is not None and self._proc is not None
        self._busy = True
        try:
            if self._conn.poll(timeout):
                data = self._conn.recv_bytes()
                self._busy = False
                try:
                    return _FROM_CHILD.loads(data)
                except codec.CodecError as exc:
                    self.close()
                    raise SandboxError(f"the framework process sent a message that is not an outcome ({exc}); it "
                                       "was stopped and restarted for the next item") from None
        except (EOFError, OSError):
            pass  # the child is gone; below says how
        else:
            self._lost_by_timeout(timeout, doing)
        code = self._proc.wait()
        output = self._last_output()
        self.close()
        raise SandboxError(f"the framework process crashed with {signal_description(code)} "
                           f"while {doing}; it was restarted for the next item", output, crashed=True,
                           signal_number=-code if code < 0 else None)

    def _lost_by_timeout(self, timeout: float | None, doing: str) -> None:
        assert self._proc is not None
        # ask for the Python stack of every thread (faulthandler in the child, or in the item's
        # own process forked from it), then kill
        try:
            if self._item_pid is not None:
                _signal_quietly(self._item_pid, signal.SIGUSR1)
            else:
                self._proc.send_signal(signal.SIGUSR1)
            deadline = time.monotonic() + _STACK_DUMP_WAIT_S
            before = -1
            while time.monotonic() < deadline:  # until the dump stops growing
                time.sleep(0.1)
                size = os.fstat(self._log.fileno()).st_size
                if size == before:
                    break
                before = size
        finally:
            if self._item_pid is not None:
                _signal_quietly(self._item_pid, signal.SIGKILL)
                self._item_pid = None
            self._proc.kill()
            self._proc.wait()
        output = self._last_output()
        self.close()
        raise SandboxError(f"timed out after {timeout:g} s while {doing}: the framework "
                           "process was killed and restarted for the next item", output)

    def _last_output(self) -> str:
        lines = self.new_output().rstrip().splitlines()
        if len(lines) > OUTPUT_HEAD_LINES + OUTPUT_TAIL_LINES:
            cut = len(lines) - OUTPUT_HEAD_LINES - OUTPUT_TAIL_LINES
            lines = [*lines[:OUTPUT_HEAD_LINES], f"[... {cut} lines ...]", *lines[-OUTPUT_TAIL_LINES:]]
        return "\n".join(lines)


# --------------------------------------------------------------------------- the child


def child_environment(caches: CompilerCaches | None = None) -> dict[str, str]:
    """The parent's environment, with its import path, made a framework process's by
    ``caches`` (no variable pointing into a checkout; the compilers' caches, which replace
    the parent's values, :meth:`CompilerCaches.apply`): a child must import exactly what this process
    imports (adapters registered through entry points, a checkout that is not installed).
    The working folder, which ``python -m`` or ``python -c`` put first on this process's
    path as ``''``, never reaches a child's path: where this package is imported from there
    (a checkout run with ``python -m pytest``), the child gets this package alone in its
    place (:func:`package_only_path`), not the folder, whose other files (a ``numpy.py``, a
    ``sitecustomize.py``, a case folder's anything) it would import. A child in another
    environment (:func:`child_python`) gets this package alone on its path, and its own
    site-packages for everything else (adapters registered by other packages' entry points
    are the ones installed there)."""
    env = dict(os.environ)
    if child_python() is not None:
        env["PYTHONPATH"] = package_only_path()
    else:
        home = str(Path(__file__).resolve().parent.parent.parent)  # the folder that holds conformance/
        here = os.path.realpath(os.getcwd()) == os.path.realpath(home)
        keep = [p or package_only_path() for p in sys.path if p or here]
        env["PYTHONPATH"] = os.pathsep.join(keep)
    return caches.apply(env) if caches is not None else env


def package_only_path() -> str:
    """A folder that holds nothing but a link named ``conformance`` to this package: on a
    child's path it adds this package (a checkout's or an installed one) and nothing else
    of the environment it sits in."""
    package = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.gettempdir()) / f"conformance-package-{os.getuid()}-{zlib.crc32(str(package).encode()):08x}"
    folder.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        # another local user made it first (the temporary folder is shared): one of our own
        folder = Path(tempfile.mkdtemp(prefix="conformance-package-"))
    link = folder / "conformance"
    if not link.is_symlink() or os.readlink(link) != str(package):
        temporary = folder / f".conformance-{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(package, target_is_directory=True)
        os.replace(temporary, link)  # atomic: a concurrent child sees the old link or the new one
    return str(folder)


def die_with_parent() -> None:
    """Linux: the kernel kills this child if the process that started it dies (even by
    SIGKILL), so that no child outlives an interrupted run."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        except (OSError, AttributeError):
            pass



def _send(conn: Connection, message: Any) -> None:
    conn.send_bytes(codec.dumps(message))


def _signal_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:  # gone already
        pass


def other_threads_asleep(task_folder: str = "/proc/self/task") -> bool:
    """Whether every thread of this process but the calling one is asleep (True where the
    system does not say: no /proc)."""
    me = str(threading.get_native_id())
    try:
        tids = os.listdir(task_folder)
    except OSError:
        return True
    for tid in tids:
        if tid == me:
            continue
        try:
            with open(f"{task_folder}/{tid}/stat", "rb") as f:
                stat_line = f.read()
        except OSError:  # it ended
            continue
        # "tid (name) state ...": the name may hold spaces and parentheses, the state follows the last ")"
        state = stat_line[stat_line.rfind(b")") + 2:][:1].decode("ascii", "replace")
        if state not in _ASLEEP_STATES:
            return False
    return True


def wait_for_quiet_threads(limit_s: float = QUIET_WAIT_S) -> bool:
    """Wait until every other thread of this process is asleep, seen so twice
    :data:`QUIET_RECHECK_S` apart, at most ``limit_s``; whether they were."""
    deadline = time.monotonic() + limit_s
    while True:
        if other_threads_asleep():
            time.sleep(QUIET_RECHECK_S)
            if other_threads_asleep():
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(QUIET_RECHECK_S)


def fork_item(conn: Connection, case: Case, adapter: Any) -> None:
    """Run one item in a process of its own, forked from this one (a fork server: it has
    imported the framework, set the adapter up and warmed it, and done nothing else), so
    that every item starts from the same state without paying the framework's import.

    One writer on the connection at a time: the item's process sends ``("forked", pid)``
    and then its outcome while this process waits for it to end; only if it ended
    without an outcome (a crash) does this process send ``("crashed", status)``.

    It forks when the framework's own threads are asleep (:func:`wait_for_quiet_threads`):
    a lock one of them held at the fork would be held forever in the item's process."""
    wait_for_quiet_threads()
    pid = os.fork()
    if pid == 0:  # the item's process: never returns
        status = 1
        try:
            die_with_parent()  # the fork cleared it: ends with the fork server
            _send(conn, ("forked", os.getpid()))
            conn.send_bytes(item_reply(case, adapter))
            status = 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, code = os.waitpid(pid, 0)
    if code != 0:  # it ended without sending its outcome
        _send(conn, ("crashed", -os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.WEXITSTATUS(code)))


def item_reply(case: Case, adapter: Any) -> bytes:
    """The child's answer to one item, encoded: its outcome, or what the engine or the
    adapter raised (or that the outcome cannot be sent)."""
    from conformance.run.engine import run

    try:
        outcome = run(case, adapter)
    except Exception as exc:
        return codec.dumps(("raised", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    try:
        return codec.dumps(("outcome", outcome), _FROM_CHILD)
    except codec.CodecError as exc:  # an adapter returned something the engine did not make plain
        return codec.dumps(("raised", f"the outcome cannot be sent: {exc}", traceback.format_exc()))


def memory_limit_mb() -> int:
    """The cap on the child's data segment, in MiB (0: none)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    try:
        return max(int(text), 0) if text else MEMORY_LIMIT_MB
    except ValueError:
        return MEMORY_LIMIT_MB


def cap_memory() -> None:
    """Cap the data segment (Linux counts heap and private writable mappings, so every
    framework allocation): past it allocations fail inside the framework, which raises."""
    limit = memory_limit_mb()
    if not limit or not hasattr(resource, "RLIMIT_DATA"):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    wanted = limit * 2**20
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_DATA, (wanted, hard))


def serve(fd: int) -> None:
    """The child's loop: run each item sent until None (or the parent is gone)."""
    die_with_parent()
    cap_memory()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    faulthandler.enable()  # a segfault prints the Python stack where it happened
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent's timeout asks for it
    conn = Connection(fd)
    if os.getppid() == 1:  # the parent died before prctl took effect
        return
    from conformance import registry

    _send(conn, ("ready",))
    case = None
    while True:
        try:
            message = _FROM_PARENT.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "setup":
            adapter = registry.get_adapter(message[1])
            try:
                adapter.setup()
            except Exception as exc:  # e.g. an import error inside the framework
                _send(conn, ("unavailable", f"{message[1]} could not be set up: {type(exc).__name__}: {exc}"))
                continue
            if getattr(adapter, "process_per_item", False):
                adapter.warm()  # a fork server: what every item's process starts from
            # the framework's modules live as long as the process: out of the cyclic GC's
            # sight, so that collections during the items do not traverse them again (and,
            # in a fork server, the items' processes do not copy them)
            gc.freeze()
            _send(conn, ("ready", {"version": adapter.version(), "devices": adapter.devices()}))
            continue
        kind, case_id, payload, framework = message
        if payload is not None:
            case = payload
        assert case is not None and case.id == case_id, "the parent names a case it did not send"
        if kind == "fork":
            fork_item(conn, case, registry.get_adapter(framework))
        else:
            conn.send_bytes(item_reply(case, registry.get_adapter(framework)))


if __name__ == "__main__":
    serve(int(sys.argv[1]))
