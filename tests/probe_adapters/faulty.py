"""The ``faulty`` framework: NumPy's adapter plus operations that fail the way a framework
can fail below Python, and one that trips a bug in the adapter's own probes. The sandbox
must turn each into that item's error and go on."""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
import time
from typing import Any

from conformance.adapters.base import Operation
from conformance.adapters.numpy_adapter import NumpyAdapter

# where fn:hang writes the pid of the process running it (the sandbox child), so that a
# test can check the child does not outlive an interrupted run
PID_FILE_VARIABLE = "FAULTY_PID_FILE"


def _hang(*args: Any) -> Any:
    path = os.environ.get(PID_FILE_VARIABLE)
    if path:
        with open(path, "w") as f:
            f.write(str(os.getpid()))
    while True:  # in C (sleep), like a framework kernel that never returns
        time.sleep(3600)


def _segfault(*args: Any) -> Any:
    return ctypes.string_at(0)  # reads address 0: SIGSEGV


def _abort(*args: Any) -> Any:
    os.abort()  # what a failed C++ assertion in a framework does: SIGABRT


def _exit(*args: Any) -> Any:
    os._exit(3)  # a framework that calls exit() from C


_poisoned = False


def _poison(x: Any) -> Any:
    """Passes, and leaves the process broken for whatever runs next, as a write through a
    dangling alias damages the heap and the next allocation aborts."""
    global _poisoned
    _poisoned = True
    return x


class Unreadable:
    """A result this adapter claims as an array and then cannot read: an adapter bug."""

    shape = (1,)  # its shape reads (the engine bounds every result by it); its values do not


def _unreadable(*args: Any) -> Any:
    return Unreadable()


class FaultyAdapter(NumpyAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "faulty"

    def operations(self) -> dict[str, Operation]:
        return {**super().operations(), "fn:hang": _hang, "fn:segfault": _segfault,
                "fn:abort": _abort, "fn:exit": _exit, "fn:unreadable": _unreadable, "fn:poison": _poison,
                "fn:allocate": _allocate}

    def make_input(self, spec: Any, device: str) -> Any:
        if _poisoned:  # the damage an earlier item did shows here, in the next item
            os.abort()
        return super().make_input(spec, device)

    def is_array(self, obj: Any) -> bool:
        return isinstance(obj, Unreadable) or super().is_array(obj)

    def to_numpy(self, obj: Any) -> Any:
        if isinstance(obj, Unreadable):
            raise RuntimeError("this adapter cannot read what its own operation returned")
        return super().to_numpy(obj)


# where ForkedFaultyAdapter.warm writes a line each time it runs (once per fork server)
WARM_FILE_VARIABLE = "FAULTY_WARM_FILE"
# set: ForkedFaultyAdapter.warm leaves a thread of its own holding _allocator_lock while it
# works on, in C, for about a second, as Paddle's garbage collector frees a warm-up
# program's tensors on its own thread under the allocator's lock
BUSY_AFTER_WARM_VARIABLE = "FAULTY_BUSY_AFTER_WARM"
_allocator_lock = threading.Lock()


def _busy_holding_the_lock() -> None:
    with _allocator_lock:
        hashlib.pbkdf2_hmac("sha256", b"work", b"in C", 5_000_000)  # about 1 s, without the GIL


def _allocate(x: Any) -> Any:
    """Takes the lock the warm-up's thread held: in a process forked while that thread held
    it, nothing can ever release it."""
    if not _allocator_lock.acquire(timeout=5):
        raise RuntimeError("the allocator's lock is held forever: this process was forked while a thread held it")
    _allocator_lock.release()
    return x.copy()


class ForkedFaultyAdapter(FaultyAdapter):
    """The same operations, each item in a process of its own forked from a fork server
    (conformance.run.sandbox.fork_item), as paddle_static's are."""

    name = "faulty_forked"
    own_process = True
    process_per_item = True

    def warm(self) -> None:
        path = os.environ.get(WARM_FILE_VARIABLE)
        if path:
            with open(path, "a") as f:
                f.write(f"{os.getpid()}\n")
        if os.environ.get(BUSY_AFTER_WARM_VARIABLE):
            threading.Thread(target=_busy_holding_the_lock, daemon=True).start()
