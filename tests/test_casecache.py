"""The cache of loaded case files: a hit gives exactly what parsing gives, and anything the
result depends on (bytes, shown path, vocabulary) makes another entry; a damaged entry is
parsed again; it can be switched off and lives outside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import casecache
from conformance.casecache import CaseCache, default_directory, make_cache
from conformance.loader import Vocabulary, load_file

GOOD = """\
cases:
  - id: views.cache.one
    title: "a case"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {values: {y: [1.0, 2.0]}}
"""
BAD = GOOD.replace("y = x.clone()", "y = x.__class__")
VOCABULARY = Vocabulary(frameworks=("numpy", "torch", "paddle"))


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(GOOD)
    return path


def entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.pickle"))


def test_a_hit_gives_what_parsing_gives(tmp_path: Path, case_file: Path) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    first = cache.load(case_file, "cases.yaml")
    second = cache.load(case_file, "cases.yaml")
    assert (cache.misses, cache.hits) == (1, 1)
    assert first == second == load_file(case_file, VOCABULARY, display_path="cases.yaml")
    assert len(entries(tmp_path / "cache")) == 1


def test_errors_are_cached_with_their_position(tmp_path: Path, case_file: Path) -> None:
    case_file.write_text(BAD)
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    cache.load(case_file, "cases.yaml")
    result = cache.load(case_file, "cases.yaml")
    assert cache.hits == 1
    (case_id, error), = result.errors
    assert case_id == "views.cache.one" and error.location.line == 6 and "'_'" in error.message


@pytest.mark.parametrize("change", ["bytes", "shown path", "vocabulary", "draft"])
def test_what_the_result_depends_on_makes_another_entry(tmp_path: Path, case_file: Path, change: str) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    cache.load(case_file, "cases.yaml")
    shown, draft = "cases.yaml", False
    if change == "bytes":
        case_file.write_text(GOOD.replace("[1.0, 2.0]}}", "[1.0, 3.0]}}"))
    elif change == "shown path":
        shown = "other/cases.yaml"
    elif change == "vocabulary":
        cache = CaseCache(tmp_path / "cache", Vocabulary(frameworks=("numpy",)))
    else:
        draft = True
    result = cache.load(case_file, shown, draft)
    assert cache.hits == 0
    assert result == load_file(case_file, cache.vocabulary, display_path=shown, draft=draft)
    assert len(entries(tmp_path / "cache")) == 2


def test_a_damaged_entry_is_parsed_again_and_rewritten(tmp_path: Path, case_file: Path) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    expected = cache.load(case_file, "cases.yaml")
    (entry,) = entries(tmp_path / "cache")
    entry.write_bytes(entry.read_bytes()[:20])  # truncated
    assert cache.load(case_file, "cases.yaml") == expected
    assert cache.misses == 2
    assert cache.load(case_file, "cases.yaml") == expected and cache.hits == 1


def test_the_code_that_reads_cases_is_part_of_the_key(tmp_path: Path, case_file: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    CaseCache(tmp_path / "cache", VOCABULARY).load(case_file, "cases.yaml")
    monkeypatch.setattr(casecache, "_code_fingerprint", lambda: b"a changed loader")
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    cache.load(case_file, "cases.yaml")
    assert cache.misses == 1


def test_where_it_lives_and_how_to_switch_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(casecache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "conformance" / "cases"
    monkeypatch.setenv(casecache.CACHE_ENV, str(tmp_path / "mine"))
    cache = make_cache(VOCABULARY)
    assert cache is not None and cache.directory == tmp_path / "mine"
    assert (tmp_path / "mine").stat().st_mode & 0o777 == 0o700
    for off in ("off", "0", ""):
        monkeypatch.setenv(casecache.CACHE_ENV, off)
        assert make_cache(VOCABULARY) is None
