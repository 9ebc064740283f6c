"""What the suite's child processes (the sandbox's framework process, the collection
helper) share: the environment that makes them import what the parent imports, and dying
with the parent."""

from __future__ import annotations

import ctypes
import os
import signal
import sys


def child_environment() -> dict[str, str]:
    """The parent's environment, with its import path: a child must import exactly what
    this process imports (adapters registered through entry points, a checkout that is
    not installed)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
    return env


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
