"""The collection helper (conformance/preload.py): a second process loading case files
while pytest collects. Whichever process loads a file, the result is the same; a helper
that fails or dies costs speed, never a result."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conformance import preload, registry
from conformance.load.cache import CaseCache
from conformance.load.reader import LoadResult, load_file
from conformance.preload import PRELOAD_ENV, Preloader

CASE = """\
  - id: {family}.case{n}.file{f}
    title: case {n} of file {f}
    given:
      x: {{data: [[{n}.0, 2.0], [3.0, 4.0]]}}
    steps:
      - y = x.reshape(4)
      - y[0] = 9.0
    expect:
      shares_memory: {{y & x: true}}
      values: {{x: [[9.0, 2.0], [3.0, 4.0]]}}
"""
BAD_YAML = "cases:\n  - id: [unclosed\n"
BAD_CASE = "cases:\n  - id: views.bad.case\n    title: no steps\n    expect: {}\n"


def write_cases(folder: Path, files: int, cases: int, family: str = "views") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in range(files):
        path = folder / f"cases{f:03}.yaml"
        path.write_text("cases:\n" + "".join(CASE.format(family=family, n=n, f=f) for n in range(cases)))
        paths.append(path)
    return paths


@pytest.fixture
def files(tmp_path: Path) -> list[tuple[str, str]]:
    paths = write_cases(tmp_path / "cases", files=6, cases=20)
    (tmp_path / "cases" / "zz_bad_yaml.yaml").write_text(BAD_YAML)
    (tmp_path / "cases" / "zz_bad_case.yaml").write_text(BAD_CASE)
    paths += [tmp_path / "cases" / "zz_bad_yaml.yaml", tmp_path / "cases" / "zz_bad_case.yaml"]
    return [(str(p), f"cases/{p.name}") for p in paths]


def direct(path: str, display: str) -> LoadResult:
    return load_file(path, registry.vocabulary(), display_path=display)


def same(a: LoadResult, b: LoadResult) -> bool:
    def errors(r: LoadResult) -> list[tuple]:  # exceptions compare by identity: compare their parts
        return [(case_id, e.location, e.message, e.hint, e.code) for case_id, e in r.errors]

    return (a.path, a.cases, errors(a)) == (b.path, b.cases, errors(b))


def finished_helper(files: list[tuple[str, str]], cache: CaseCache | None = None) -> Preloader:
    """A preloader whose helper has gone through every file (none was claimed)."""
    preloader = Preloader(files, registry.vocabulary(), cache)
    preloader.start()
    assert preloader._proc is not None
    assert preloader._proc.wait(timeout=60) == 0  # it exits once it has passed every file
    return preloader


def test_results_from_the_helper_are_what_loading_gives(files: list[tuple[str, str]]) -> None:
    preloader = finished_helper(files)
    try:
        results = [preloader.take(path) for path, _ in files]
    finally:
        preloader.close()
    assert all(r is not None for r in results)
    assert preloader.taken == len(files)
    for (path, display), result in zip(files, results):
        assert result is not None and same(result, direct(path, display)), display
    # the bad files' errors came through with their positions
    assert results[-2].errors[0][1].message.startswith("YAML syntax error")
    assert "'steps'" in results[-1].errors[0][1].message


def test_files_taken_before_the_helper_reaches_them_are_left_to_the_caller(files: list[tuple[str, str]]) -> None:
    preloader = Preloader(files, registry.vocabulary(), None)
    preloader.start()
    loaded_here = 0
    try:
        for path, display in files:  # at once: the helper is still starting, and works from the end
            result = preloader.take(path)
            if result is None:
                loaded_here += 1
                result = direct(path, display)
            assert same(result, direct(path, display)), display
    finally:
        preloader.close()
    assert loaded_here + preloader.taken == len(files)
    assert loaded_here > 0 and preloader.lost is None


def test_a_file_not_in_the_list_is_left_to_the_caller(files: list[tuple[str, str]], tmp_path: Path) -> None:
    preloader = finished_helper(files[:1])
    try:
        assert preloader.take(tmp_path / "elsewhere.yaml") is None
        assert preloader.take(files[0][0]) is not None
    finally:
        preloader.close()


def test_a_dead_helper_leaves_every_file_to_the_caller(files: list[tuple[str, str]]) -> None:
    preloader = Preloader(files, registry.vocabulary(), None)
    preloader.start()
    assert preloader._proc is not None
    preloader._proc.kill()
    preloader._proc.wait()
    try:
        assert [preloader.take(path) for path, _ in files] == [None] * len(files)
    finally:
        preloader.close()
    assert preloader.lost == "the helper ended early"


def test_a_file_the_helper_fails_on_is_left_to_the_caller(files: list[tuple[str, str]]) -> None:
    # a path that open() refuses with ValueError, not OSError: load_file raises in the helper
    bad = ("bad\0path.yaml", "cases/bad.yaml")
    preloader = finished_helper([files[0], bad])
    try:
        assert preloader.take(bad[0]) is None
        assert preloader.take(files[0][0]) is not None  # the helper went on after the failure
    finally:
        preloader.close()


def test_the_helper_fills_the_case_cache(files: list[tuple[str, str]], tmp_path: Path) -> None:
    cache = CaseCache(tmp_path / "cache", registry.vocabulary())
    assert not any(cache.holds(path, display) for path, display in files)
    preloader = finished_helper(files, cache)
    preloader.close()
    assert all(cache.holds(path, display) for path, display in files)
    assert not list((tmp_path / "cache").rglob(".tmp-*"))  # every entry written whole
    for path, display in files:
        assert same(cache.load(path, display), direct(path, display))


@pytest.mark.parametrize("pause", [0.0, 1.0])
def test_close_stops_a_working_helper(tmp_path: Path, pause: float) -> None:
    # 0 s: the helper is starting; 1 s: it is loading, or blocked sending results nobody
    # takes (a socket holds a few files' results): as when collection is interrupted
    paths = write_cases(tmp_path / "cases", files=40, cases=50)
    cache = CaseCache(tmp_path / "cache", registry.vocabulary())
    preloader = Preloader([(str(p), p.name) for p in paths], registry.vocabulary(), cache)
    preloader.start()
    process = preloader._proc
    time.sleep(pause)
    preloader.close()
    assert process is not None and process.returncode == 0  # it stopped by itself, not killed
    assert not list((tmp_path / "cache").rglob(".tmp-*"))  # no cache entry cut short


@pytest.mark.parametrize("setting, cpus, collecting, size, expected", [
    ("", 2, 1, preload.MIN_BYTES, True),
    ("", 2, 1, preload.MIN_BYTES - 1, False),  # too little to pay for the helper's start
    ("", 1, 1, preload.MIN_BYTES, False),  # one CPU: nothing to share
    ("", 2, 2, preload.MIN_BYTES, False),  # -n 2 on 2 CPUs: the workers use them already
    ("", 4, 2, preload.MIN_BYTES, True),  # -n 2 on 4 CPUs: a helper per worker
    ("off", 2, 1, preload.MIN_BYTES, False),
    ("on", 1, 2, 1, True),
])
def test_when_a_helper_is_used(monkeypatch: pytest.MonkeyPatch, setting: str, cpus: int, collecting: int,
                               size: int, expected: bool) -> None:
    monkeypatch.setenv(PRELOAD_ENV, setting)
    monkeypatch.setattr(preload, "_usable_cpus", lambda: cpus)
    assert (preload.possible(collecting) and preload.worth_it(size)) is expected


# --------------------------------------------------------------------------- through pytest

REPORT_CONFTEST = """
import pytest
from conformance.plugin.collect import case_files, index_key

