"""What a case folder may hold: regular ``*.yaml`` / ``*.yml`` case files and real
sub-folders, nothing else (docs/security.md, "Case folders hold only case files").

Everything else under a case folder is refused, whatever its name or content: a symbolic
link (to a file, a folder, itself, nothing, ``/`` or ``/dev/stdin``), a Python file
(``conftest.py``, ``__init__.py``, ``test_*.py``), any other file, a named pipe, a device.
Refused entries are never opened and links are never followed, so a folder tree cannot
loop, block a read or lead outside itself. The rule has one code, :data:`CODE`, reported by
``conformance lint`` (:func:`scan`) and by a pytest run (one failing ``<name>[refused]``
item per entry, made in :mod:`conformance.plugin.collect`).

Pure: no pytest, no framework. Entries are classified from ``lstat`` (or the directory
entry's type, which costs no system call on Linux), never by following a link.
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from conformance import rules

CODE = rules.NOT_A_CASE_FILE.code
CASE_SUFFIXES = (".yaml", ".yml")
PYTHON_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyi", ".pyd", ".pth", ".so")
RULE = "case folders hold only *.yaml case files and real folders"
# the files pytest reads its configuration from, in its order of precedence within a folder
# (pytest 9.2 added the first two): one in a case folder would decide how pytest runs
PYTEST_CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
                       "setup.cfg")


@dataclass(frozen=True)
class Refusal:
    """Why an entry of a case folder is refused (what it is, and the rule), and the fix."""

    message: str
    hint: str


def _link(path: Path) -> Refusal:
    try:
        target = f" (to {os.readlink(path)!r})"
    except OSError:
        target = ""
    return Refusal(f"a symbolic link{target}: {RULE}",
                   "remove it (links are never followed); put the case file or folder itself here")


def _regular(path: Path) -> Refusal | None:
    if path.suffix in CASE_SUFFIXES:
        return None
    if path.name in PYTEST_CONFIG_NAMES:
        return Refusal(f"a pytest configuration file: {RULE}; pytest run on this folder would take its settings "
                       "(addopts, -p plugins, pythonpath) from it, and the suite refuses to run with it",
                       "remove it (the project's configuration file lives above its case folders)")
    if path.suffix in PYTHON_SUFFIXES:
        return Refusal(f"a Python file: {RULE}, and nothing in them is ever imported",
                       "remove it (code belongs in conformance/, adapters/ or tests/)")
    return Refusal(f"not a case file (case files end in .yaml or .yml): {RULE}",
                   "rename it to .yaml if it is a case file, else remove it")


def _special(mode: int) -> Refusal:
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "something else")
    return Refusal(f"{kind}, not a regular file: {RULE}", "remove it")


def _unexamined(what: str, exc: OSError) -> Refusal:
    return Refusal(f"{what} ({exc.strerror}): {RULE}", "make it readable, or remove it")


def refusal(path: Path, mode: int | None = None) -> Refusal | None:
    """Why ``path``, an entry of a case folder, is refused; None for a regular case file or
    a real folder. ``mode``: its ``lstat`` mode when already known. Never follows a link."""
    if mode is None:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:  # gone since it was listed: nothing left to refuse
            return None
        except OSError as exc:
            return _unexamined("an entry that cannot be examined", exc)
    if stat.S_ISLNK(mode):
        return _link(path)
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        return _regular(path)
    return _special(mode)


def entry_refusal(entry: os.DirEntry[str]) -> Refusal | None:
    """:func:`refusal` for a directory entry, from its type where the listing gave it (no
    system call for the common case of a case file or a folder)."""
    if entry.is_symlink():
        return _link(Path(entry.path))
    if entry.is_dir(follow_symlinks=False):
        return None
    if entry.is_file(follow_symlinks=False):
        return _regular(Path(entry.path))
    return refusal(Path(entry.path))


def entries(folder: Path) -> list[os.DirEntry[str]]:
    """The folder's entries sorted by name (the order pytest collects them in)."""
    with os.scandir(folder) as listing:
        return sorted(listing, key=lambda entry: entry.name)


