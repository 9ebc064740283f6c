"""Loaded case files kept across sessions, so that collecting an unchanged corpus does not
parse and validate it again.

An entry is the :class:`~conformance.load.reader.LoadResult` (cases and errors) of one file,
encoded as plain data by :mod:`conformance.codec` (never pickled: decoding builds only
the model's classes, :data:`ENTRY_TYPES`) and authenticated by an HMAC-SHA256 with this
cache's own random key. It is named by a SHA-256 of everything the result depends on: the
file's bytes, the path it is shown as (every Location carries it), the vocabulary, the
source of the modules that read cases and encode entries, and the Python and PyYAML
versions. Any change to one of them is another name, so an entry is never stale; old
entries are simply not read again (deleting the folder removes them; nothing else
depends on it).

Where: ``$CONFORMANCE_CACHE_DIR``, else ``$XDG_CACHE_HOME/conformance/cases``, else
``~/.cache/conformance/cases``; ``CONFORMANCE_CACHE_DIR=off`` disables it. Folders it
creates are mode 0700. :func:`make_cache` refuses a folder that is inside the checkout
(the pytest rootdir, the current folder's git work tree, the case folders: a pull
request could put files there), a symbolic link, not owned by the user, or group- or
world-writable (the folder and the suite's own folders above it), and a key file that is
not a regular file of the user's with no permission for others: the cache is then off
for the run, with one warning line saying which folder and why (the caller says where
the line goes; pytest shows it as a ``PytestConfigWarning``).

The key (:data:`KEY_FILE` in the folder, 32 random bytes, created 0600 with ``O_EXCL``)
makes an entry that this cache did not write, e.g. one copied in from elsewhere, a
miss: the file is parsed again. A decoded entry must still be a ``LoadResult`` of the
shown path. Entries are written atomically, so parallel xdist workers and interrupted
runs never leave a torn one; an entry that cannot be read, authenticated or decoded is
parsed again and rewritten. Threat model and limits: docs/security.md.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import hmac
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Mapping

import yaml

from conformance import codec, ir, kinds, limits, model, rules, source
from conformance.codec import CodecError
from conformance.load import expect, inputs, overrides, steplist, steps
from conformance.load import reader as loader
from conformance.load.reader import LoadResult, Vocabulary, load_bytes, load_file, read_case_file, unreadable
from conformance.yamlvalues import fields, yamlerrors, yamlsrc

CACHE_ENV = "CONFORMANCE_CACHE_DIR"
DISABLED = ("off", "0", "none", "")
KEY_FILE = "key"
KEY_BYTES = 32
MAC_BYTES = hashlib.sha256().digest_size
ENTRY_SUFFIX = ".entry"

# The model's classes reachable from a Case, for other plain-data messages too; CaseFormatError
# (an exception) is taken apart as its four parts.
# what a cache entry may contain: nothing else is built when one is read
ENTRY_TYPES = codec.Allowlist((LoadResult, *model.CASE_TYPES, *kinds.value_types()))


class CacheRefused(Exception):
    """The cache folder (or its key file) cannot be trusted: ``path`` and the reason."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} {reason}")


def default_directory() -> Path | None:
    """The cache folder, or None when disabled."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in DISABLED else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "conformance" / "cases"


def user_cache_folder(subfolder: str) -> Path | None:
    """The folder of one kind of cache beside the case cache's (``subfolder`` of
    ``$CONFORMANCE_CACHE_DIR``, or of the user's cache folder); None when switched off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in DISABLED else Path(configured) / subfolder
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "conformance" / subfolder


