"""The cache of loaded case files: a hit gives exactly what parsing gives, and anything the
result depends on (bytes, shown path, vocabulary) makes another entry; a damaged entry is
parsed again; it can be switched off.

Its trust: entries are codec-encoded and signed, never pickled, so a pickle placed at an
entry's (computable) name runs nothing, even in a folder that passes every check and even
signed with the right key, and an entry it did not write is parsed again; a folder inside
the checkout, a symbolic link, another user's or a group- or world-writable one, and a
key file others could use switch the cache off for the run with one warning, and the run
still collects everything.
"""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import registry
from conformance.load import cache as casecache
from conformance.load.cache import (
    ENTRY_SUFFIX,
    ENTRY_TYPES,
    KEY_BYTES,
    KEY_FILE,
    MAC_BYTES,
    CacheRefused,
    CaseCache,
    default_directory,
    folder_problem,
    key_problem,
    make_cache,
    open_directory,
)
from conformance.load.reader import LoadResult, Vocabulary, load_file

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
VOCABULARY = Vocabulary(frameworks=tuple(registry.BUILTIN))


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(GOOD)
    return path


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder that is no git work tree (the tests' own checkout is one)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return work


def entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob(f"*{ENTRY_SUFFIX}"))


class Warnings(list):
    def __call__(self, message: str) -> None:
        self.append(message)


def refused(monkeypatch: pytest.MonkeyPatch, setting: str | Path, checkouts: tuple = ()) -> str:
    """The one warning of make_cache for CONFORMANCE_CACHE_DIR=setting, which must refuse."""
    monkeypatch.setenv(casecache.CACHE_ENV, str(setting))
    said = Warnings()
    assert make_cache(VOCABULARY, checkouts, said) is None
    (message,) = said
    assert message.startswith("the case cache is off for this run: ") and "\n" not in message
    return message


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
    assert error.render() == load_file(case_file, VOCABULARY, display_path="cases.yaml").errors[0][1].render()


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


@pytest.mark.parametrize("damage", ["truncated", "empty", "one bit of the payload", "one bit of the MAC"])
def test_a_damaged_entry_is_parsed_again_and_rewritten(tmp_path: Path, case_file: Path, damage: str) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    expected = cache.load(case_file, "cases.yaml")
    (entry,) = entries(tmp_path / "cache")
    blob = bytearray(entry.read_bytes())
    if damage == "truncated":
        del blob[MAC_BYTES + 20:]
    elif damage == "empty":
        blob.clear()
    else:
        blob[MAC_BYTES + 40 if damage.endswith("payload") else 3] ^= 1
    entry.write_bytes(bytes(blob))
    assert cache.load(case_file, "cases.yaml") == expected
    assert cache.misses == 2
    assert cache.load(case_file, "cases.yaml") == expected and cache.hits == 1
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # written atomically: no leftovers


