"""pytest's configuration never comes from a case folder (docs/security.md, "pytest's
configuration is the project's, never a case folder's").

pytest looks for its configuration file (``pytest.ini``, ``pyproject.toml``, ``tox.ini``,
``setup.cfg``, ...) in the folder of the paths it is given and then in each folder above,
and takes the first it finds. So ``pytest cases/sub`` with a ``cases/sub/pytest.ini`` runs
with that file's ``addopts`` (``--doctest-glob=*.yaml`` runs a ``>>>`` line of a case's
title as Python), its ``pythonpath``, its ``-p`` plugins: a pull request that adds one file
beside its cases decides how pytest runs. pytest reads the file before it loads any plugin,
so a plugin cannot stop what pytest itself does with it first (its ``-p`` imports, its
``pythonpath``); what it can do, and :func:`refusal` does, is refuse the run at the first
hook a plugin gets (``pytest_load_initial_conftests``, before any conftest, collection or
case), naming the file. ``conformance run`` goes further: it never lets pytest choose,
passing ``-c`` with the configuration found from the working folder
(:func:`project_configuration`), and refuses one that lies in a case folder before pytest
starts.

A configuration file is in a case folder when its folder

- is, or is under, the installed corpus (``conformance/cases``, the checkout's ``cases/``)
  or a ``conformance_paths`` folder of the configuration pytest would have read without
  it (the next one above), or one of ``extra_roots``;
- or directly holds a case file (a ``*.yaml`` with a top-level ``cases:`` key): a project
  keeps its cases in folders below its configuration, never beside it.

Pure: no framework. Reads only file names, the first bytes of YAML files, and the pytest
configuration of the folders above.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from conformance.load import folders as casefolder

CONFIG_NAMES = casefolder.PYTEST_CONFIG_NAMES
_PEEK_FILES = 50  # YAML files of a folder read, at most, to find a case file beside a configuration


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it, as written or with links resolved."""
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    return path == root or root in path.parents or _real(path) == _real(root) or _real(root) in _real(path).parents


def holds_case_file(folder: Path) -> Path | None:
    """The first case file directly in ``folder`` (not in its sub-folders), or None."""
    try:
        entries = casefolder.entries(folder)
    except OSError:
        return None
    peeked = 0
    for entry in entries:
        if os.path.splitext(entry.name)[1] not in casefolder.CASE_SUFFIXES:
            continue
        peeked += 1
        if peeked > _PEEK_FILES:
            return None
        if casefolder.looks_like_case_file(Path(entry.path)):
            return Path(entry.path)
    return None


def _values(raw: Any) -> list[str]:
    value = getattr(raw, "value", raw)  # pytest 9's ConfigValue, or the string of older releases
    if isinstance(value, str):
        return value.split()
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return []


def read_configuration(path: Path) -> dict[str, Any] | None:
    """The pytest settings of the configuration file ``path`` as pytest reads them (None:
    not one pytest would take, or unreadable)."""
    try:
        from _pytest.config.findpaths import load_config_dict_from_file  # pytest's own reader
    except ImportError:  # pragma: no cover - pytest moved it: no outer roots known
        return None
    try:
        return load_config_dict_from_file(path)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # unreadable, or refused by pytest (its fail() is a BaseException): pytest says so itself
        return None


def configuration_from(start: Path) -> Path | None:
    """The configuration file pytest finds from ``start`` upward, as it does for a run
    started there with no path named (None: there is none)."""
    pyproject: Path | None = None
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if read_configuration(candidate) is not None:
                return candidate
            if name == "pyproject.toml" and pyproject is None:
                pyproject = candidate  # pytest's fallback: a pyproject.toml with no pytest table
    return pyproject


def configured_roots(config_file: Path) -> list[Path]:
    """The ``conformance_paths`` folders ``config_file`` declares, made absolute from its folder."""
    settings = read_configuration(config_file) or {}
    return [Path(os.path.abspath(config_file.parent / p)) for p in _values(settings.get("conformance_paths"))]


def refusal(config_file: Path | None, extra_roots: Iterable[Path] = ()) -> str | None:
    """Why pytest must not take its configuration from ``config_file``, or None."""
    if config_file is None:
        return None
    config_file = Path(os.path.abspath(config_file))
    folder = config_file.parent
    from conformance.plugin.roots import CASES_PACKAGE_DIR  # pytest is imported by then

    roots = [CASES_PACKAGE_DIR, *extra_roots]
    outer = configuration_from(folder.parent) if folder.parent != folder else None
    if outer is not None:
        roots += configured_roots(outer)
    for root in roots:
        if _within(folder, root):
            return (f"{config_file}: a pytest configuration file in the case folder {root}: pytest takes its "
                    "settings (addopts, plugins, pythonpath) from the first such file above the paths it is given, "
                    "and case folders are data a pull request can change, so the run is refused; remove the file "
                    "(case folders hold only *.yaml case files), or run from your project with its own "
                    "configuration (conformance run does; with pytest, -c FILE)")
    beside = holds_case_file(folder)
    if beside is not None:
        return (f"{config_file}: a pytest configuration file beside the case file {beside}: pytest takes its "
                "settings (addopts, plugins, pythonpath) from it, and a folder of case files is data a pull request "
                "can change, so the run is refused; keep case files in folders of their own, below the project's "
                "configuration file, or run with -c FILE naming the project's")
    return None


def project_configuration(invocation_dir: Path, explicit: str | None,
                          extra_roots: Sequence[Path] = ()) -> tuple[str, str | None]:
    """For ``conformance run``: the configuration file to pass pytest as ``-c`` (the one
    given with -c, else the one pytest finds from the working folder upward, never from the
    paths named; ``os.devnull`` when there is none) and why it is refused, or None."""
    if explicit is not None:
        chosen: Path | None = Path(os.path.abspath(invocation_dir / explicit))
    else:
        chosen = configuration_from(Path(os.path.abspath(invocation_dir)))
    if chosen is None:
        return os.devnull, None
    return str(chosen), refusal(chosen, extra_roots)