def write_signed(path: Path, signature: bytes, payload: bytes) -> None:
    """``signature`` then ``payload`` into ``path``, whole or not at all (a temporary file in
    its folder, renamed over it). A failed write leaves nothing: a read-only or full disk
    costs a cache its entry, never the run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(signature)
                stream.write(payload)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass


def _code_fingerprint() -> bytes:
    digest = hashlib.sha256()
    # the loader's modules, and every assertion kind's (each parses its own expect entries)
    loading = (model, ir, source, rules, yamlsrc, yamlerrors, steps, fields, inputs, steplist, overrides, expect,
               loader, limits, codec, sys.modules[__name__])
    parsing = sorted({kinds, *(sys.modules[cls.__module__] for kind in kinds.KINDS for cls in type(kind).__mro__
                               if cls.__module__.startswith("conformance.kinds"))}, key=lambda m: m.__name__)
    for module in (*loading, *parsing):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(f"{sys.version}|{yaml.__version__}".encode())
    return digest.digest()


# --------------------------------------------------------------------------- trust checks


def _uid() -> int:
    """The user the cache must belong to (a function, so tests can pretend to be another)."""
    return os.geteuid()


def folder_problem(st: os.stat_result, uid: int) -> str | None:
    """Why a folder with ``lstat`` result ``st`` cannot hold the cache of user ``uid``, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != uid:
        return f"is owned by another user (uid {st.st_uid}, not {uid})"
    if st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("world", 0o002)) if st.st_mode & bit)
        return f"is {who}-writable (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def key_problem(st: os.stat_result, uid: int) -> str | None:
    """Why a key file with ``fstat`` result ``st`` cannot be trusted by user ``uid``, or None."""
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid != uid:
        return f"is owned by another user (uid {st.st_uid}, not {uid})"
    if st.st_mode & 0o077:
        return f"can be used by others (mode {stat.S_IMODE(st.st_mode):04o}; it must be 0600)"
    if st.st_size != KEY_BYTES:
        return f"is not a {KEY_BYTES}-byte key ({st.st_size} bytes): delete it to make a new one"
    return None


def git_work_tree(folder: Path) -> Path | None:
    """The nearest of ``folder`` and its parents that holds a ``.git``, or None."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it, as written or with links resolved."""
    return path.is_relative_to(Path(os.path.abspath(root))) or \
        Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def open_directory(directory: Path, checkouts: Iterable[Path | str] = (),
                   own_parents: int = 0) -> tuple[Path, bytes]:
    """Check ``directory`` (creating what is missing, mode 0700) and read or make its key:
    the absolute folder and the key, or :class:`CacheRefused`. ``checkouts``: folders it
    must not be inside (the current folder's git work tree is added); ``own_parents``:
    how many folders above it are the suite's (``conformance/`` of the default place)."""
    folder = check_directory(directory, checkouts, own_parents)
    return folder, read_key(folder / KEY_FILE)


def check_directory(directory: Path, checkouts: Iterable[Path | str] = (), own_parents: int = 0) -> Path:
    """The absolute folder, checked (and made, mode 0700, with what is missing above it) as
    a cache folder the user alone can write, outside every checkout; :class:`CacheRefused`
    says why not. The same rules hold for the compilers' caches (conformance.run.caches)."""
    folder = Path(os.path.abspath(directory))
    roots = [Path(r) for r in checkouts]
    tree = git_work_tree(Path.cwd())
    if tree is not None:
        roots.append(tree)
    for root in roots:
        if _inside(folder, root):
            raise CacheRefused(folder, f"is inside the checkout {os.path.abspath(root)} "
                                       "(a pull request could put files there)")
    missing = []
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            break
        missing.append(candidate)
    checked = sorted({folder, *missing, *list(folder.parents)[:own_parents]}, key=lambda p: len(p.parts))
    uid = _uid()

    def check(path: Path) -> None:
        try:
            problem = folder_problem(os.lstat(path), uid)
        except OSError as exc:
            problem = f"cannot be examined: {exc.strerror or exc}"
        if problem:
            raise CacheRefused(path, problem)

    # what exists is checked before anything is made in it (nothing is created in a folder
    # another user could write), then what was made
    for path in checked:
        if path not in missing:
            check(path)
    for created in reversed(missing):
        try:
            created.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise CacheRefused(created, f"cannot be created: {exc.strerror or exc}") from None
    for path in checked:
        if path in missing:
            check(path)
    return folder


