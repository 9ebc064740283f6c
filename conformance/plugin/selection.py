"""Selecting case items the pytest way: markers for ``-m``, exact framework names for ``-k``.

Every case item carries these markers (registered, so ``pytest --markers`` lists them and
``--strict-markers`` accepts them):

- ``conformance``: every case item (``-m conformance``: the corpus, none of the tool's tests);
- the framework it runs on: ``numpy``, ``torch``, ``paddle`` (and any registered adapter
  whose name is an identifier);
- its family, the first part of its id: ``views``, ``copies``, ...;
- each claim its case names, for that framework: ``claim_S3_02`` (claim IDs are not Python
  identifiers, so ``S3-02`` becomes ``claim_S3_02``), with the stance as an argument:
  ``-m "claim_S3_02(stance='holds')"``.

``-k`` matches substrings of every name of an item and its parents, so ``-k paddle`` would
also select the NumPy and torch items of a case whose id or file name contains "paddle".
When a ``-k`` expression names a framework, :func:`deselect_by_keyword` evaluates it
instead of pytest: a framework name matches a case item exactly by its framework; every
other word matches as pytest matches it. Expressions without a framework name are left to
pytest. This uses pytest's ``_pytest.mark`` (``Expression``, ``KeywordMatcher``), private
API: without it, ``-k`` stays pytest's own (``tests/test_selection.py`` fails on such a
release).
"""

from __future__ import annotations

import argparse
import re
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from conformance import claims as seed_claims
from conformance import registry

MARKER = "conformance"
# the identifiers of a -k or -m expression (pytest's lexer: mark/expression.py)
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_OPERATORS = frozenset({"and", "or", "not"})

try:  # private pytest API (see the module's docstring)
    from _pytest.mark import KeywordMatcher
    from _pytest.mark.expression import Expression
except ImportError:  # pragma: no cover - a pytest without them: -k stays pytest's
    KeywordMatcher = Expression = None  # type: ignore[assignment,misc]


def claim_marker(claim_id: str) -> str:
    """``S3-02`` -> ``claim_S3_02``: the marker of a claim."""
    return "claim_" + claim_id.replace("-", "_")


