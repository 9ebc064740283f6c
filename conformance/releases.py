"""Framework releases: the version specifiers of versioned overrides (``versions: "<2.0"``)
and how a release is matched against them. Pure: no framework, no pytest.

A specifier set is PEP 440's (``packaging.specifiers``): comma-separated clauses that must
all hold, such as ``>=2.0``, ``<3.1`` or ``>=3.0,<3.2``. A release matches with its local
label (``2.13.0+cpu`` is 2.13.0 for ``<2.14``), and pre-releases are not left out: they
sit where PEP 440 puts them (``3.1.0rc1`` is before ``3.1``, so ``>=3.1`` does not name it,
``>=3.1.0rc1`` does), since a release candidate is run to see what its release changes.
"""

from __future__ import annotations

from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

EXAMPLES = '">=2.0", "<3.1" or ">=3.0,<3.2"'


@lru_cache(maxsize=None)
def _specifier(text: str) -> SpecifierSet:
    return SpecifierSet(text)


def specifier_problem(text: str) -> str | None:
    """What is wrong with a ``versions`` value, or None when it is a usable specifier set."""
    if not text.strip():
        return "is empty"
    try:
        spec = _specifier(text)
    except InvalidSpecifier as exc:
        return f"is not a PEP 440 version specifier ({exc})"
    if not len(spec):
        return "names no version"
    for clause in spec:
        if clause.operator == "===":
            return f"uses '===' ({clause}), which compares text, not releases"
    return None


def release_matches(text: str, version: str) -> bool:
    """Whether the release ``version`` is one the specifier set ``text`` names. A version
    that is not PEP 440 (a development build's own scheme) matches nothing."""
    try:
        release = Version(version)
    except InvalidVersion:
        return False
    return _specifier(text).contains(release, prereleases=True)


def release_key(version: str) -> tuple[int, Version | str]:
    """Sort key: releases in PEP 440 order, anything unparsable after them by text."""
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)