def pytest_collection_finish(session):
    preloader = session.config.stash[index_key].preloader
    print("HELPER", len(preloader.files) if preloader else 0, preloader.taken if preloader else 0)
    print("GUESSED", [str(p) for p in case_files(session)])
    seen = []
    for item in session.items:
        if str(item.path) not in seen:
            seen.append(str(item.path))
    print("COLLECTED", seen)
"""


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_paths = cases\n")
    root = pytester.path / "cases"
    # names whose order differs between 'sorted by name' and other orders (case, nesting)
    write_cases(root / "views", files=3, cases=10)
    write_cases(root / "B_upper", files=2, cases=5, family="copies")
    write_cases(root / "views" / "nested", files=2, cases=5, family="inplace")
    (root / "a_bad.yaml").write_text(BAD_YAML)
    (root / "views" / "zz_bad_case.yaml").write_text(BAD_CASE)
    # the same case id in two files: the second is a [duplicate] item
    (root / "views" / "zz_duplicate.yaml").write_text("cases:\n" + CASE.format(family="views", n=0, f=0))
    # folders pytest does not enter (norecursedirs '.*', a virtualenv): nor does the guess
    write_cases(root / ".hidden", files=1, cases=1, family="hidden")
    write_cases(root / "env", files=1, cases=1, family="venv")
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    pytester.makeconftest(REPORT_CONFTEST)
    return pytester


def run(corpus: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, setting: str, *args: str) -> pytest.RunResult:
    monkeypatch.setenv(PRELOAD_ENV, setting)
    return corpus.runpytest_subprocess("-p", "no:cacheprovider", *args)


def line(result: pytest.RunResult, prefix: str) -> str:
    return next(ln for ln in result.outlines if ln.startswith(prefix + " ")).split(" ", 1)[1]


@pytest.mark.parametrize("cache", ["off", "fresh"])
def test_collection_with_the_helper_is_collection_without_it(corpus: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path, cache: str) -> None:
    def collect(setting: str) -> pytest.RunResult:  # each run with an empty cache of its own
        monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "off" if cache == "off" else str(tmp_path / setting))
        return run(corpus, monkeypatch, setting, "--collect-only", "-q")

    without, helped = collect("off"), collect("on")
    items = [ln for ln in without.outlines if "::" in ln]
    assert len(items) == 3 * (30 + 10 + 10) + 3  # three frameworks; two [load] items, one [duplicate]
    assert [ln for ln in helped.outlines if "::" in ln] == items
    assert line(without, "HELPER") == "0 0"
    helper_files, _ = map(int, line(helped, "HELPER").split())
    assert helper_files == 10  # every case file, none in the cache yet
    # the helper's list is pytest's order of files
    assert line(helped, "GUESSED") == line(helped, "COLLECTED")


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_run_with_the_helper_records_what_a_run_without_it_records(corpus: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     workers: tuple[str, ...]) -> None:
    if workers:
        pytest.importorskip("xdist")
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "off")
    run(corpus, monkeypatch, "off", "--frameworks", "numpy", "--conformance-results", "without.json")
    # with -n 2 and =on, each worker has a helper of its own
    run(corpus, monkeypatch, "on", *workers, "--frameworks", "numpy", "--conformance-results", "helped.json")

    def comparable(name: str) -> list[dict]:
        records = json.loads((corpus.path / name).read_text())["results"]
        return [{k: v for k, v in r.items() if k != "duration_s"} for r in records]

    assert comparable("without.json") == comparable("helped.json")
    assert len(comparable("helped.json")) == 50 + 3


def test_cached_files_are_not_given_to_the_helper(corpus: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    run(corpus, monkeypatch, "off", "--collect-only", "-q")  # fills the cache
    (corpus.path / "cases" / "views" / "cases000.yaml").write_text(
        "cases:\n" + CASE.format(family="views", n=99, f=0))
    helped = run(corpus, monkeypatch, "on", "--collect-only", "-q")
    assert line(helped, "HELPER").split()[0] == "1"  # only the changed file