def read_key(path: Path) -> bytes:
    """The key in ``path``, made first if there is none (32 random bytes, 0600, published
    whole with a hard link so that a concurrent reader never sees it half written)."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            _make_key(path)
            continue
        except OSError as exc:
            reason = "is a symbolic link" if exc.errno == errno.ELOOP else f"cannot be read: {exc.strerror or exc}"
            raise CacheRefused(path, reason) from None
        try:
            problem = key_problem(os.fstat(fd), _uid())
            if problem:
                raise CacheRefused(path, problem)
            key = os.read(fd, KEY_BYTES + 1)
        finally:
            os.close(fd)
        if len(key) != KEY_BYTES:
            raise CacheRefused(path, f"is not a {KEY_BYTES}-byte key: delete it to make a new one")
        return key
    raise CacheRefused(path, "could not be made")


def _make_key(path: Path) -> None:
    temporary = path.with_name(f".key-{secrets.token_hex(8)}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(secrets.token_bytes(KEY_BYTES))
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process made it first: that one is read
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                if not os.path.lexists(path):  # no hard links here: renamed (a race costs misses)
                    os.rename(temporary, path)
        finally:
            if os.path.lexists(temporary):
                os.unlink(temporary)
    except OSError as exc:
        raise CacheRefused(path, f"cannot be created: {exc.strerror or exc}") from None


def _stderr_line(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr)


def make_cache(vocabulary: Vocabulary, checkouts: Iterable[Path | str] = (),
               warn: Callable[[str], None] | None = None) -> CaseCache | None:
    """The cache for this run, or None: switched off, or its folder refused; a refusal is
    said once through ``warn`` (default: a line on stderr). ``checkouts``: the folders the
    cache must not be inside (pytest's rootdir, the case folders); the current folder's
    git work tree is always one."""
    directory = default_directory()
    if directory is None:
        return None
    own_parents = 0 if os.environ.get(CACHE_ENV) is not None else 1  # .../conformance/cases
    try:
        folder, key = open_directory(directory, checkouts, own_parents)
    except CacheRefused as refused:
        (_stderr_line if warn is None else warn)(
            f"the case cache is off for this run: {refused.path} {refused.reason}; set {CACHE_ENV} to a "
            f"folder of your own outside the checkout (or to 'off')")
        return None
    return CaseCache(folder, vocabulary, key)


# --------------------------------------------------------------------------- the cache


class CaseCache:
    """Loads case files through the cache in ``directory``, whose entries are signed with
    ``key`` (read from, or made in, the folder's key file when not given: the caller
    vouches for the folder; :func:`make_cache` checks it first)."""

    def __init__(self, directory: Path, vocabulary: Vocabulary, key: bytes | None = None) -> None:
        self.directory = directory
        self.vocabulary = vocabulary
        if key is None:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            key = read_key(directory / KEY_FILE)
        self.key = key
        salt = hashlib.sha256(_code_fingerprint())
        for part in dataclasses.fields(vocabulary):  # frameworks, operations, claims, ...
            names = getattr(vocabulary, part.name)
            if isinstance(names, Mapping):  # exception types: framework -> names
                names = [f"{key}:{sorted(value)!r}" for key, value in names.items()]
            salt.update(f"{part.name}={None if names is None else sorted(names)!r}".encode() + b"\0")
        self.salt = salt.digest()
        self.hits = self.misses = 0

    def load(self, path: str | Path, display_path: str, draft: bool = False) -> LoadResult:
        try:
            data = read_case_file(path)
        except OSError as exc:
            return unreadable(display_path, exc)
        entry = self._entry(data, display_path, draft)
        result = self._read(entry, display_path)
        if result is not None:
            self.hits += 1
            return result
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
        return self.directory / key[:2] / f"{key}{ENTRY_SUFFIX}"

    def _mac(self, entry: Path, payload: bytes | memoryview) -> bytes:
        # the entry's name is signed too: a valid entry moved to another name is refused
        mac = hmac.new(self.key, entry.name.encode(), hashlib.sha256)
        mac.update(payload)
        return mac.digest()

    def _read(self, entry: Path, display_path: str) -> LoadResult | None:
        """The entry's result; None when it is missing, damaged, not signed with this
        cache's key, or not a result for ``display_path``."""
        try:
            blob = entry.read_bytes()
        except OSError:
            return None
        payload = memoryview(blob)[MAC_BYTES:]
        if len(blob) <= MAC_BYTES or not hmac.compare_digest(blob[:MAC_BYTES], self._mac(entry, payload)):
            return None
        try:
            result = ENTRY_TYPES.loads(payload)
        except CodecError:
            return None
        if type(result) is not LoadResult or result.path != display_path or \
                type(result.cases) is not list or type(result.errors) is not list:
            return None
        return result

    def _write(self, entry: Path, result: LoadResult) -> None:
        try:
            payload = ENTRY_TYPES.dumps(result)
        except CodecError:
            return  # a value the codec does not carry (nesting past the recursion limit): not kept
        write_signed(entry, self._mac(entry, payload), payload)


def load_through(cache: CaseCache | None, path: str | Path, display_path: str,
                 vocabulary: Vocabulary) -> LoadResult:
    """Load a case file through the cache, or straight when there is none (the pytest
    process and the collection helper load files the same way)."""
    if cache is not None:
        return cache.load(path, display_path)
    return load_file(path, vocabulary, display_path=display_path)