class Markers:
    """The markers of one session's case items. Each marker is registered in the config
    before its first use (``--strict-markers``); each mark is made once per name and
    stance and shared by the items, which keeps collecting 10,000 cases cheap."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.frameworks = [name for name in registry.framework_names() if name.isidentifier()]
        self._registered: set[str] = set()
        self._marks: dict[tuple[str, str | None], pytest.Mark] = {}
        self._common: dict[tuple[str, str], list[pytest.Mark]] = {}  # (family, framework) -> marks
        self._texts = seed_claims.claims()

    def register(self, name: str, text: str) -> None:
        if name not in self._registered:
            self._registered.add(name)
            self.config.addinivalue_line("markers", f"{name}: {text}")

    def register_all(self, families: Iterable[str] = ()) -> None:
        """Register the markers a case item can have: conformance, the frameworks, the
        claims, and the ``families`` known before collection."""
        self.register(MARKER, "a conformance case item (every case on every framework)")
        for framework in self.frameworks:
            self._register_framework(framework)
        for family in families:
            self._register_family(family)
        for claim_id in self._texts:
            self._register_claim(claim_id)

    def _register_framework(self, framework: str) -> None:
        self.register(framework, f"conformance case items run on {framework}")

    def _register_family(self, family: str) -> None:
        self.register(family, f"conformance cases of the family {family} (case ids {family}.*)")

    def _register_claim(self, claim_id: str) -> None:
        text = " ".join(self._texts.get(claim_id, "").split())
        text = text if len(text) <= 90 else text[:89] + "…"
        self.register(f"{claim_marker(claim_id)}(stance)",
                      f"conformance cases checking claim {claim_id} on this framework, stance 'holds', "
                      f"'does_not_hold' or 'related': {text}")
        self._registered.add(claim_marker(claim_id))

    def _mark(self, name: str, stance: str | None = None) -> pytest.Mark:
        decorator = getattr(pytest.mark, name)  # registered before: no unknown-marker warning
        return (decorator(stance=stance) if stance is not None else decorator).mark

    def for_case(self, case: Any, framework: str) -> list[pytest.Mark]:
        """The marks of the item of ``case`` on ``framework`` (a list shared by items:
        copy it, never change it)."""
        key = (case.family, framework)
        marks = self._common.get(key)
        if marks is None:
            marks = [self._cached(MARKER, None, lambda _: self.register(MARKER, "a conformance case item"))]
            if framework.isidentifier():
                marks.append(self._cached(framework, None, self._register_framework))
            if case.family.isidentifier():
                marks.append(self._cached(case.family, None, self._register_family))
            self._common[key] = marks
        if case.claims or case.overrides:
            claims = case.claims_for(framework, registry.lineage(framework))
            if claims:
                return marks + [self._cached(claim_id, stance, self._register_claim)
                                for claim_id, stance in claims.items()]
        return marks

    def for_error(self, case_id: str | None = None) -> list[pytest.Mark]:
        """The marks of an item for a case file, case or case-folder entry that could not
        be loaded: ``conformance``, every framework (as ``--frameworks`` and ``-k`` keep
        it whatever the framework) and the family of ``case_id`` when known."""
        marks = [self._cached(MARKER, None, lambda _: self.register(MARKER, "a conformance case item"))]
        if case_id is None:
            marks += [self._cached(name, None, self._register_framework) for name in self.frameworks]
            return marks
        marks += self.for_error()[1:]
        family = case_id.split(".", 1)[0]
        if family.isidentifier():
            marks.append(self._cached(family, None, self._register_family))
        return marks

    def _cached(self, key: str, stance: str | None, register: Callable[[str], None]) -> pytest.Mark:
        mark = self._marks.get((key, stance))
        if mark is None:
            register(key)
            name = claim_marker(key) if register == self._register_claim else key
            mark = self._marks[(key, stance)] = self._mark(name, stance)
        return mark


def names_a_framework(expression: str, frameworks: Iterable[str]) -> bool:
    known = {name.lower() for name in frameworks}
    return any(word.lower() in known for word in _IDENT.findall(expression) if word not in _OPERATORS)


class _CaseKeywords:
    """pytest's keyword matcher for one item, except that a framework name matches a case
    item by its framework, exactly (an item that is no case of one framework, such as a
    case file that could not be loaded, matches every framework, as ``--frameworks``
    keeps it)."""

    def __init__(self, item: pytest.Item, framework: str | None, frameworks: frozenset[str]) -> None:
        self.base = KeywordMatcher.from_item(item)
        self.framework = framework
        self.frameworks = frameworks

    def __call__(self, name: str, /, **kwargs: Any) -> bool:
        if name.lower() in self.frameworks:
            return self.framework is None or name.lower() == self.framework.lower()
        return self.base(name, **kwargs)


def deselect_by_keyword(items: list[pytest.Item], config: pytest.Config,
                        case_framework: Callable[[pytest.Item], tuple[bool, str | None]]) -> str | None:
    """Apply ``-k`` to ``items`` when it names a framework (pytest's own ``-k`` must then be
    switched off for this collection: the caller sets ``config.option.keyword`` to the
    returned expression again afterwards); None when ``-k`` is left to pytest.
    ``case_framework(item)``: (whether the item is a case item, its framework or None)."""
    expression = (getattr(config.option, "keyword", "") or "").strip()
    frameworks = frozenset(name.lower() for name in registry.framework_names())
    if not expression or Expression is None or KeywordMatcher is None or not names_a_framework(expression, frameworks):
        return None
    try:
        compiled = Expression.compile(expression)
    except SyntaxError:
        return None  # pytest says what is wrong with it
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        is_case, framework = case_framework(item)
        matcher = _CaseKeywords(item, framework, frameworks) if is_case else KeywordMatcher.from_item(item)
        (keep if compiled.evaluate(matcher) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    saved = config.option.keyword
    config.option.keyword = ""
    return saved


# ---- --shard K/N


def shard_option(text: str) -> tuple[int, int]:
    """``--shard K/N`` -> (K, N), 1 <= K <= N (argparse's type: a ValueError is its usage error)."""
    k, slash, n = text.partition("/")
    try:
        shard = (int(k), int(n)) if slash else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard[0] <= shard[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: write K/N with 1 <= K <= N, e.g. --shard 2/4 (the second of "
                                         "four shards)")
    return shard


def in_shard(nodeid: str, shard: tuple[int, int]) -> bool:
    """Whether the item belongs to shard K of N: by a hash of its node id (CRC-32, the same
    on every machine and Python, unlike ``hash``), so each item is in exactly one shard
    whatever else a run selects, and an item keeps its shard as others are added."""
    k, n = shard
    return zlib.crc32(nodeid.encode("utf-8")) % n == k - 1