def test_the_code_that_reads_cases_is_part_of_the_key(tmp_path: Path, case_file: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    CaseCache(tmp_path / "cache", VOCABULARY).load(case_file, "cases.yaml")
    monkeypatch.setattr(casecache, "_code_fingerprint", lambda: b"a changed loader")
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    cache.load(case_file, "cases.yaml")
    assert cache.misses == 1


def test_a_result_the_codec_cannot_carry_is_not_kept(tmp_path: Path, case_file: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    odd = LoadResult("cases.yaml", cases=[{1, 2}])  # type: ignore[list-item]  # a set: not plain data here
    monkeypatch.setattr(casecache, "load_bytes", lambda *args: odd)
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    assert cache.load(case_file, "cases.yaml") is odd
    assert entries(tmp_path / "cache") == []


def test_where_it_lives_and_how_to_switch_it_off(tmp_path: Path, outside: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(casecache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "conformance" / "cases"
    cache = make_cache(VOCABULARY)
    assert cache is not None and cache.directory == tmp_path / "xdg" / "conformance" / "cases"
    for created in (tmp_path / "xdg", tmp_path / "xdg" / "conformance", cache.directory):
        assert created.stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv(casecache.CACHE_ENV, str(tmp_path / "mine" / "deeper"))
    cache = make_cache(VOCABULARY)
    assert cache is not None and cache.directory == tmp_path / "mine" / "deeper"
    for created in (tmp_path / "mine", tmp_path / "mine" / "deeper"):
        assert created.stat().st_mode & 0o777 == 0o700
    key = cache.directory / KEY_FILE
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == KEY_BYTES and key.read_bytes() == cache.key
    assert make_cache(VOCABULARY).key == cache.key  # type: ignore[union-attr]  # kept, not made again
    for off in ("off", "0", ""):
        monkeypatch.setenv(casecache.CACHE_ENV, off)
        assert make_cache(VOCABULARY) is None


# --------------------------------------------------------------------------- what is never read


class _Payload:
    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple:
        return open, (self.path, "w")  # unpickling creates the sentinel


def _sentinel_pickle(sentinel: Path) -> bytes:
    payload = pickle.dumps(LoadResult("cases/x.yaml", cases=[_Payload(sentinel)]))  # type: ignore[list-item]
    return payload


def test_control_the_committed_pickle_creates_the_sentinel(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    pickle.loads(_sentinel_pickle(sentinel)).cases[0].close()
    assert sentinel.exists()


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "cases").mkdir()
    (repo / "cases" / "x.yaml").write_text(GOOD)
    return repo


def _entry_name(data: bytes, shown: str, tmp_path: Path, vocabulary: Vocabulary = VOCABULARY) -> Path:
    """The entry's name relative to the cache folder: computable from public inputs."""
    scratch = CaseCache(tmp_path / "scratch", vocabulary)
    return scratch._entry(data, shown, False).relative_to(scratch.directory)


@pytest.mark.parametrize("setting", ["ci-cache", "XDG_CACHE_HOME=.cache"])
def test_a_committed_pickle_in_a_checkout_cache_folder_is_never_read(tmp_path: Path, setting: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _checkout(tmp_path)
    monkeypatch.chdir(repo / "cases")
    sentinel = tmp_path / "sentinel"
    if setting.startswith("XDG"):
        monkeypatch.delenv(casecache.CACHE_ENV, raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(repo / ".cache"))
        folder = repo / ".cache" / "conformance" / "cases"
    else:
        monkeypatch.setenv(casecache.CACHE_ENV, "../ci-cache")
        folder = repo / "ci-cache"
    name = _entry_name(GOOD.encode(), "cases/x.yaml", tmp_path)
    for planted in (folder / name, (folder / name).with_suffix(".pickle")):  # the new name and the old
        planted.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        planted.write_bytes(_sentinel_pickle(sentinel))
    said = Warnings()
    assert make_cache(VOCABULARY, [repo], said) is None
    assert "inside the checkout" in said[0]
    assert not sentinel.exists()


def test_a_pickle_at_the_entry_name_of_a_trusted_folder_is_parsed_again(tmp_path: Path,
                                                                        case_file: Path) -> None:
    # the folder passes every check: the entry is not signed, and even signed it is no codec data
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    sentinel = tmp_path / "sentinel"
    entry = cache._entry(case_file.read_bytes(), "cases.yaml", False)
    entry.parent.mkdir(parents=True, mode=0o700)
    payload = _sentinel_pickle(sentinel)
    for blob in (payload, b"\0" * MAC_BYTES + payload, cache._mac(entry, payload) + payload):
        entry.write_bytes(blob)
        assert cache.load(case_file, "cases.yaml") == load_file(case_file, VOCABULARY, display_path="cases.yaml")
    assert (cache.hits, cache.misses) == (0, 3)
    assert not sentinel.exists()


def test_an_entry_not_signed_with_this_caches_key_is_parsed_again(tmp_path: Path, case_file: Path) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    true = cache.load(case_file, "cases.yaml")
    (entry,) = entries(tmp_path / "cache")
    forged_result = load_file(case_file, VOCABULARY, display_path="cases.yaml")
    forged_result.cases = []  # what an attacker wants: the case gone
    payload = ENTRY_TYPES.dumps(forged_result)
    other = CaseCache(tmp_path / "elsewhere", VOCABULARY)  # another key: an entry copied in
    assert other.key != cache.key
    entry.write_bytes(other._mac(entry, payload) + payload)
    assert cache.load(case_file, "cases.yaml") == true and cache.misses == 2
    entry.write_bytes(cache._mac(entry, payload) + payload)  # control: signed with this key, it is read
    assert cache.load(case_file, "cases.yaml").cases == [] and cache.hits == 1


def test_a_signed_entry_moved_to_another_name_or_path_is_parsed_again(tmp_path: Path, case_file: Path) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    cache.load(case_file, "cases.yaml")
    (entry,) = entries(tmp_path / "cache")
    other_file = tmp_path / "other.yaml"
    other_file.write_text(GOOD.replace("views.cache.one", "views.cache.two"))
    moved = cache._entry(other_file.read_bytes(), "cases.yaml", False)
    moved.parent.mkdir(exist_ok=True)
    moved.write_bytes(entry.read_bytes())
    assert cache.load(other_file, "cases.yaml").cases[0].id == "views.cache.two" and cache.misses == 2
    # signed for its new name, but a result for another shown path: parsed again too
    payload = entry.read_bytes()[MAC_BYTES:]
    elsewhere = cache._entry(case_file.read_bytes(), "elsewhere.yaml", False)
    elsewhere.parent.mkdir(exist_ok=True)
    elsewhere.write_bytes(cache._mac(elsewhere, payload) + payload)
    assert cache.load(case_file, "elsewhere.yaml").path == "elsewhere.yaml" and cache.misses == 3


def test_a_signed_entry_that_is_not_a_load_result_is_parsed_again(tmp_path: Path, case_file: Path) -> None:
    cache = CaseCache(tmp_path / "cache", VOCABULARY)
    entry = cache._entry(case_file.read_bytes(), "cases.yaml", False)
    entry.parent.mkdir(mode=0o700)
    for value in (["cases.yaml"], LoadResult("cases.yaml", cases=5), LoadResult("cases.yaml", errors=None)):  # type: ignore[arg-type]
        payload = ENTRY_TYPES.dumps(value)
        entry.write_bytes(cache._mac(entry, payload) + payload)
        assert cache.load(case_file, "cases.yaml").cases[0].id == "views.cache.one"
    assert cache.hits == 0


# --------------------------------------------------------------------------- refused folders


def test_folder_problems_from_stat_results() -> None:
    def st(mode: int, uid: int = 1000) -> os.stat_result:
        return os.stat_result((mode, 0, 0, 1, uid, 0, 4096, 0, 0, 0))

    assert folder_problem(st(stat.S_IFDIR | 0o700), 1000) is None
    assert folder_problem(st(stat.S_IFDIR | 0o755), 1000) is None
    assert folder_problem(st(stat.S_IFDIR | 0o700, uid=0), 1000) == "is owned by another user (uid 0, not 1000)"
    assert folder_problem(st(stat.S_IFDIR | 0o770), 1000) == "is group-writable (mode 0770)"
    assert folder_problem(st(stat.S_IFDIR | 0o757), 1000) == "is world-writable (mode 0757)"
    assert folder_problem(st(stat.S_IFDIR | 0o1777), 1000) == "is group and world-writable (mode 1777)"
    assert folder_problem(st(stat.S_IFLNK | 0o777), 1000) == "is a symbolic link"
    assert folder_problem(st(stat.S_IFREG | 0o600), 1000) == "is not a folder"


def test_key_problems_from_stat_results() -> None:
    def st(mode: int, uid: int = 1000, size: int = KEY_BYTES) -> os.stat_result:
        return os.stat_result((mode, 0, 0, 1, uid, 0, size, 0, 0, 0))

    assert key_problem(st(stat.S_IFREG | 0o600), 1000) is None
    assert key_problem(st(stat.S_IFREG | 0o400), 1000) is None
    assert key_problem(st(stat.S_IFREG | 0o644), 1000) == "can be used by others (mode 0644; it must be 0600)"
    assert key_problem(st(stat.S_IFREG | 0o604), 1000) == "can be used by others (mode 0604; it must be 0600)"
    assert key_problem(st(stat.S_IFREG | 0o600, uid=0), 1000) == "is owned by another user (uid 0, not 1000)"
    assert key_problem(st(stat.S_IFIFO | 0o600), 1000) == "is not a regular file"
    assert key_problem(st(stat.S_IFDIR | 0o700), 1000) == "is not a regular file"
    assert "is not a 32-byte key (0 bytes)" in key_problem(st(stat.S_IFREG | 0o600, size=0), 1000)  # type: ignore[operator]


@pytest.mark.parametrize("mode, why", [(0o770, "group-writable"), (0o707, "world-writable"),
                                       (0o777, "group and world-writable")])
def test_a_group_or_world_writable_folder_is_refused(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
                                                     mode: int, why: str) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    message = refused(monkeypatch, folder)
    assert f"{folder} is {why} (mode 0{mode:o})" in message
    assert not (folder / KEY_FILE).exists()


def test_the_suites_own_folder_above_the_cache_is_checked(tmp_path: Path, outside: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(casecache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "conformance" / "cases").mkdir(parents=True, mode=0o700)
    (tmp_path / "xdg" / "conformance").chmod(0o777)  # made by another program, or chmodded
    said = Warnings()
    assert make_cache(VOCABULARY, (), said) is None
    assert f"{tmp_path / 'xdg' / 'conformance'} is group and world-writable" in said[0]


def test_a_folder_of_another_user_is_refused(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(casecache, "_uid", lambda: os.geteuid() + 1)  # as if someone else made it
    message = refused(monkeypatch, folder)
    assert f"{folder} is owned by another user (uid {os.geteuid()}, not {os.geteuid() + 1})" in message


def test_a_symbolic_link_is_refused(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "real"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    assert f"{tmp_path / 'link'} is a symbolic link" in refused(monkeypatch, tmp_path / "link")
    monkeypatch.setenv(casecache.CACHE_ENV, str(target))
    assert make_cache(VOCABULARY) is not None


@pytest.mark.parametrize("how", ["relative CONFORMANCE_CACHE_DIR", "XDG_CACHE_HOME=$PWD/.cache", "rootdir",
                                 "case folder", "a link out of the checkout into it"])
def test_a_folder_inside_the_checkout_is_refused_and_not_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 how: str) -> None:
    repo = _checkout(tmp_path)
    monkeypatch.chdir(repo)
    checkouts: tuple = ()
    if how == "relative CONFORMANCE_CACHE_DIR":
        setting, shown = "ci-cache", repo / "ci-cache"
    elif how == "XDG_CACHE_HOME=$PWD/.cache":
        monkeypatch.delenv(casecache.CACHE_ENV)
        monkeypatch.setenv("XDG_CACHE_HOME", str(repo / ".cache"))
        said = Warnings()
        assert make_cache(VOCABULARY, (), said) is None
        assert f"{repo / '.cache' / 'conformance' / 'cases'} is inside the checkout {repo} " in said[0]
        assert not (repo / ".cache").exists()
        return
    else:
        (repo / ".git").rmdir()  # no git here: only what pytest says is the checkout
        monkeypatch.chdir(tmp_path)
        if how == "rootdir":
            setting, shown, checkouts = str(repo / "cache"), repo / "cache", (repo,)
        elif how == "case folder":
            setting, shown, checkouts = str(repo / "cases" / "c"), repo / "cases" / "c", (repo / "cases",)
        else:
            (tmp_path / "innocent").symlink_to(repo)
            setting, shown, checkouts = str(tmp_path / "innocent" / "c"), tmp_path / "innocent" / "c", (repo,)
    message = refused(monkeypatch, setting, checkouts)
    assert f"{shown} is inside the checkout " in message and "CONFORMANCE_CACHE_DIR" in message
    assert not shown.exists()


def test_the_git_work_tree_is_found_from_below(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    assert casecache.git_work_tree(repo / "cases" / "deeper") == repo
    (repo / "cases" / ".git").write_text("gitdir: ../.git/worktrees/x\n")  # a linked work tree's .git file
    assert casecache.git_work_tree(repo / "cases") == repo / "cases"
    assert casecache.git_work_tree(Path("/")) in (None, Path("/"))


@pytest.mark.parametrize("damage", ["mode 0644", "mode 0640", "a symbolic link", "a folder", "a fifo", "short",
                                    "another user's"])
def test_a_key_file_others_could_use_is_refused(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
                                                damage: str) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    key = folder / KEY_FILE
    if damage.startswith("mode"):
        key.write_bytes(os.urandom(KEY_BYTES))
        key.chmod(int(damage[-4:], 8))
        why = f"can be used by others ({damage}; it must be 0600)"
    elif damage == "a symbolic link":
        (tmp_path / "elsewhere").write_bytes(os.urandom(KEY_BYTES))
        (tmp_path / "elsewhere").chmod(0o600)
        key.symlink_to(tmp_path / "elsewhere")
        why = "is a symbolic link"
    elif damage == "a folder":
        key.mkdir(mode=0o700)
        why = "is not a regular file"
    elif damage == "a fifo":
        os.mkfifo(key, 0o600)  # opening it must not block
        why = "is not a regular file"
    elif damage == "short":
        key.write_bytes(b"abc")
        key.chmod(0o600)
        why = "is not a 32-byte key (3 bytes): delete it to make a new one"
    else:
        key.write_bytes(os.urandom(KEY_BYTES))
        key.chmod(0o600)
        monkeypatch.setattr(casecache, "_uid", lambda: os.geteuid() + 1)
        monkeypatch.setattr(casecache, "folder_problem", lambda st, uid: None)  # the folder itself passes
        why = f"is owned by another user (uid {os.geteuid()}, not {os.geteuid() + 1})"
    assert f"{key} {why}" in refused(monkeypatch, folder)


def test_the_key_is_made_whole_once_when_many_processes_start(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    script = ("import sys\nfrom pathlib import Path\nfrom conformance.load.cache import read_key\n"
              "sys.stdout.write(read_key(Path(sys.argv[1])).hex())\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(folder / KEY_FILE)], stdout=subprocess.PIPE,
                              text=True) for _ in range(6)]
    keys = {proc.communicate()[0] for proc in procs}
    assert len(keys) == 1 and bytes.fromhex(keys.pop()) == (folder / KEY_FILE).read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == [KEY_FILE]  # no temporary key left


def test_open_directory_gives_the_absolute_folder_and_its_key(tmp_path: Path, outside: Path) -> None:
    folder, key = open_directory(Path("relative"), ())
    assert folder == outside / "relative" and len(key) == KEY_BYTES
    with pytest.raises(CacheRefused, match="inside the checkout"):
        open_directory(Path("relative"), (outside,))


# --------------------------------------------------------------------------- a pytest run with a refused folder


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A checkout (it has a .git) with one case file."""
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / ".git").mkdir()
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    return pytester


WARNING = "*PytestConfigWarning: the case cache is off for this run: {folder} {why}*"


@pytest.mark.parametrize("setting", ["ci-cache", "XDG_CACHE_HOME"])
def test_a_run_with_the_cache_in_the_checkout_collects_everything_and_warns_once(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    sentinel = project.path.parent / f"sentinel-{setting}"
    if setting == "ci-cache":
        monkeypatch.setenv(casecache.CACHE_ENV, "ci-cache")
        folder = project.path / "ci-cache"
    else:
        monkeypatch.delenv(casecache.CACHE_ENV)
        monkeypatch.setenv("XDG_CACHE_HOME", str(project.path / ".cache"))
        folder = project.path / ".cache" / "conformance" / "cases"
    name = _entry_name(GOOD.encode(), "cases/views/good.yaml", project.path.parent / f"scratch-{setting}",
                       registry.vocabulary())  # the run's
    (folder / name).parent.mkdir(parents=True)
    (folder / name).write_bytes(_sentinel_pickle(sentinel))  # as a pull request would commit it
    result = project.runpytest("--collect-only", "-q")
    result.assert_outcomes()
    result.stdout.fnmatch_lines(["*good.yaml::views.cache.one[[]numpy[]]", "3 tests collected*"])
    result.stdout.fnmatch_lines([WARNING.format(folder=folder, why=f"is inside the checkout {project.path}*")])
    assert result.stdout.str().count("the case cache is off") == 1
    assert not sentinel.exists()


def test_a_run_with_a_world_writable_cache_folder_warns_and_runs(project: pytest.Pytester,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    folder = project.path.parent / "shared-cache"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv(casecache.CACHE_ENV, str(folder))
    result = project.runpytest("--frameworks", "numpy", "--in-process")
    result.assert_outcomes(passed=1, deselected=2)
    result.stdout.fnmatch_lines([WARNING.format(folder=folder, why="is group and world-writable (mode 0777)*")])
    assert list(folder.iterdir()) == []


def test_warnings_as_errors_still_run_and_say_it_on_stderr(project: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(casecache.CACHE_ENV, "ci-cache")
    result = project.runpytest("--collect-only", "-q", "-W", "error")
    result.stdout.fnmatch_lines(["3 tests collected*"])
    result.stderr.fnmatch_lines([f"conformance: the case cache is off for this run: {project.path / 'ci-cache'} "
                                 "is inside the checkout*"])


def test_xdist_says_it_once(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv(casecache.CACHE_ENV, "ci-cache")
    result = project.runpytest_subprocess("-n", "2", "--frameworks", "numpy", "--in-process", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert result.stdout.str().count("the case cache is off for this run") == 1


def test_a_run_with_a_good_folder_fills_it_and_then_reads_it(project: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    folder = project.path.parent / "good-cache"
    monkeypatch.setenv(casecache.CACHE_ENV, str(folder))
    for _ in range(2):
        result = project.runpytest("--collect-only", "-q")
        result.stdout.fnmatch_lines(["3 tests collected*"])
        assert "case cache" not in result.stdout.str()
    # the name a planted file would take is the one the run uses
    name = _entry_name(GOOD.encode(), "cases/views/good.yaml", project.path.parent, registry.vocabulary())
    assert entries(folder) == [folder / name] and folder.stat().st_mode & 0o777 == 0o700
