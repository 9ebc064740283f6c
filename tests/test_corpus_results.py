"""tests/corpus_results.py: the tests over every item of the corpus read a run's results only
when they are a full run of this checkout's corpus at this commit; without any they skip,
with a file that is not what they need they fail, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_results import ENV, ROOT, _read, corpus_results, head_commit, problems_of
from results_factory import sample, typed

from conformance.plugin.coverage import corpus_revision


def current_run() -> dict[str, object]:
    files = sorted(str(p) for p in (ROOT / "cases").rglob("*.yaml"))
    run: dict[str, object] = {"items": 3, "exit_status": 0, "corpus": corpus_revision(files, [ROOT / "cases"])}
    head = head_commit()
    if head is not None:
        run["commit"] = {"sha": head, "modified": False}
    return run


def test_a_full_run_of_this_corpus_at_this_commit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = sample()
    data["run"] = current_run()
    assert problems_of(typed(data)) == []
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv(ENV, str(path))
    assert corpus_results() == typed(data)


def test_a_partial_run_another_corpus_or_another_commit_is_refused_with_each_reason() -> None:
    data = sample()
    data["run"] = {**current_run(), "partial": ["only torch (--frameworks)"], "corpus": "0123456789abcdef",
                   "commit": {"sha": "f" * 40, "modified": False}}
    problems = problems_of(typed(data))
    assert problems[0] == "it is a partial run (only torch (--frameworks))"
    assert problems[1] == ("it is of another revision of the corpus (0123456789abcdef): a case file changed since")
    if head_commit() is not None:
        assert problems[2] == f"it was run at commit {'f' * 40}, this checkout is at {head_commit()}"


def test_a_file_that_is_not_what_the_tests_need_fails_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = sample()
    data["run"] = {**current_run(), "partial": ["only torch (--frameworks)"]}
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv(ENV, str(path))
    _read.cache_clear()
    with pytest.raises(pytest.fail.Exception) as failed:
        corpus_results()
    assert str(failed.value) == (f"{ENV}: {path} is no full run of this checkout's corpus: it is a partial run "
                                 "(only torch (--frameworks))")
    (tmp_path / "broken.json").write_text("{")
    monkeypatch.setenv(ENV, str(tmp_path / "broken.json"))
    with pytest.raises(pytest.fail.Exception, match="cannot read results JSON"):
        corpus_results()


def test_without_results_the_tests_skip_saying_how_to_give_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        corpus_results()
    assert str(skipped.value).startswith(f"reads the corpus run's results: {ENV}=FILE")
