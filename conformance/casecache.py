"""Loaded case files kept across sessions, so that collecting an unchanged corpus does not
parse and validate it again.

An entry is the pickled :class:`~conformance.loader.LoadResult` (cases and errors) of one
file, named by a SHA-256 of everything the result depends on: the file's bytes, the path it
is shown as (every Location carries it), the vocabulary (frameworks, operations, claims),
the source of the modules that read cases, and the Python and PyYAML versions. Any change
to one of them is another name, so an entry is never stale; old entries are simply not
read again (deleting the folder removes them; nothing else depends on it).

Where: ``$CONFORMANCE_CACHE_DIR``, else ``$XDG_CACHE_HOME/conformance/cases``, else
``~/.cache/conformance/cases``; created with mode 0700, never inside a checkout, so a case
contribution cannot bring entries of its own (unpickling runs code only from a trusted
file, and only this module writes these). ``CONFORMANCE_CACHE_DIR=off`` disables it.
Entries are written atomically, so parallel xdist workers and interrupted runs never
leave a torn one; an entry that cannot be read is parsed again and rewritten.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

import yaml

from conformance import loader, model, steps, yamlsrc
from conformance.loader import LoadResult, Vocabulary, load_bytes, load_file, read_case_file, unreadable

CACHE_ENV = "CONFORMANCE_CACHE_DIR"
DISABLED = ("off", "0", "none", "")


def default_directory() -> Path | None:
    """The cache folder, or None when disabled."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in DISABLED else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "conformance" / "cases"


def _code_fingerprint() -> bytes:
    digest = hashlib.sha256()
    for module in (model, yamlsrc, steps, loader):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(f"{sys.version}|{yaml.__version__}|{pickle.HIGHEST_PROTOCOL}".encode())
    return digest.digest()


class CaseCache:
    """Loads case files through the cache in ``directory``."""

    def __init__(self, directory: Path, vocabulary: Vocabulary) -> None:
        self.directory = directory
        self.vocabulary = vocabulary
        salt = hashlib.sha256(_code_fingerprint())
        for names in (vocabulary.frameworks, vocabulary.operations, vocabulary.claims):
            salt.update(repr(None if names is None else sorted(names)).encode() + b"\0")
        self.salt = salt.digest()
        self.hits = self.misses = 0

    def load(self, path: str | Path, display_path: str, draft: bool = False) -> LoadResult:
        try:
            data = read_case_file(path)
        except OSError as exc:
            return unreadable(display_path, exc)
        entry = self._entry(data, display_path, draft)
        try:
            result = pickle.loads(entry.read_bytes())
            if isinstance(result, LoadResult) and result.path == display_path:
                self.hits += 1
                return result
        except Exception:  # missing, truncated by another tool, or from an older format
            pass
        self.misses += 1
        result = load_bytes(data, display_path, self.vocabulary, draft)
        self._write(entry, result)
        return result

    def holds(self, path: str | Path, display_path: str, draft: bool = False) -> bool:
        """Whether loading the file would be a hit (or an unreadable file, also no work)."""
        try:
            data = read_case_file(path)
        except OSError:
            return True
        return self._entry(data, display_path, draft).is_file()

    def _entry(self, data: bytes, display_path: str, draft: bool) -> Path:
        key = hashlib.sha256(self.salt + display_path.encode() + b"\0" + bytes([draft]) + data).hexdigest()
        return self.directory / key[:2] / f"{key}.pickle"

    def _write(self, entry: Path, result: LoadResult) -> None:
        try:
            entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as stream:
                    pickle.dump(result, stream, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(temporary, entry)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a read-only or full disk: the cache is an optimisation, the run goes on


def load_through(cache: CaseCache | None, path: str | Path, display_path: str,
                 vocabulary: Vocabulary) -> LoadResult:
    """Load a case file through the cache, or straight when there is none (the pytest
    process and the collection helper load files the same way)."""
    if cache is not None:
        return cache.load(path, display_path)
    return load_file(path, vocabulary, display_path=display_path)


def make_cache(vocabulary: Vocabulary) -> CaseCache | None:
    directory = default_directory()
    if directory is None:
        return None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return CaseCache(directory, vocabulary)
