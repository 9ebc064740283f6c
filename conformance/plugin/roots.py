"""Where the cases are, for a session: the case roots (``conformance_paths`` folders, the
packaged corpus, the folders named on the command line) and what lies in them, the folders
no cache may be inside, and the session's index of loaded case files (its vocabulary, its
case cache, where each case id was first seen, the frameworks each case gets an item for).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pytest

from conformance import registry
from conformance.load import folders as casefolder
from conformance.load.cache import CaseCache, load_through, make_cache
from conformance.load.reader import LoadResult, Vocabulary
from conformance.model import Location

CASE_SUFFIXES = casefolder.CASE_SUFFIXES
# the corpus installed with the package (conformance.cases), collected wherever it is
CASES_PACKAGE_DIR = Path(__file__).resolve().parent.parent / "cases"
roots_key = pytest.StashKey["CaseRoots"]()


@dataclass
class CaseIndex:
    """Session-wide: the vocabulary, the cache of loaded files, and where each case id was
    first seen."""

    vocabulary: Vocabulary
    cache: CaseCache | None = None
    first_seen: dict[str, Location] = field(default_factory=dict)
    # the frameworks each case gets an item for: ini conformance_frameworks, else every one
    # registered (the vocabulary's: what a case file may name)
    frameworks: list[str] = field(default_factory=list)

    @property
    def item_frameworks(self) -> list[str]:
        return self.frameworks or list(self.vocabulary.frameworks)

    def load(self, path: Path, display: str) -> LoadResult:
        return load_through(self.cache, path, display, self.vocabulary)


def make_index(config: pytest.Config | None = None) -> CaseIndex:
    """The session's index. With ``config``, the case cache must lie outside its checkout
    (rootdir, case folders, the folders named on the command line; casecache adds the
    current folder's git work tree), and a refused cache folder is one PytestConfigWarning
    (a line on stderr where pytest would not show it), said by the controller of an xdist
    run only."""
    vocabulary = registry.vocabulary()
    if config is None:
        return CaseIndex(vocabulary, make_cache(vocabulary))
    return CaseIndex(vocabulary, make_cache(vocabulary, checkouts(config), config_warning(config)),
                     frameworks=configured_frameworks(config))


def checkouts(config: pytest.Config) -> list[Path]:
    """The folders no cache of this run may be inside (a pull request could put files
    there): rootdir, the case folders, the folders named on the command line (the caches
    add the current folder's git work tree)."""
    invoked = Path(str(config.invocation_params.dir))
    named = [invoked / arg.split("::", 1)[0] for arg in config.args]
    return [Path(str(config.rootpath)), CASES_PACKAGE_DIR,
            *(Path(p) for p in config.getini("conformance_paths")),
            *(p if p.is_dir() else p.parent for p in named)]


def config_warning(config: pytest.Config) -> Callable[[str], None]:
    """How a cache refused for this run is said: one PytestConfigWarning (a line on stderr
    where pytest would not show it), by the controller of an xdist run only."""

    def warn(message: str) -> None:
        if hasattr(config, "workerinput"):  # the controller says it
            return
        shown = not any(config.pluginmanager.is_blocked(p) for p in ("warnings", "terminal"))
        try:
            if shown:
                config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
                return
        except pytest.PytestConfigWarning:  # -W error: still only a warning
            pass
        print(f"conformance: {message}", file=sys.stderr)

    return warn


def configured_frameworks(config: pytest.Config) -> list[str]:
    """ini ``conformance_frameworks``: the frameworks a project runs its cases on (an empty
    list: every registered one). ``--frameworks`` then selects among them."""
    names = [n.strip() for n in ",".join(config.getini("conformance_frameworks")).split(",") if n.strip()]
    problem = registry.unknown_frameworks(names)
    if problem:
        raise pytest.UsageError(f"ini conformance_frameworks: {problem}")
    return names


index_key = pytest.StashKey[CaseIndex]()


@dataclass(frozen=True)
class NamedFolder:
    """A folder named on the command line outside every configured case root, and what it
    holds."""

    path: Path
    contents: casefolder.Contents
    forced: bool = False  # --case-folders: a case folder whatever it holds

    @property
    def is_case_folder(self) -> bool:
        """A case root: it holds case files and no Python (or --case-folders says so)."""
        return self.forced or (self.contents.case_file is not None and self.contents.python is None)


class CaseRoots:
    """The case roots of a run: the ``conformance_paths`` folders, the packaged corpus, and
    the folders named on the command line that hold case files and no Python (pytest's
    convention: a folder named on the command line is collected). Every folder under a root
    is a case folder; a folder or file named on the command line is in one when it is under
    a root."""

    def __init__(self, roots: list[Path], named: Sequence[NamedFolder] = ()) -> None:
        self.configured = [Path(os.path.abspath(root)) for root in roots]
        self.named = list(named)
        self.roots = self.configured + [folder.path for folder in self.named if folder.is_case_folder]
        self._real: list[Path] | None = None

    def holds(self, path: Path) -> bool:
        """Whether ``path`` is a root or under one, as written."""
        path = Path(os.path.abspath(path))
        return any(path == root or root in path.parents for root in self.roots)

    def inside(self, path: Path) -> bool:
        """Whether ``path`` is an entry somewhere under a root (not a root itself), as
        written or once the links of its folder are resolved (a folder reached through a
        link made outside the case folders is still that case folder)."""
        path = Path(os.path.abspath(path))
        if any(root in path.parents for root in self.roots):
            return True
        if self._real is None:
            self._real = [Path(os.path.realpath(root)) for root in self.roots]
        try:
            folder = Path(os.path.realpath(path.parent))
        except (OSError, RuntimeError):
            return False
        return any(folder == root or root in folder.parents for root in self._real)


def case_roots(config: pytest.Config) -> CaseRoots:
    """This run's case roots (read once: the conftest guard asks before pytest_configure)."""
    roots = config.stash.get(roots_key, None)
    if roots is None:
        configured = CaseRoots([Path(p) for p in config.getini("conformance_paths")] + [CASES_PACKAGE_DIR])
        roots = CaseRoots(configured.configured, named_folders(config, configured))
        config.stash[roots_key] = roots
    return roots


def named_paths(config: pytest.Config) -> list[Path]:
    """The paths named on the command line (without their ``::`` parts), known before the
    initial conftests are imported; none with ``--pyargs``."""
    namespace = getattr(config, "known_args_namespace", None)
    params = getattr(config, "invocation_params", None)
    if namespace is None or params is None or getattr(namespace, "pyargs", False):
        return []
    invoked = Path(str(params.dir))
    return [invoked / str(arg).split("::", 1)[0] for arg in getattr(namespace, "file_or_dir", None) or []]


def named_folders(config: pytest.Config, configured: CaseRoots) -> list[NamedFolder]:
    """The folders named on the command line that may be case roots, with what each holds
    (breadth first, links not followed, ``norecursedirs`` left out, up to the first Python
    file). Not one under a configured root (it is in a case folder already), nor the
    folder of pytest's configuration file or a folder above it or above a configured root:
    that is the project that holds the case folders, not one."""
    namespace = getattr(config, "known_args_namespace", None)
    forced = bool(getattr(namespace, "case_folders", False))
    folders: list[NamedFolder] = []
    named = named_paths(config)
    if not named:
        return folders
    inipath = getattr(config, "inipath", None)
    project = Path(os.path.abspath(inipath)).parent if inipath else None
    patterns = [str(p) for p in config.getini("norecursedirs")]
    for path in named:
        path = Path(os.path.abspath(path))
        if configured.holds(path) or os.path.islink(path) or not path.is_dir():
            continue
        if project is not None and (path == project or path in project.parents):
            continue  # the folder of the configuration file, or above it: the project
        if any(path in root.parents for root in configured.roots):
            continue
        if any(folder.path == path for folder in folders):
            continue
        contents = casefolder.survey(path, lambda name: any(fnmatch.fnmatch(name, p) for p in patterns))
        folders.append(NamedFolder(path, contents, forced))
    return folders


def unclaimed_folders(config: pytest.Config, collected: Iterable[Path]) -> list[str]:
    """For each folder named on the command line that is no case root and from which
    nothing was collected, unless it is a folder of Python tests without YAML: why (one
    line each)."""
    lines: list[str] = []
    # a folder of Python tests with no YAML is pytest's business, not this plugin's
    candidates = [f for f in case_roots(config).named
                  if not f.is_case_folder and (f.contents.yaml_files or f.contents.python is None)]
    if not candidates:
        return lines
    paths = [Path(os.path.abspath(p)) for p in collected]
    for folder in candidates:
        contents = folder.contents
        if any(p == folder.path or folder.path in p.parents for p in paths):
            continue
        if contents.python is not None and contents.case_file is not None:
            why = (f"it holds Python files ({contents.python}) as well as case files, so it is no case folder "
                   "and pytest collects it as a folder of Python tests; to run its cases, name the case files or "
                   "the folders that hold only them, add it to conformance_paths (-o conformance_paths=FOLDER), "
                   "or pass --case-folders (its Python files are then refused, never imported)")
        elif contents.yaml_files:
            why = ("none of the *.yaml files read in it (the first 20) looks like a case file, with a top-level "
                   "'cases:' list, so it is no case folder")
        else:
            why = ("it holds no case file (*.yaml or *.yml; links are not followed, and folders pytest skips, "
                   "norecursedirs, are not looked into)")
        lines.append(f"nothing collected from {folder.path}: {why}")
    return lines


def is_case_file(path: Path, session: pytest.Session) -> bool:
    """A YAML file named on the command line, or under a ``conformance_paths`` folder."""
    if path.suffix not in CASE_SUFFIXES:
        return False
    return session.isinitpath(path) or case_roots(session.config).holds(path)


def refused_entry(path: Path, config: pytest.Config) -> casefolder.Refusal | None:
    """Why ``path`` is refused, when it is an entry under a case root that a case folder
    may not hold (``lstat`` only: never followed, never opened); None otherwise."""
    if not case_roots(config).inside(path):
        return None
    return casefolder.refusal(path)
