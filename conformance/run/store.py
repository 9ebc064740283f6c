"""Outcomes kept across runs, so that a re-run recomputes only the items whose inputs changed
(issue 33; docs/performance.md, "Only what changed").

An entry is one item's :class:`~conformance.outcomes.Outcome` and what its framework
process said of the framework (version, devices), named by a SHA-256 of everything the
outcome depends on:

- the case as loaded (its plain-data encoding: inputs, steps, expectations, overrides, its
  file and line);
- the framework or compiled mode it ran on;
- the installed version of every registered framework (an interop case on torch reads NumPy
  too), the Python and the platform, the framework process's interpreter
  (``CONFORMANCE_CHILD_PYTHON``) and memory cap;
- the source of the code that runs a case: every module of ``conformance/`` that the
  framework process imports (the engine, the assertion kinds, the model, the loader's values)
  and every adapter module. Editing any of it is another name for every entry, so the store
  never answers for code that changed; editing a case file renames only that case's entries.

Only what a run can reproduce is kept: an outcome the engine reached (pass, fail, known
divergence, refused, not applicable), never an error (a crash, a timeout, an adapter that
raised: the next run tries again), never an item whose process crashed because of another.

The store lives beside the case cache and follows its rules (:mod:`conformance.load.cache`):
``$CONFORMANCE_CACHE_DIR/outcomes`` or ``~/.cache/conformance/outcomes``, outside every
checkout, the user's own, each entry signed with the folder's key (an entry planted or
copied in is a miss) and decoded by an allowlist (``outcomes.OUTCOME_TYPES``): bytes written by
someone else give at most a recomputed item.

Pure: no framework, no pytest.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from conformance import codec, kinds, registry
from conformance.load.cache import CACHE_ENV, CacheRefused, open_directory, user_cache_folder, write_signed
from conformance.model import CASE_TYPES, Case
from conformance.outcomes import ERROR, OUTCOME_TYPES, Outcome

SUBFOLDER = "outcomes"
SUFFIX = ".outcome"
MAC_BYTES = hashlib.sha256().digest_size
# what an entry may hold: an outcome, and the framework's version and devices
ENTRY_TYPES = codec.Allowlist(OUTCOME_TYPES)
# the case's plain-data encoding, for its digest
_CASE_CODEC = codec.Allowlist((*CASE_TYPES, *kinds.value_types()))
# the code a framework process runs a case with: conformance/ without what only reads or
# writes results (report, site, tools, plugin, discover), and every adapter
_PACKAGE = Path(__file__).resolve().parent.parent
_NOT_RUN = ("report", "site", "tools", "plugin", "discover", "data", "cases")


def default_directory() -> Path | None:
    """The store's folder the environment asks for; None: switched off."""
    return user_cache_folder(SUBFOLDER)


def code_fingerprint() -> bytes:
    """A digest of the source a framework process runs cases with."""
    digest = hashlib.sha256()
    folders = [_PACKAGE]
    adapters = Path(registry.__file__).resolve().parent.parent / "adapters"
    if adapters.is_dir():  # a checkout's adapters/ (installed: conformance/adapters, inside the package)
        folders.append(adapters)
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            if folder == _PACKAGE and path.relative_to(folder).parts[0] in _NOT_RUN:
                continue
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def run_fingerprint(frameworks: Iterable[str]) -> bytes:
    """What every item's outcome depends on besides its case and framework: the code, the
    frameworks' versions, the interpreters, the memory cap."""
    digest = hashlib.sha256(code_fingerprint())
    for name in sorted(frameworks):
        try:
            version = registry.get_adapter(name).version()
        except Exception:  # noqa: BLE001 - a broken adapter has no version; its items skip anyway
            version = None
        digest.update(f"{name}={version}\0".encode())
    digest.update(f"{sys.version}|{sys.platform}|{os.environ.get('CONFORMANCE_CHILD_PYTHON', '')}|"
                  f"{os.environ.get('CONFORMANCE_CHILD_MEMORY_MB', '')}".encode())
    return digest.digest()


class OutcomeStore:
    """Outcomes of items, in ``directory``, signed with ``key``; ``salt``: the run's
    :func:`run_fingerprint`."""

    def __init__(self, directory: Path, key: bytes, salt: bytes) -> None:
        self.directory = directory
        self.key = key
        self.salt = salt
        self.hits = self.misses = 0
        # a case's encoding, once per case (a case has an item on every framework): id -> (case, bytes)
        self._encoded: dict[int, tuple[Case, bytes]] = {}

    def name(self, case: Case, framework: str) -> str:
        known = self._encoded.get(id(case))
        if known is None or known[0] is not case:
            known = self._encoded[id(case)] = (case, _CASE_CODEC.dumps(case))
        digest = hashlib.sha256(self.salt)
        digest.update(framework.encode() + b"\0")
        digest.update(known[1])
        return digest.hexdigest()

    def _path(self, name: str) -> Path:
        return self.directory / name[:2] / f"{name}{SUFFIX}"

    def _mac(self, name: str, payload: bytes | memoryview) -> bytes:
        mac = hmac.new(self.key, name.encode(), hashlib.sha256)
        mac.update(payload)
        return mac.digest()

    def get(self, case: Case, framework: str, written_before: float | None = None
            ) -> tuple[Outcome, dict[str, Any]] | None:
        """The stored outcome of the item and its framework's environment, or None; with
        ``written_before`` (a time.time()), None for an entry written at that time or later."""
        name = self.name(case, framework)
        try:
            with open(self._path(name), "rb") as stream:
                if written_before is not None and os.fstat(stream.fileno()).st_mtime >= written_before:
                    self.misses += 1
                    return None
                blob = stream.read()
        except OSError:
            self.misses += 1
            return None
        payload = memoryview(blob)[MAC_BYTES:]
        if len(blob) <= MAC_BYTES or not hmac.compare_digest(blob[:MAC_BYTES], self._mac(name, payload)):
            self.misses += 1
            return None
        try:
            entry = ENTRY_TYPES.loads(payload)
        except codec.CodecError:
            self.misses += 1
            return None
        if not (isinstance(entry, tuple) and len(entry) == 2 and type(entry[0]) is Outcome
                and entry[0].case_id == case.id and entry[0].framework == framework and isinstance(entry[1], dict)):
            self.misses += 1
            return None
        self.hits += 1
        return entry[0], entry[1]

    def put(self, case: Case, framework: str, outcome: Outcome, environment: dict[str, Any]) -> None:
        """Keep the outcome, if it is one a run reproduces (not an error)."""
        if outcome.verdict == ERROR:
            return
        name = self.name(case, framework)
        try:
            payload = ENTRY_TYPES.dumps((outcome, dict(environment)))
        except codec.CodecError:
            return
        write_signed(self._path(name), self._mac(name, payload), payload)


def open_store(frameworks: Iterable[str], checkouts: Iterable[Path | str] = (),
               warn: Callable[[str], None] | None = None) -> OutcomeStore | None:
    """The store for this run, or None: switched off, or its folder refused (said once
    through ``warn``, default a line on stderr)."""
    directory = default_directory()
    if directory is None:
        return None
    try:
        folder, key = open_directory(directory, checkouts, own_parents=1)
    except CacheRefused as refused:
        message = (f"outcomes are not reused in this run: {refused.path} {refused.reason}; set {CACHE_ENV} to a "
                   "folder of your own outside the checkout")
        if warn is None:
            print(f"conformance: {message}", file=sys.stderr)
        else:
            warn(message)
        return None
    return OutcomeStore(folder, key, run_fingerprint(frameworks))