def scan(paths: Iterable[str | Path]) -> tuple[list[Path], list[tuple[Path, Refusal]]]:
    """The case files under ``paths`` and the refused entries, each in path order. A folder
    is walked through real sub-folders only; a named file is a case file whatever its name,
    if it is a regular file; a named link (or pipe, device) is refused. A missing path gives
    nothing (the caller says so)."""
    files: list[Path] = []
    refused: list[tuple[Path, Refusal]] = []
    for path in map(Path, paths):
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            for entry_path, problem in walk(path):
                if problem is None:
                    files.append(entry_path)
                else:
                    refused.append((entry_path, problem))
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            refused.append((path, refusal(path, mode) or _special(mode)))
    return files, refused


def walk(folder: Path) -> Iterator[tuple[Path, Refusal | None]]:
    """Every case file (with None) and refused entry (with why) under ``folder``, depth
    first in name order, through real sub-folders only. Iterative, so that a deep tree
    cannot exhaust the recursion limit."""
    stack: list[Iterator[os.DirEntry[str]]] = []
    try:
        stack.append(iter(entries(folder)))
    except OSError as exc:
        yield folder, _unexamined("a folder that cannot be listed", exc)
        return
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        path = Path(entry.path)
        try:
            problem = entry_refusal(entry)
        except OSError as exc:  # the type could not be read: refused, never opened
            problem = _unexamined("an entry that cannot be examined", exc)
        if problem is not None:
            yield path, problem
        elif entry.is_dir(follow_symlinks=False):
            try:
                stack.append(iter(entries(path)))
            except OSError as exc:
                yield path, _unexamined("a folder that cannot be listed", exc)
        else:
            yield path, None


@dataclass(frozen=True)
class Contents:
    """What :func:`survey` found in a folder: how many ``*.yaml`` / ``*.yml`` files, whether
    one of them looks like a case file (a top-level ``cases:`` key), and the first Python
    file, where it stopped looking."""

    yaml_files: int
    case_file: Path | None
    python: Path | None


# a top-level 'cases:' key, block or flow style ({"cases": [...]})
_CASES_KEY = re.compile(rb"""^(?:\{\s*)?["']?cases["']?\s*:""", re.MULTILINE)
_PEEK_BYTES = 64 * 1024
_PEEK_FILES = 20  # YAML files read, at most, to find one that looks like a case file


def looks_like_case_file(path: Path) -> bool:
    """Whether the start of a regular file has a top-level ``cases:`` key (opened without
    following a link; anything but a regular file is not one)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return _CASES_KEY.search(os.read(fd, _PEEK_BYTES)) is not None
    except OSError:
        return False
    finally:
        os.close(fd)


_PAST_PYTHON = 10_000  # entries looked at, after the first Python file, for a case file


def survey(folder: Path, skip: Callable[[str], bool] = lambda name: False) -> Contents:
    """What ``folder`` holds: breadth first through real sub-folders (never a link;
    ``skip(name)`` leaves a sub-folder out, as pytest's ``norecursedirs`` does), until it
    has found both a Python file and a case file (past the first Python file, for at most
    10,000 more entries); of the ``*.yaml`` files, the first few are read until one looks
    like a case file. Unreadable folders are passed over (collection says what it cannot
    read)."""
    count, peeked, past = 0, 0, 0
    case_file: Path | None = None
    python: Path | None = None
    queue: deque[Path] = deque([folder])
    while queue:
        try:
            listing = entries(queue.popleft())
        except OSError:
            continue
        for entry in listing:
            if python is not None:
                past += 1
                if case_file is not None or past > _PAST_PYTHON:
                    return Contents(count, case_file, python)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not skip(entry.name):
                        queue.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    suffix = os.path.splitext(entry.name)[1]
                    if suffix in PYTHON_SUFFIXES:
                        python = python or Path(entry.path)
                    elif suffix in CASE_SUFFIXES:
                        count += 1
                        if case_file is None and peeked < _PEEK_FILES:
                            peeked += 1
                            if looks_like_case_file(Path(entry.path)):
                                case_file = Path(entry.path)
            except OSError:
                continue
    return Contents(count, case_file, python)
